"""Fails when a public symbol of the ProfirestAPI module has no doc comment.

Reads the symbol graph(s) that `swift package dump-symbol-graph --minimum-access-level public` writes
(`ProfirestAPI.symbols.json` and any `ProfirestAPI@<Module>.symbols.json` for extensions of other modules' types)
and sorts every public or open symbol into one of three groups:

- documented: it has a non-blank doc comment written at its own declaration;
- inherits its documentation: the symbol graph gives it a `sourceOrigin` — it implements a protocol requirement or
  is a protocol's default implementation (`init(from:)`, `encode(to:)`, `hash(into:)`, `==`, `description`, the
  literal initializers…), so DocC shows the requirement's documentation — or it has no source location at all
  (the compiler synthesized it, e.g. a Codable or Hashable conformance), so there is no line to write a comment on;
- undocumented: everything else, including a blank `///`. These are listed and the script exits with 1.

A requirement implementation that does carry its own comment counts as documented, and one of our own protocols
whose requirement has no comment shows up through the requirement itself. The graph covers what the compiler saw on
this platform: declarations behind `#if canImport(Security)` and the like are not checked here.

Usage: python3 tools/check_docs.py [SYMBOLGRAPH_DIR] [--module ProfirestAPI] [--verbose]
"""
import argparse
import json
import sys
from pathlib import Path

DEFAULT_DIR = Path(__file__).resolve().parent.parent / ".build" / "x86_64-unknown-linux-gnu" / "symbolgraph"
CHECKED_ACCESS = {"public", "open"}


def graph_files(directory: Path, module: str) -> list[Path]:
    files = [directory / f"{module}.symbols.json"]
    files += sorted(directory.glob(f"{module}@*.symbols.json"))
    return [f for f in files if f.is_file()]


def has_text(doc: dict | None) -> bool:
    return bool(doc) and any(line.get("text", "").strip() for line in doc.get("lines", []))


def where(symbol: dict) -> str:
    location = symbol.get("location")
    if not location:
        return "(no source location)"
    uri = location.get("uri", "")
    path = uri.removeprefix("file://")
    for marker in ("/Sources/",):
        if marker in path:
            path = "Sources/" + path.split(marker, 1)[1]
    line = location.get("position", {}).get("line")
    return f"{path}:{line + 1}" if line is not None else path


def classify(graph: dict) -> tuple[list[dict], list[dict], list[dict]]:
    inheriting = {rel["source"] for rel in graph.get("relationships", []) if "sourceOrigin" in rel}
    documented, inherited, missing = [], [], []
    for symbol in graph.get("symbols", []):
        if symbol.get("accessLevel") not in CHECKED_ACCESS:
            continue
        doc = symbol.get("docComment")
        location = symbol.get("location")
        own_doc = has_text(doc) and location is not None and doc.get("uri") == location.get("uri")
        if own_doc:
            documented.append(symbol)
        elif symbol["identifier"]["precise"] in inheriting or location is None:
            inherited.append(symbol)
        else:
            missing.append(symbol)
    return documented, inherited, missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--module", default="ProfirestAPI")
    parser.add_argument("--verbose", action="store_true", help="also list the symbols that inherit their docs")
    args = parser.parse_args()

    files = graph_files(args.directory, args.module)
    if not files:
        print(f"check_docs: no {args.module} symbol graph in {args.directory}; run "
              "`swift package dump-symbol-graph --minimum-access-level public` first", file=sys.stderr)
        return 2

    documented, inherited, missing = [], [], []
    for file in files:
        d, i, m = classify(json.loads(file.read_text(encoding="utf-8")))
        documented += d
        inherited += i
        missing += m

    if args.verbose:
        for symbol in inherited:
            print(f"inherits docs: {'.'.join(symbol['pathComponents'])}  {where(symbol)}")
    if missing:
        print(f"check_docs: {len(missing)} public symbol(s) of {args.module} without a doc comment:", file=sys.stderr)
        for symbol in sorted(missing, key=where):
            kind = symbol["kind"]["displayName"].lower()
            print(f"  {where(symbol)}: {kind} {'.'.join(symbol['pathComponents'])}", file=sys.stderr)
        return 1
    print(f"check_docs: {len(documented)} public symbols of {args.module} documented, "
          f"{len(inherited)} inherit their docs (protocol requirements, synthesized members)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
