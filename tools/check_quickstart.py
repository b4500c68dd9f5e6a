#!/usr/bin/env python3
"""make quickstart-test: the README's Quick start works as it stands for someone who cloned this repository.

Takes the Quick start's two Swift blocks verbatim — the app's Package.swift (the first, starting with
`// swift-tools-version`) and its main.swift (the next) — writes them into a new package in a temporary directory,
beside a copy of this working tree named as a clone is, `profirest-api-swift` (the files git tracks or would track:
uncommitted changes included, `.build` and other ignored files not), and builds it (the library is compiled once more,
about a minute). The main.swift goes to Sources/<the executable target the Package.swift names>/.

Usage: tools/check_quickstart.py [--swift swift] [--readme README.md]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLONE_NAME = "profirest-api-swift"


class QuickstartError(Exception):
    pass


def quickstart_blocks(readme: str) -> tuple[str, str]:
    """(Package.swift, main.swift) of the README's "## Quick start" section, verbatim."""
    section = re.search(r"^## Quick start\n(.*?)(?=^## )", readme, re.S | re.M)
    if not section:
        raise QuickstartError("the README has no '## Quick start' section")
    blocks = re.findall(r"^```swift\n(.*?)^```$", section.group(1), re.S | re.M)
    if len(blocks) < 2:
        raise QuickstartError(f"the Quick start has {len(blocks)} Swift block(s); it needs Package.swift and main.swift")
    package, main = blocks[0], blocks[1]
    if not package.startswith("// swift-tools-version"):
        raise QuickstartError("the Quick start's first Swift block is not a Package.swift (// swift-tools-version first)")
    if f'.package(path: "../{CLONE_NAME}")' not in package:
        raise QuickstartError(f"the Quick start's Package.swift does not depend on ../{CLONE_NAME}")
    return package, main


def executable_target(package: str) -> str:
    found = re.search(r'\.executableTarget\(\s*name:\s*"([^"]+)"', package)
    if not found:
        raise QuickstartError("the Quick start's Package.swift names no executable target")
    return found.group(1)


def copy_working_tree(source: Path, destination: Path) -> None:
    """The files git tracks or would track (not ignored), as they are in the working tree; symlinks as symlinks."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=source,
                            capture_output=True, check=True).stdout.split(b"\0")
    for raw in filter(None, listed):
        relative = raw.decode()
        origin = source / relative
        if not origin.exists() and not origin.is_symlink():
            continue  # deleted in the working tree
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_symlink():
            os.symlink(os.readlink(origin), target)
        else:
            shutil.copy2(origin, target)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--swift", default=os.environ.get("SWIFT", "swift"))
    parser.add_argument("--readme", default=str(ROOT / "README.md"))
    args = parser.parse_args()
    try:
        package, main_swift = quickstart_blocks(Path(args.readme).read_text())
        target = executable_target(package)
    except QuickstartError as error:
        print(f"check_quickstart: {error}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="profirest-quickstart.") as work:
        work = Path(work)
        copy_working_tree(ROOT, work / CLONE_NAME)
        app = work / "app"
        (app / "Sources" / target).mkdir(parents=True)
        (app / "Package.swift").write_text(package)
        (app / "Sources" / target / "main.swift").write_text(main_swift)
        print(f"check_quickstart: building the Quick start's package ({target}) beside ../{CLONE_NAME}", flush=True)
        built = subprocess.run([args.swift, "build", "--scratch-path", str(app / ".build")], cwd=app)
        if built.returncode != 0:
            print("check_quickstart: the README's Quick start does not build as it stands", file=sys.stderr)
            return 1
    print(f"check_quickstart: the Quick start's Package.swift and main.swift build against a clone ({CLONE_NAME})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
