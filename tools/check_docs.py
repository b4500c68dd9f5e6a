"""Fails when a public symbol of the ProfirestAPI module has no doc comment, or a public function lacks its DocC
sections.

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
whose requirement has no comment shows up through the requirement itself.

Every documented function, method, operator, initializer and subscript outside Sources/ProfirestAPI/Generated/ that
takes parameters must also have the DocC sections (callouts) that say how to call it:

- `- Parameters:` with an item `- name:` for each parameter, or `- Parameter name:` for each; the name is the one
  the body uses (`key` in `get(_ key: String)`, `decoder` in `init(from decoder: Decoder)`), as DocC expects;
- `- Returns:` unless it is an initializer or returns `Void`, `()` or `Never`;
- `- Throws:` when it `throws` or `rethrows` (its own effect: not a closure parameter's, nor a returned function's).

Callouts inside a ``` code block do not count; a function without parameters is not checked for sections. Each
offender is listed as file:line with what it lacks (a protocol extension's member once, not once per conforming
type), and the script exits with 1.

The graph covers what the compiler saw on this platform: declarations behind `#if canImport(Security)` and the like
are not checked here.

Usage: python3 tools/check_docs.py [SYMBOLGRAPH_DIR] [--module ProfirestAPI] [--verbose]
"""
import argparse
import json
import re
import sys
from pathlib import Path

DEFAULT_DIR = Path(__file__).resolve().parent.parent / ".build" / "x86_64-unknown-linux-gnu" / "symbolgraph"
CHECKED_ACCESS = {"public", "open"}
# The symbol kinds that take parameters, as the symbol graph names them.
FUNCTION_KINDS = {
    "swift.func", "swift.func.op", "swift.method", "swift.type.method", "swift.init", "swift.subscript",
    "swift.type.subscript",
}
NO_RESULT = {"", "Void", "()", "Never"}
PARAMETER_ITEM = re.compile(r"-\s+([A-Za-z_][A-Za-z0-9_]*)\s*:")
PARAMETER_CALLOUT = re.compile(r"-\s+parameter\s+([A-Za-z_][A-Za-z0-9_]*)\s*:", re.IGNORECASE)


def graph_files(directory: Path, module: str) -> list[Path]:
    files = [directory / f"{module}.symbols.json"]
    files += sorted(directory.glob(f"{module}@*.symbols.json"))
    return [f for f in files if f.is_file()]


def has_text(doc: dict | None) -> bool:
    return bool(doc) and any(line.get("text", "").strip() for line in doc.get("lines", []))


def where_key(symbol: dict) -> tuple[str, int]:
    """The source location as a sort key: by file, then by line as a number."""
    path, _, line = where(symbol).rpartition(":")
    return (path, int(line)) if line.isdigit() else (where(symbol), 0)


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


def is_generated(symbol: dict) -> bool:
    return "/Sources/ProfirestAPI/Generated/" in (symbol.get("location") or {}).get("uri", "")


def callouts(doc: dict | None) -> tuple[set[str], bool, bool]:
    """The parameter names a doc comment documents, and whether it has `- Returns:` and `- Throws:`."""
    names: set[str] = set()
    returns = throws = False
    list_indent = None  # the indentation of a `- Parameters:` line while its items follow
    in_code = False
    for line in (doc or {}).get("lines", []):
        text = line.get("text", "")
        stripped = text.strip()
        if stripped.startswith("```"):
            in_code = not in_code
            continue
        if in_code or not stripped:
            continue
        indent = len(text) - len(text.lstrip())
        if list_indent is not None:
            if indent > list_indent:
                item = PARAMETER_ITEM.match(stripped)
                if item:
                    names.add(item.group(1))
                continue
            list_indent = None
        lower = stripped.lower()
        if re.match(r"-\s+parameters\s*:", lower):
            list_indent = indent
        elif single := PARAMETER_CALLOUT.match(stripped):
            names.add(single.group(1))
        elif re.match(r"-\s+returns\s*:", lower):
            returns = True
        elif re.match(r"-\s+throws\s*:", lower):
            throws = True
    return names, returns, throws


