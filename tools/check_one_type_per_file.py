#!/usr/bin/env python3
"""Fails when a public type of the library is declared in a file not named after it.

A newcomer looking for `RequestBody` opens `RequestBody.swift`: every top-level `public` or `open` class, struct,
enum, actor, protocol or typealias of the library's products (Sources/ProfirestAPI, Sources/ProfirestPostgres,
Sources/ProfirestTesting) is
declared in `<Type>.swift`, or in `<Type>+<Platform>.swift` when each platform has its own declaration. Generated/ is
the code generator's, which files its models its own way. Nested public types stay in their parent's file (or an
extension file `<Parent>+<Topic>.swift`), and internal helpers may share the file of the type that uses them: neither
is checked. Comments and string literals are ignored; a declaration is top-level when it is outside every brace.
`make docs` runs this.

Usage: tools/check_one_type_per_file.py [root …] (the library's products by default)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from swift_source import strip  # noqa: E402 (the tools folder, also when a test loads this file by path)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOTS = [os.path.join(REPO, "Sources", name) for name in ("ProfirestAPI", "ProfirestPostgres", "ProfirestTesting")]
SKIPPED = {"Generated"}
DECLARATION = re.compile(
    r"(?:^|\n)[ \t]*((?:@\w+(?:\([^)\n]*\))?\s+)*)((?:[a-z_]+(?:\([a-z]+\))?\s+)*)"
    r"(class|struct|enum|protocol|actor|typealias)\s+([A-Za-z_]\w*)")


def top_level(code: str) -> str:
    """The code outside every pair of braces (bodies dropped, their newlines kept)."""
    out, depth = [], 0
    for ch in code:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        elif depth == 0 or ch == "\n":
            out.append(ch)
    return "".join(out)


def public_types(source: str) -> list:
    """(line, name) of every top-level public or open type declared in `source`."""
    code = top_level(strip(source))
    found = []
    for match in DECLARATION.finditer(code):
        modifiers = match.group(2).split()
        if "public" in modifiers or "open" in modifiers:
            line = code.count("\n", 0, match.start(3)) + 1
            found.append((line, match.group(4)))
    return found


def offenders(roots: list) -> list:
    """`path:line: Type is declared in File.swift` for each public type outside its own file."""
    problems = []
    for root in roots:
        for dirpath, dirnames, names in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED and not d.endswith(".docc"))
            for name in sorted(names):
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(dirpath, name)
                stem = name[: -len(".swift")]
                for line, type_name in public_types(open(path, encoding="utf-8").read()):
                    if stem != type_name and not stem.startswith(type_name + "+"):
                        problems.append(f"{os.path.relpath(path, REPO)}:{line}: the public type {type_name} is "
                                        f"declared in {name}; move it to {type_name}.swift")
    return problems


def main() -> int:
    roots = [os.path.abspath(a) for a in sys.argv[1:]] or ROOTS
    problems = offenders(roots)
    if problems:
        print("\n".join(problems))
        print(f"check_one_type_per_file: {len(problems)} public types outside a file named after them")
        return 1
    print("check_one_type_per_file: every public type is declared in <Type>.swift")
    return 0


if __name__ == "__main__":
    sys.exit(main())
