#!/usr/bin/env python3
"""make testing-kit-test: an app's package outside the repository tests its view model with ProfirestTesting, as the
article "Testing your app" shows it.

Writes a new package into a temporary directory, beside a symbolic link named as a clone is (`profirest-api-swift`)
that points at this working tree, so the package depends on the repository by path with nothing copied. Its
Package.swift is an empty app library `MyApp` plus the article's test target, verbatim (the article's ```text block
that starts with `.testTarget(`); its test file is the article's ```swift blocks, verbatim. Then `swift test` runs
there (the library and the kit are compiled once more, in the package's own build directory; nothing of this
repository's `.build` is used) and must pass, the article's test among the tests run.

Usage: tools/check_testing_kit.py [--swift swift] [--article PATH]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARTICLE = ROOT / "Sources/ProfirestTesting/ProfirestTesting.docc/TestingYourApp.md"
CLONE_NAME = "profirest-api-swift"

PACKAGE = """// swift-tools-version:5.9
import PackageDescription

let package = Package(
    name: "MyApp",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    dependencies: [.package(path: "../%s")],
    targets: [
        .target(name: "MyApp"),
%s
    ]
)
"""


class ArticleError(Exception):
    pass


def article_parts(text: str) -> tuple[str, str, list[str]]:
    """(the test target's declaration, the test file, the test methods) of the article, verbatim."""
    targets = [block for block in re.findall(r"^```text\n(.*?)^```$", text, re.S | re.M)
               if block.lstrip().startswith(".testTarget(")]
    if len(targets) != 1:
        raise ArticleError(f"the article has {len(targets)} ```text block(s) starting with .testTarget( (needs one)")
    swift = re.findall(r"^```swift\n(.*?)^```$", text, re.S | re.M)
    if not swift:
        raise ArticleError("the article has no ```swift block")
    source = "\n".join(swift)
    tests = re.findall(r"func (test\w+)\(", source)
    if not tests:
        raise ArticleError("the article's code has no test method")
    return targets[0].rstrip().rstrip(","), source, tests


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--swift", default=os.environ.get("SWIFT", "swift"))
    parser.add_argument("--article", default=str(ARTICLE))
    args = parser.parse_args()
    try:
        target, source, tests = article_parts(Path(args.article).read_text(encoding="utf-8"))
    except ArticleError as error:
        print(f"check_testing_kit: {error}", file=sys.stderr)
        return 1
    name = re.search(r'\.testTarget\(name:\s*"([^"]+)"', target)
    if not name:
        print("check_testing_kit: the article's test target has no name", file=sys.stderr)
        return 1
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="profirest-testing-kit.") as work:
        work = Path(work)
        os.symlink(ROOT, work / CLONE_NAME)
        app = work / "app"
        (app / "Sources/MyApp").mkdir(parents=True)
        (app / "Sources/MyApp/MyApp.swift").write_text("// The app's code; the article's test brings its own view model.\n")
        (app / "Tests" / name.group(1)).mkdir(parents=True)
        (app / "Tests" / name.group(1) / "ArticleTests.swift").write_text(source)
        indented = "\n".join("        " + line if line else line for line in target.split("\n"))
        (app / "Package.swift").write_text(PACKAGE % (CLONE_NAME, indented + ","))
        print(f"check_testing_kit: swift test in a new package outside the repository ({', '.join(tests)})", flush=True)
        run = subprocess.run([args.swift, "test", "--scratch-path", str(app / ".build")], cwd=app,
                             capture_output=True, text=True)
        output = run.stdout + run.stderr
        if run.returncode != 0:
            print(output, file=sys.stderr)
            print("check_testing_kit: the article's test does not pass in a package of its own", file=sys.stderr)
            return 1
        missing = [test for test in tests if not re.search(rf"Test Case .*{test}.* passed", output)]
        if missing:
            print(output, file=sys.stderr)
            print(f"check_testing_kit: not run: {', '.join(missing)}", file=sys.stderr)
            return 1
        for line in output.splitlines():
            if re.search(r"Test Case .*(" + "|".join(tests) + r").* passed", line):
                print(f"check_testing_kit: {line.strip()}")
    print(f"check_testing_kit: the article's test passes in a package outside the repository "
          f"({time.monotonic() - started:.0f} s, build included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
