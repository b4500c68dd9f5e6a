#!/usr/bin/env python3
"""Fails when a platform branch of the package's code is compiled by no build here.

Every `#if`/`#elseif`/`#else` branch of the Swift sources of the library, its test support, the bench and the
executables is evaluated twice: as the Linux build compiles it, and as the test-only shim targets compile it
(PROFIREST_SHIMS defined — PlatformShims for the library files symlinked into Sources/PlatformShims,
TestSupportWindowsCheck and BenchWindowsCheck for the folders symlinked into Sources/WindowsChecks). A branch that
holds code and is active in neither is reported, unless it holds only imports or is listed in ACCEPTED below with the
reason it needs no compiler. `make build` runs this before `swift build`.

Usage: tools/check_platform_branches.py [--list]
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = [
    "Sources/ProfirestAPI", "Sources/ProfirestTestSupport", "benchmarks/ProfirestBench", "Sources/Pichacka",
    "Sources/ProfirestRefreshProbe", "Sources/ProfirestCodegen", "Sources/ProfirestCodegenKit",
    "Sources/ProfirestPostgres",
]
# Folders whose every file the Windows-check targets compile again with PROFIREST_SHIMS (TestSupport) or as they are
# (the bench): see Package.swift.
CHECKED_FOLDERS = {"Sources/ProfirestTestSupport": {"PROFIREST_SHIMS"}, "benchmarks/ProfirestBench": set()}

# Branches no build here compiles, each with why that is acceptable: (file name, a line of the branch's code, reason).
# By file name, not path, so that moving a file between the library's folders does not break the list.
ACCEPTED = [
    ("Pairing.swift", 'return "ios"', "the platform's name as a string literal"),
    ("Pairing.swift", 'return "macos"', "the platform's name as a string literal"),
    ("Pairing.swift", 'return "tvos"', "the platform's name as a string literal"),
    ("Pairing.swift", 'return "watchos"', "the platform's name as a string literal"),
    ("Pairing.swift", 'return "windows"', "the platform's name as a string literal"),
    ("Pairing.swift", 'return "android"', "the platform's name as a string literal"),
    ("ErrorFactory.swift", "Trusted Root Certification Authorities", "advice text: string literals"),
    ("ErrorFactory.swift", "install and trust its profile on the device", "advice text: string literals"),
    ("IdleStreams.swift", "let transport = URLSessionTransport()",
     "the bench's transport where there is no CurlTransport: the same initializer the Linux build compiles in the bench"),
    ("PartnerTransportFloor.swift", "let transport = URLSessionTransport()",
     "the bench's transport where there is no CurlTransport: the same initializer the Linux build compiles in the bench"),
    ("main.swift", 'return "URLSessionTransport"', "the transport's name as a string literal"),
    ("PartnerBench.swift", "the partner part's admin client needs POSIX sockets",
     "where there are no POSIX sockets the partner part says so: an error with a string literal"),
    ("DefaultTransport.swift", "return fallback(trusting: trustedCertificates)",
     "the same call the Linux branch makes when libcurl is missing, compiled there"),
    ("KeychainTokenStorage.swift", "private static let hasFileBasedKeychain = true", "a Boolean literal"),
    ("KeychainTokenStorage.swift", "private static let hasFileBasedKeychain = false", "a Boolean literal"),
    ("OwnerOnlySecurity+Windows.swift", "#error(",
     "the Swift 6.0 requirement on Windows: active only with an older compiler"),
]

LINUX = {"os": {"Linux"}, "canImport": {"Glibc", "Foundation", "FoundationNetworking", "Dispatch", "XCTest",
                                        "CProfirestCurl", "ProfirestAPI", "ProfirestTestSupport", "Testing",
                                        "Observation"}}  # Observation: swiftc builds an @Observable class here
CONDITION = re.compile(r"^\s*#(if|elseif|else|endif)\b(.*)$")


def evaluate(expression, defines, debug):
    """The value of a compilation condition on Linux with `defines` set."""
    def atom(match):
        kind, argument = match.group(1), match.group(2).strip()
        if kind == "os":
            return str(argument in LINUX["os"])
        if kind == "canImport":
            return str(argument in LINUX["canImport"])
        if kind in ("compiler", "swift"):
            return "True"
        if kind == "arch":
            return str(argument == "x86_64")
        raise ValueError(f"unknown condition {kind}")
    text = re.sub(r"\b(os|canImport|compiler|swift|arch)\(([^)]*)\)", atom, expression)
    text = re.sub(r"\b([A-Za-z_][A-Za-z0-9_]*)\b",
                  lambda m: m.group(1) if m.group(1) in ("True", "False") else
                  str(debug if m.group(1) == "DEBUG" else m.group(1) in defines), text)
    text = text.replace("&&", " and ").replace("||", " or ").replace("!", " not ")
    return bool(eval(text, {"__builtins__": {}}))


def branches(path):
    """Each branch of the file: (condition stack as (expression, negated earlier siblings), code lines)."""
    result = []
    stack = []  # each: list of sibling conditions so far, current condition
    current = [[]]  # code lines of the branch being read, per nesting level
    lines = open(path, encoding="utf-8").read().splitlines()
    for line in lines:
        match = CONDITION.match(line)
        if not match:
            current[-1].append(line)
            continue
        keyword, rest = match.group(1), match.group(2).split("//")[0].strip()
        if keyword == "if":
            stack.append({"earlier": [], "now": rest})
            current.append([])
        elif keyword in ("elseif", "else"):
            frame = stack[-1]
            result.append(([{"earlier": list(f["earlier"]), "now": f["now"]} for f in stack], current.pop()))
            frame["earlier"].append(frame["now"])
            frame["now"] = rest if keyword == "elseif" else "true"
            current.append([])
        else:
            result.append(([{"earlier": list(f["earlier"]), "now": f["now"]} for f in stack], current.pop()))
            stack.pop()
    return result


def active(frames, defines, debug):
    for frame in frames:
        if any(evaluate(e, defines, debug) for e in frame["earlier"]):
            return False
        if frame["now"] != "true" and not evaluate(frame["now"], defines, debug):
            return False
    return True


def code(lines):
    kept = [l.strip() for l in lines if l.strip() and not l.strip().startswith("//")]
    return kept


def shim_defines(relative):
    """The defines a shim or check target compiles this file with, or None when none compiles it."""
    for folder, defines in CHECKED_FOLDERS.items():
        if relative.startswith(folder + "/"):
            return defines
    if relative.startswith("Sources/ProfirestAPI/"):
        shims = os.path.join(ROOT, "Sources/PlatformShims")
        for name in os.listdir(shims):
            link = os.path.join(shims, name)
            if os.path.islink(link) and os.path.realpath(link) == os.path.join(ROOT, relative):
                return {"PROFIREST_SHIMS"}
    return None


def main():
    listing = "--list" in sys.argv
    uncovered, accepted_used, counts = [], set(), {"native": 0, "shims": 0, "imports": 0, "accepted": 0}
    for top in SOURCES:
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for name in sorted(files):
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, ROOT)
                shims = shim_defines(relative)
                for frames, lines in branches(path):
                    if not frames or not code(lines):
                        continue
                    if any(active(frames, set(), debug) for debug in (True, False)):
                        counts["native"] += 1
                        continue
                    if shims is not None and any(active(frames, shims, d) for d in (True, False)):
                        counts["shims"] += 1
                        if listing:
                            print(f"shims   {relative}: {code(lines)[0][:80]}")
                        continue
                    if all(l.startswith("import ") or l.startswith("@_exported import ") for l in code(lines)):
                        counts["imports"] += 1
                        continue
                    reason = next((a for a in ACCEPTED if a[0] == name and any(a[1] in l for l in lines)), None)
                    if reason:
                        accepted_used.add(reason)
                        counts["accepted"] += 1
                        if listing:
                            print(f"listed  {relative}: {reason[2]}")
                        continue
                    uncovered.append((relative, code(lines)[0]))
    print(f"platform branches: {counts['native']} compiled by the Linux build, {counts['shims']} against the shims "
          f"(make build), {counts['imports']} imports only, {counts['accepted']} listed as needing no compiler")
    stale = [a for a in ACCEPTED if a not in accepted_used]
    for relative, first in uncovered:
        print(f"error: {relative}: a platform branch no build here compiles ({first[:70]}): compile it against "
              "the shims (Sources/PlatformShims, Sources/WindowsChecks) or list it in tools/check_platform_branches.py")
    for entry in stale:
        print(f"error: tools/check_platform_branches.py lists a branch that is not there: {entry[0]}: {entry[1]}")
    return 1 if uncovered or stale else 0


if __name__ == "__main__":
    sys.exit(main())
