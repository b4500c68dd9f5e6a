"""tools/check_platform_branches.py, the first step of `make build`: every platform branch of the package's code is
compiled by the Linux build or against the shims, holds only imports, or is listed with its reason."""
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "check_platform_branches.py"
spec = importlib.util.spec_from_file_location("check_platform_branches", SCRIPT)
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)


def test_conditions_are_evaluated_as_the_linux_build_and_the_shims_see_them():
    assert check.evaluate("os(Linux)", set(), True)
    assert not check.evaluate("os(Windows)", set(), True)
    assert check.evaluate("os(Windows) || PROFIREST_SHIMS", {"PROFIREST_SHIMS"}, True)
    assert not check.evaluate("canImport(FoundationNetworking) && !PROFIREST_SHIMS", {"PROFIREST_SHIMS"}, True)
    assert check.evaluate("(!canImport(FoundationNetworking) && canImport(Security)) || PROFIREST_SHIMS",
                          {"PROFIREST_SHIMS"}, False)
    assert check.evaluate("os(Linux) && !PROFIREST_NO_CURL", set(), True)
    assert not check.evaluate("DEBUG", set(), False)


def test_an_else_after_a_linux_branch_is_not_compiled_on_linux(tmp_path):
    source = tmp_path / "A.swift"
    source.write_text("#if os(Linux)\nlet a = 1\n#elseif os(Windows)\nlet b = 2\n#else\nlet c = 3\n#endif\n")
    found = [(check.active(frames, set(), True), check.code(lines)) for frames, lines in check.branches(str(source))]
    assert found == [(True, ["let a = 1"]), (False, ["let b = 2"]), (False, ["let c = 3"])]


def test_the_package_passes():
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout
    assert "against the shims (make build)" in result.stdout
