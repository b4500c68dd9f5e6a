#!/usr/bin/env python3
"""Counts the library files a request runs through, for the closing notes of refactors (issue 21's measure).

Builds the tests with coverage (in .build/cov, apart from the normal build), runs each test of
Tests/ProfirestAPITests/Client/RequestPathTests.swift alone, and compares every path test with its twin:
a file of Sources/ProfirestAPI (Generated/ excluded) counts when the path test ran more of its code than the setup.

Usage: tools/files_touched.py [--list]
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRATCH = os.path.join(ROOT, ".build", "cov")
PATHS = {
    "401_refresh_retry": ("testGetWhoseTokenWasRejectedRefreshesAndGoesAgain", "testGetWithAnAcceptedToken"),
    "get_401_whole": ("testGetWhoseTokenWasRejectedRefreshesAndGoesAgain", "testSetupOnly"),
    "post_model": ("testPostOfAModel", "testSetupOnly"),
    "outbox_delivery": ("testOutboxDelivery", "testOutboxSetupOnly"),
}


def tool(name):
    return os.path.join(os.path.dirname(os.path.realpath(subprocess.check_output(["which", "swift"], text=True).strip())), name)


def counts(test, workdir):
    # %p: `swift test` runs the tests in a child process of its runner, and each writes its own profile.
    raws = os.path.join(workdir, test)
    os.makedirs(raws)
    env = dict(os.environ, LLVM_PROFILE_FILE=os.path.join(raws, "%p.profraw"))
    subprocess.run(
        ["swift", "test", "--skip-build", "--scratch-path", SCRATCH, "--filter", "RequestPathTests/" + test],
        cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    data = os.path.join(workdir, test + ".profdata")
    subprocess.run([tool("llvm-profdata"), "merge", "-sparse", *[os.path.join(raws, f) for f in os.listdir(raws)], "-o", data],
                   check=True)
    binary = os.path.join(SCRATCH, "debug", "profirest-api-swiftPackageTests.xctest")
    out = subprocess.run([tool("llvm-cov"), "export", "-instr-profile", data, binary], check=True,
                         capture_output=True, text=True).stdout
    result = {}
    for f in json.loads(out)["data"][0]["files"]:
        name = f["filename"]
        if "/Sources/ProfirestAPI/" not in name or "/Generated/" in name:
            continue
        total = sum(seg[2] for seg in f["segments"] if seg[3])
        result[os.path.relpath(name, os.path.join(ROOT, "Sources", "ProfirestAPI"))] = total
    return result


def main():
    subprocess.run(["swift", "build", "--build-tests", "--enable-code-coverage", "--scratch-path", SCRATCH],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory() as workdir:
        cache = {}
        for key, (test, setup) in PATHS.items():
            for t in (test, setup):
                if t not in cache:
                    cache[t] = counts(t, workdir)
            touched = sorted(f for f, n in cache[test].items() if n > cache[setup].get(f, 0))
            print(f"{key}: {len(touched)} files")
            if "--list" in sys.argv:
                for f in touched:
                    print("   ", f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
