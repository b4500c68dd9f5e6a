"""tools/check_one_type_per_file.py, run by `make docs`: every public type of the library is declared in a file named
after it."""
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "check_one_type_per_file.py"
spec = importlib.util.spec_from_file_location("check_one_type_per_file", SCRIPT)
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)


def test_top_level_public_and_open_types_are_found_with_their_lines():
    source = (
        "import Foundation\n"
        "/// A `public struct InDoc` in a comment.\n"
        "public struct Outer: Sendable {\n"
        "    public enum Nested { case a }\n"
        "    let text = \"public class InString {\"\n"
        "}\n"
        "@_spi(Testing)\n"
        "public final class Marked {}\n"
        "final public class Reordered {}\n"
        "open class Opened {}\n"
        "public typealias Alias = Int\n"
        "public protocol Shape: Sendable {}\n"
        "public actor Worker {}\n"
        "struct Internal {}\n"
        "extension Outer { public struct Inner {} }\n"
        "#if os(Linux)\n"
        "public enum OnLinux {}\n"
        "#endif\n"
    )
    assert check.public_types(source) == [
        (3, "Outer"), (8, "Marked"), (9, "Reordered"), (10, "Opened"), (11, "Alias"), (12, "Shape"), (13, "Worker"),
        (17, "OnLinux"),
    ]


def test_a_type_outside_its_file_fails_and_its_own_or_a_platform_file_passes(tmp_path):
    library = tmp_path / "Library"
    (library / "Generated").mkdir(parents=True)
    (library / "Pipeline").mkdir()
    (library / "Generated" / "Models.swift").write_text("public struct Customer {}\npublic struct Order {}\n")
    (library / "Pipeline" / "RequestBody.swift").write_text("public struct RequestBody {}\nstruct Helper {}\n")
    (library / "Pipeline" / "FileLock+Windows.swift").write_text("public struct FileLock {}\n")
    assert check.offenders([str(library)]) == []
    (library / "Pipeline" / "ProfirestRequest.swift").write_text("public struct ProfirestRequest {}\n\npublic struct APIResponse {}\n")
    problems = check.offenders([str(library)])
    assert len(problems) == 1
    assert "ProfirestRequest.swift:3: the public type APIResponse is declared in ProfirestRequest.swift" in problems[0]


def test_the_package_passes():
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout
