"""Fails when CONTRIBUTING.md's "How it is built" section names a source file or folder that does not exist.

The section is how a newcomer finds their way (where a POST gets its Idempotency-Key, where a 401 becomes a
refresh, …); a file renamed or moved without the map following it would send them to nothing. Checked: every
`Folder/File.swift` in backticks resolves under Sources/ProfirestAPI or Tests/ProfirestAPITests (or from the
repository root); every folder of the tree diagram's Sources/ProfirestAPI block exists and every library folder is
in it; every folder the Tests/ProfirestAPITests block names exists there, and every test folder is either a library
folder (the tests mirror the sources) or named in that block.

Usage: python3 tools/check_readme_map.py [CONTRIBUTING.md]
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "Tests/ProfirestAPITests"


def main() -> int:
    readme = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "CONTRIBUTING.md"
    text = readme.read_text()
    start = text.index("## How it is built")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end != -1 else len(text)]
    missing = []
    for path in sorted(set(re.findall(r"`([A-Za-z0-9_+./-]+\.swift)`", section))):
        if "/" not in path:
            continue
        if not any((base / path).exists() for base in (ROOT / "Sources/ProfirestAPI", TESTS, ROOT)):
            missing.append(path)
    library = ROOT / "Sources/ProfirestAPI"
    for folder in re.findall(r"^  ([A-Za-z]+)/ {2,}", section, re.M):
        if not (library / folder).is_dir():
            missing.append(f"Sources/ProfirestAPI/{folder}/")
    for folder in library.iterdir():
        if folder.is_dir() and not folder.name.endswith(".docc") and f"  {folder.name}/" not in section:
            missing.append(f"(not in the map) Sources/ProfirestAPI/{folder.name}/")
    # The test target's own folders: indented by four under its line of the tree diagram.
    block = re.search(r"^Tests/ProfirestAPITests/ .*?(?=^\S)", section, re.M | re.S)
    named = re.findall(r"^    ([A-Za-z]+)/ {2,}", block.group(0), re.M) if block else []
    if not block:
        missing.append("(not in the map) Tests/ProfirestAPITests/")
    for folder in named:
        if not (TESTS / folder).is_dir():
            missing.append(f"Tests/ProfirestAPITests/{folder}/")
    for folder in TESTS.iterdir():
        if folder.is_dir() and not (library / folder.name).is_dir() and folder.name not in named:
            missing.append(f"(not in the map) Tests/ProfirestAPITests/{folder.name}/")
    if missing:
        print("CONTRIBUTING.md 'How it is built' is out of date:\n  " + "\n  ".join(missing))
        return 1
    print("CONTRIBUTING.md 'How it is built': every named file and folder exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