def parameter_names(symbol: dict) -> list[str]:
    """The names the doc comment must use: the internal one where it differs from the label."""
    parameters = (symbol.get("functionSignature") or {}).get("parameters", [])
    return [p.get("internalName") or p["name"] for p in parameters]


def own_effect_throws(symbol: dict) -> bool:
    """Whether the declaration itself throws or rethrows: a keyword outside every parenthesis and before the result's
    arrow (so neither a closure parameter's `throws` nor a returned function type's counts)."""
    depth = 0
    for fragment in symbol.get("declarationFragments", []):
        spelling = fragment.get("spelling", "")
        if fragment.get("kind") == "keyword" and depth == 0 and spelling in ("throws", "rethrows"):
            return True
        if fragment.get("kind") != "text":
            continue
        for index, character in enumerate(spelling):
            if character == "(":
                depth += 1
            elif character == ")":
                depth -= 1
            elif depth == 0 and spelling.startswith("->", index):
                return False
    return False


def returns_value(symbol: dict) -> bool:
    if symbol["kind"]["identifier"] == "swift.init":
        return False
    returns = (symbol.get("functionSignature") or {}).get("returns", [])
    return "".join(fragment.get("spelling", "") for fragment in returns).strip() not in NO_RESULT


def missing_sections(symbol: dict) -> list[str]:
    """What the doc comment of a function with parameters lacks; empty when it has every section it needs."""
    parameters = parameter_names(symbol)
    if not parameters:
        return []
    names, returns, throws = callouts(symbol.get("docComment"))
    lacks = []
    undocumented = [name for name in parameters if name not in names]
    if undocumented:
        lacks.append("`- Parameter` for " + ", ".join(undocumented))
    if returns_value(symbol) and not returns:
        lacks.append("`- Returns:`")
    if own_effect_throws(symbol) and not throws:
        lacks.append("`- Throws:`")
    return lacks


def lacking_sections(documented: list[dict]) -> list[tuple[dict, list[str]]]:
    """The documented functions, initializers and subscripts outside Generated/ whose comments lack a section."""
    offenders = []
    for symbol in documented:
        if symbol["kind"]["identifier"] not in FUNCTION_KINDS or is_generated(symbol):
            continue
        if lacks := missing_sections(symbol):
            offenders.append((symbol, lacks))
    return offenders


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
        for symbol in sorted(missing, key=where_key):
            kind = symbol["kind"]["displayName"].lower()
            print(f"  {where(symbol)}: {kind} {'.'.join(symbol['pathComponents'])}", file=sys.stderr)
    offenders = lacking_sections(documented)
    if offenders:
        # A protocol extension's member is in the graph once per conforming type: one line per declaration.
        by_declaration: dict[tuple[str, str], list] = {}
        for symbol, lacks in offenders:
            key = (where(symbol), symbol["names"]["title"])
            by_declaration.setdefault(key, [symbol, lacks, 0])[2] += 1
        print(f"check_docs: {len(by_declaration)} public function(s) of {args.module} outside Generated/ without "
              "their DocC sections (- Parameters:, - Returns:, - Throws:):", file=sys.stderr)
        for symbol, lacks, copies in sorted(by_declaration.values(), key=lambda entry: where_key(entry[0])):
            title = ".".join(symbol["pathComponents"])
            also = f" (and {copies - 1} other conforming type(s))" if copies > 1 else ""
            print(f"  {where(symbol)}: {title}{also}: no {'; no '.join(lacks)}", file=sys.stderr)
    if missing or offenders:
        return 1
    print(f"check_docs: {len(documented)} public symbols of {args.module} documented, "
          f"{len(inherited)} inherit their docs (protocol requirements, synthesized members); "
          "every function with parameters outside Generated/ has its DocC sections")
    return 0


if __name__ == "__main__":
    sys.exit(main())
