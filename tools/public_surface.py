#!/usr/bin/env python3
"""Counts the library's public surface from its symbol graph: types and members, apart for Generated/.

Members are counted twice: all declared ones (enum cases included; synthesized conformance members, which have no
source location, never), and those a user learns — without the witnesses of the standard library's protocols
(`description`, `customMirror`, `==`, `hash(into:)`, `init(from:)`, `encode(to:)`, the literal initializers…), which
add a conformance, not API. Nested types count as types. Deprecated types (kept for what a release shipped, until
the next major version) are counted apart too, since they are on their way out.

Usage: tools/public_surface.py [path/to/ProfirestAPI.symbols.json] [--list]
(`make docs` writes the symbol graph; `make surface` runs this after it.)
"""
import json
import sys
from collections import Counter

WITNESSES = {
    "description", "debugDescription", "customMirror", "hash(into:)", "==(_:_:)", "!=(_:_:)", "~=(_:_:)",
    "init(from:)", "encode(to:)", "init(nilLiteral:)", "init(booleanLiteral:)", "init(integerLiteral:)",
    "init(floatLiteral:)", "init(stringLiteral:)", "init(arrayLiteral:)", "init(dictionaryLiteral:)",
    "init(unicodeScalarLiteral:)", "init(extendedGraphemeClusterLiteral:)",
}
TYPE_KINDS = {"swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.typealias", "swift.actor"}


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    path = args[0] if args else ".build/symbolgraph-ProfirestAPI/ProfirestAPI.symbols.json"
    graph = json.load(open(path))
    counts = Counter()
    listing = []
    for symbol in graph["symbols"]:
        if symbol.get("accessLevel") != "public":
            continue
        uri = symbol.get("location", {}).get("uri", "")
        where = "generated" if "/Generated/" in uri else "library"
        kind = symbol["kind"]["identifier"]
        if kind == "swift.enum.case":
            bucket = "members"
        elif kind in TYPE_KINDS:
            bucket = "types"
        else:
            bucket = "members"
        # Synthesized conformance members (==, hash(into:), init(from:), …) have no source location.
        if not uri or "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
            continue
        counts[(where, bucket)] += 1
        if bucket == "types" and any(a.get("isUnconditionallyDeprecated") for a in symbol.get("availability", [])):
            counts[(where, "deprecated")] += 1
        if bucket == "members" and symbol["pathComponents"][-1] not in WITNESSES:
            counts[(where, "learned")] += 1
        listing.append((where, bucket, ".".join(symbol["pathComponents"])))
    for where in ("library", "generated"):
        deprecated = counts[(where, "deprecated")]
        types = f"{counts[(where, 'types')]} public types" + (f" ({deprecated} deprecated)" if deprecated else "")
        print(f"{where}: {types}, {counts[(where, 'members')]} public members "
              f"({counts[(where, 'learned')]} without standard-protocol witnesses)")
    if "--list" in sys.argv:
        for where, bucket, name in sorted(listing):
            if where == "library" and bucket == "types":
                print("  type", name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
