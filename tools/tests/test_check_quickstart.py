"""tools/check_quickstart.py without compiling: which blocks of the README it takes, and when it refuses."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import check_quickstart as quickstart  # noqa: E402

PACKAGE = '''// swift-tools-version:5.9
import PackageDescription

let package = Package(
    name: "KitchenDisplay",
    dependencies: [.package(path: "../profirest-api-swift")],
    targets: [.executableTarget(name: "KitchenDisplay", dependencies: [])]
)
'''
MAIN = 'import ProfirestAPI\nprint("hi")\n'


def readme(*blocks: str, before: str = "") -> str:
    body = "".join(f"```swift\n{block}```\n\ntext\n\n" for block in blocks)
    return f"# Title\n\n{before}## Quick start\n\nIntro.\n\n{body}## Install\n\n```swift\nlater\n```\n"


def test_takes_the_quick_starts_two_blocks_verbatim_and_the_target():
    package, main = quickstart.quickstart_blocks(readme(PACKAGE, MAIN, "let other = 1\n"))
    assert package == PACKAGE and main == MAIN
    assert quickstart.executable_target(package) == "KitchenDisplay"


def test_blocks_of_other_sections_do_not_count():
    with pytest.raises(quickstart.QuickstartError, match="1 Swift block"):
        quickstart.quickstart_blocks(readme(PACKAGE, before="```swift\nearlier\n```\n\n"))


def test_refuses_a_first_block_that_is_no_package_or_another_dependency():
    with pytest.raises(quickstart.QuickstartError, match="not a Package.swift"):
        quickstart.quickstart_blocks(readme(MAIN, PACKAGE))
    with pytest.raises(quickstart.QuickstartError, match="does not depend on ../profirest-api-swift"):
        quickstart.quickstart_blocks(readme(PACKAGE.replace("../profirest-api-swift", "../elsewhere"), MAIN))


def test_the_readme_of_this_repository_has_them():
    package, main = quickstart.quickstart_blocks((quickstart.ROOT / "README.md").read_text())
    assert quickstart.executable_target(package) == "KitchenDisplay"
    assert main.startswith("import ProfirestAPI")
