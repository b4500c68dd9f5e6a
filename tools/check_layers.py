#!/usr/bin/env python3
"""Fails when a folder of Sources/ProfirestAPI uses a type of a folder above it.

CONTRIBUTING.md's "How it is built" draws the library's folders as layers that data flows down through: the facade
(Client) on top; the features that use the pipeline to talk to the server (Auth, Events, Outbox) below it; then the
Pipeline, the Transport, Storage, Errors, the Generated models, and at the bottom four rooms beside each other that
use nothing above them: Observing (what the observer hears, and redaction), Values (JSON values, wire coding, dates,
ids), Crypto and Concurrency (locks, the blocking pool, waiting). A file may use what is
declared in its own folder or in any folder below; a use of a type declared in a folder above is a back-edge, which
this check lists (file, line, the type and where it lives). Types are found by their declarations
(top-level class/struct/enum/protocol/actor/typealias; nested types belong to theirs), uses by whole-word matches outside
comments and string literals. `--list` prints every edge between folders instead of failing.
"""
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from swift_source import strip  # noqa: E402 (the tools folder, also when a test loads this file by path)

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Sources", "ProfirestAPI")
# Top to bottom; folders on one line are beside each other (they may not use each other).
LAYERS = [["Client"], ["Auth", "Events", "Outbox"], ["Pipeline"], ["Transport"], ["Storage"], ["Errors"],
          ["Generated"], ["Observing", "Values", "Crypto", "Concurrency"]]
NESTED = re.compile(r"^\s+(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|final|open|indirect|"
                    r"nonisolated)\s+)*(?:class|struct|enum|protocol|actor|typealias)\s+([A-Z]\w*)", re.M)
RANK = {folder: rank for rank, folders in enumerate(LAYERS) for folder in folders}
# Back-edges known and still to go, each with the reason: a new one fails the check, and an entry no longer used does too.
KNOWN: dict = {}
# Files whose layer is not their folder's: the typed operations are generated, but they are the facade's methods.
FILE_LAYER = {"Generated/TypedOperations.swift": "Client"}
DECLARATION = re.compile(r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|final|open|indirect|"
                         r"nonisolated)\s+)*(?:class|struct|enum|protocol|actor|typealias)\s+([A-Z]\w*)", re.M)


def main() -> int:
    files = {}
    owner = {}
    for folder in sorted(os.listdir(ROOT)):
        path = os.path.join(ROOT, folder)
        if not os.path.isdir(path) or folder.endswith(".docc"):
            continue
        if folder not in RANK:
            print(f"check_layers: the folder {folder} has no layer; add it to LAYERS (and to CONTRIBUTING.md's map)")
            return 1
        for dirpath, _, names in os.walk(path):
            for name in names:
                if name.endswith(".swift"):
                    full = os.path.join(dirpath, name)
                    code = strip(open(full, encoding="utf-8").read())
                    layer = FILE_LAYER.get(os.path.relpath(full, ROOT), folder)
                    files[full] = (layer, code)
                    for type_name in DECLARATION.findall(code):
                        owner.setdefault(type_name, layer)
    edges = defaultdict(set)
    back = []
    word = re.compile(r"\b[A-Z]\w*\b")
    for full, (folder, code) in sorted(files.items()):
        # A type nested in this file (ProfirestEvent.Attempt) is not the top-level one of the same name.
        local = set(NESTED.findall(code))
        for number, line in enumerate(code.split("\n"), 1):
            for used in set(word.findall(line)):
                home = owner.get(used)
                if home is None or home == folder or used in local:
                    continue
                edges[(folder, home)].add(used)
                if RANK[home] <= RANK[folder] and used not in KNOWN.get((folder, home), set()):
                    back.append(f"{os.path.relpath(full, ROOT)}:{number}: {folder} uses {used} of {home}")
    if "--list" in sys.argv:
        for (a, b), names in sorted(edges.items()):
            mark = "  BACK" if RANK[b] <= RANK[a] else ""
            print(f"{a} → {b}: {', '.join(sorted(names))}{mark}")
        return 0
    stale = [f"{a} → {b}: {name}" for (a, b), names in KNOWN.items() for name in names
             if name not in edges.get((a, b), set())]
    if stale:
        print("check_layers: these known back-edges are gone; remove them from KNOWN: " + ", ".join(stale))
        return 1
    if back:
        print("\n".join(back))
        print(f"check_layers: {len(back)} uses against the direction of the layers "
              f"({' → '.join('/'.join(l) for l in LAYERS)})")
        return 1
    known = sum(len(names) for names in KNOWN.values())
    print(f"check_layers: {len(files)} files, no use against the direction of the layers ({known} known, listed in KNOWN)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
