#!/usr/bin/env python3
"""Counts the library's public surface from its symbol graph: types and members, apart for Generated/.

Usage: tools/public_surface.py [path/to/ProfirestAPI.symbols.json] [--list]
(`make docs` writes the symbol graph; `make surface` runs this after it.)
"""
import json
import sys
from collections import Counter

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
        if not uri:
            continue
        counts[(where, bucket)] += 1
        listing.append((where, bucket, ".".join(symbol["pathComponents"])))
    for where in ("library", "generated"):
        print(f"{where}: {counts[(where, 'types')]} public types, {counts[(where, 'members')]} public members")
    if "--list" in sys.argv:
        for where, bucket, name in sorted(listing):
            if where == "library" and bucket == "types":
                print("  type", name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
