#!/usr/bin/env python3
"""Checks the libcurl constants of Sources/CProfirestCurl against curl's own headers.

The C target declares the few libcurl options, codes and values it uses (it cannot include curl.h: users' machines do
not have curl's development headers). This check gets those headers — from the system if installed, otherwise from
Debian's libcurl4-openssl-dev package, downloaded and unpacked into a temporary directory, never installed — and
compiles a program that asserts, at compile time, that every PFC_ constant equals curl's and that the structures the
shim mirrors (curl_blob, CURLMsg) have curl's layout. Exit 0 when all match.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "Sources/CProfirestCurl/include/CProfirestCurl.h")
PREFIXES = [("PFC_OPT_", "CURLOPT_"), ("PFC_INFO_", "CURLINFO_"), ("PFC_MOPT_", "CURLMOPT_"), ("PFC_E_", "CURLE_"),
            ("PFC_PIPE_", "CURLPIPE_"), ("PFC_HTTP_VERSION_", "CURL_HTTP_VERSION_"), ("PFC_PAUSE_", "CURLPAUSE_"),
            ("PFC_WRITEFUNC_", "CURL_WRITEFUNC_"), ("PFC_POLL_", "CURL_POLL_"), ("PFC_CSELECT_", "CURL_CSELECT_"),
            ("PFC_SOCKET_", "CURL_SOCKET_")]


def curl_include_dir(work: str) -> str:
    for candidate in ["/usr/include", *glob.glob("/usr/include/*-linux-gnu")]:
        if os.path.exists(os.path.join(candidate, "curl", "curl.h")):
            return candidate
    def download() -> subprocess.CompletedProcess:
        return subprocess.run(["apt-get", "download", "libcurl4-openssl-dev"], cwd=work, capture_output=True, text=True)
    result = download()
    if result.returncode != 0 and os.geteuid() == 0:
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
        result = download()
    debs = glob.glob(os.path.join(work, "libcurl4-openssl-dev_*.deb"))
    if not debs:
        sys.exit(f"check_curl_abi: curl's headers are not installed and libcurl4-openssl-dev could not be downloaded:\n"
                 f"{result.stderr.strip()}")
    subprocess.run(["dpkg-deb", "-x", debs[0], os.path.join(work, "root")], check=True)
    found = glob.glob(os.path.join(work, "root", "usr", "include", "**", "curl", "curl.h"), recursive=True)
    return os.path.dirname(os.path.dirname(found[0]))


def main() -> int:
    constants = re.findall(r"^#define (PFC_\w+) (-?\w+)$", open(HEADER).read(), re.M)
    asserts = []
    for name, _ in constants:
        curl = next((name.replace(ours, theirs, 1) for ours, theirs in PREFIXES if name.startswith(ours)), None)
        if curl is None:
            print(f"check_curl_abi: no curl name for {name}", file=sys.stderr)
            return 1
        asserts.append(f'_Static_assert({name} == {curl}, "{name} is not {curl}");')
    program = "\n".join([
        "#include <stddef.h>", "#include <curl/curl.h>", f'#include "{HEADER}"',
        *asserts,
        "struct pfc_blob { void *data; size_t len; unsigned int flags; };",
        "_Static_assert(sizeof(struct pfc_blob) == sizeof(struct curl_blob), \"curl_blob's size\");",
        "_Static_assert(offsetof(struct curl_blob, len) == offsetof(struct pfc_blob, len), \"curl_blob.len\");",
        "_Static_assert(offsetof(struct curl_blob, flags) == offsetof(struct pfc_blob, flags), \"curl_blob.flags\");",
        "_Static_assert(CURL_BLOB_COPY == 1, \"CURL_BLOB_COPY\");",
        "_Static_assert(CURLMSG_DONE == 1, \"CURLMSG_DONE\");",
        "_Static_assert(CURL_GLOBAL_ALL == 3, \"CURL_GLOBAL_ALL\");",
        "struct pfc_msg { int msg; void *easy_handle; union { void *whatever; int result; } data; };",
        "_Static_assert(offsetof(CURLMsg, easy_handle) == offsetof(struct pfc_msg, easy_handle), \"CURLMsg.easy_handle\");",
        "_Static_assert(offsetof(CURLMsg, data) == offsetof(struct pfc_msg, data), \"CURLMsg.data\");",
        "int main(void) { return 0; }", ""])
    work = tempfile.mkdtemp(prefix="curl-abi-")
    try:
        include = curl_include_dir(work)
        source = os.path.join(work, "check.c")
        open(source, "w").write(program)
        compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
        result = subprocess.run([compiler, "-std=c11", "-D__linux__", "-I", include, "-fsyntax-only", source],
                                capture_output=True, text=True)
        if result.returncode != 0:
            print(result.stderr, file=sys.stderr)
            return 1
        print(f"check_curl_abi: {len(asserts)} constants and 2 structures match curl's headers ({include})")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
