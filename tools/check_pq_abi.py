#!/usr/bin/env python3
"""Checks what Sources/CProfirestPQ mirrors of libpq against libpq's own headers.

The C target declares the few libpq constants it uses and the prototypes of the functions it looks up at run time
(it cannot include libpq-fe.h: building the package must not need libpq's development headers). This check gets
those headers — from the system if installed, otherwise from Debian's libpq-dev package, downloaded and unpacked
into a temporary directory, never installed — and compiles a program that asserts, at compile time, that every PFQ_
constant equals libpq's, that each function pointer type of pq_api.h is the type of the libpq function it holds,
and that the mirrored PQconninfoOption has libpq's layout. Exit 0 when all match.

Usage: tools/check_pq_abi.py [--download]   (--download: use the .deb's headers even when the system has them)
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(ROOT, "Sources/CProfirestPQ")
HEADER = os.path.join(TARGET, "include/CProfirestPQ.h")
API = os.path.join(TARGET, "pq_api.h")
PREFIXES = [("PFQ_CONNECTION_", "CONNECTION_"), ("PFQ_PGRES_", "PGRES_"), ("PFQ_PG_DIAG_", "PG_DIAG_")]
# Each function pointer type of pq_api.h and the libpq function it holds. Enum results are ints there (see below).
FUNCTIONS = {
    "pfq_fn_lib_version": "PQlibVersion", "pfq_fn_isthreadsafe": "PQisthreadsafe",
    "pfq_fn_connectdb_params": "PQconnectdbParams", "pfq_fn_error_message": "PQerrorMessage",
    "pfq_fn_finish": "PQfinish", "pfq_fn_socket": "PQsocket", "pfq_fn_consume_input": "PQconsumeInput",
    "pfq_fn_set_notice_receiver": "PQsetNoticeReceiver", "pfq_fn_exec_params": "PQexecParams",
    "pfq_fn_result_error_field": "PQresultErrorField", "pfq_fn_ntuples": "PQntuples",
    "pfq_fn_getisnull": "PQgetisnull", "pfq_fn_getvalue": "PQgetvalue", "pfq_fn_getlength": "PQgetlength",
    "pfq_fn_clear": "PQclear", "pfq_fn_freemem": "PQfreemem",
}
# Functions whose pq_api.h type differs from libpq's only in a type it cannot name: libpq's prototype, spelled out.
EXACT = {
    "PQstatus": "ConnStatusType (*)(const PGconn *)",
    "PQresultStatus": "ExecStatusType (*)(const PGresult *)",
    "PQconninfoParse": "PQconninfoOption *(*)(const char *, char **)",
    "PQconninfoFree": "void (*)(PQconninfoOption *)",
}
MIRROR_FIELDS = ["keyword", "envvar", "compiled", "val", "label", "dispchar", "dispsize"]


def libpq_include_dir(work: str, download_only: bool) -> str:
    if not download_only:
        for candidate in ["/usr/include/postgresql", "/usr/include", *glob.glob("/usr/include/*-linux-gnu")]:
            if os.path.exists(os.path.join(candidate, "libpq-fe.h")):
                return candidate
    def download() -> subprocess.CompletedProcess:
        return subprocess.run(["apt-get", "download", "libpq-dev"], cwd=work, capture_output=True, text=True)
    result = download()
    if result.returncode != 0 and os.geteuid() == 0:
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
        result = download()
    debs = glob.glob(os.path.join(work, "libpq-dev_*.deb"))
    if not debs:
        sys.exit(f"check_pq_abi: libpq's headers are not installed and libpq-dev could not be downloaded:\n"
                 f"{result.stderr.strip()}")
    subprocess.run(["dpkg-deb", "-x", debs[0], os.path.join(work, "root")], check=True)
    found = glob.glob(os.path.join(work, "root", "usr", "include", "**", "libpq-fe.h"), recursive=True)
    if not found:
        sys.exit(f"check_pq_abi: {os.path.basename(debs[0])} has no libpq-fe.h")
    return os.path.dirname(found[0])


def program() -> tuple[str, int, int]:
    constants = re.findall(r"^#define (PFQ_\w+) (\S+)", open(HEADER).read(), re.M)
    asserts = []
    for name, _ in constants:
        theirs = next((name.replace(ours, t, 1) for ours, t in PREFIXES if name.startswith(ours)), None)
        if theirs is None:
            sys.exit(f"check_pq_abi: no libpq name for {name}")
        asserts.append(f'_Static_assert({name} == {theirs}, "{name} is not {theirs}");')
    declared = set(re.findall(r"^typedef .*?\(\*(pfq_fn_\w+)\)", open(API).read(), re.M))
    unchecked = declared - set(FUNCTIONS) - {"pfq_fn_status", "pfq_fn_result_status", "pfq_fn_conninfo_parse",
                                             "pfq_fn_conninfo_free"}
    if unchecked:
        sys.exit(f"check_pq_abi: pq_api.h declares {sorted(unchecked)}, which FUNCTIONS here does not check")
    same = "__builtin_types_compatible_p"
    for ours, theirs in FUNCTIONS.items():
        asserts.append(f'_Static_assert({same}(__typeof__(&{theirs}), {ours}), "{ours} is not the type of {theirs}");')
    for theirs, prototype in EXACT.items():
        asserts.append(f'_Static_assert({same}(__typeof__(&{theirs}), {prototype}), "{theirs} is not {prototype}");')
    asserts += [
        '_Static_assert(sizeof(ConnStatusType) == sizeof(int), "ConnStatusType is not an int");',
        '_Static_assert(sizeof(ExecStatusType) == sizeof(int), "ExecStatusType is not an int");',
        # The mirror's pointer types stand for libpq's: same arguments, results and layout.
        f'_Static_assert({same}(pfq_fn_status, int (*)(const PGconn *)), "pfq_fn_status");',
        f'_Static_assert({same}(pfq_fn_result_status, int (*)(const PGresult *)), "pfq_fn_result_status");',
        f'_Static_assert({same}(pfq_fn_conninfo_parse, pfq_conninfo_option *(*)(const char *, char **)), "parse");',
        f'_Static_assert({same}(pfq_fn_conninfo_free, void (*)(pfq_conninfo_option *)), "free");',
        '_Static_assert(sizeof(pfq_conninfo_option) == sizeof(PQconninfoOption), "PQconninfoOption\'s size");',
    ]
    for field in MIRROR_FIELDS:
        asserts.append(f'_Static_assert(offsetof(pfq_conninfo_option, {field}) == offsetof(PQconninfoOption, {field})'
                       f' && sizeof(((pfq_conninfo_option *)0)->{field}) == sizeof(((PQconninfoOption *)0)->{field}),'
                       f' "PQconninfoOption.{field}");')
    text = "\n".join(["#include <stddef.h>", "#include <libpq-fe.h>", f'#include "{HEADER}"', f'#include "{API}"',
                      *asserts, "int main(void) { return 0; }", ""])
    return text, len(constants), len(FUNCTIONS) + len(EXACT)


def main() -> int:
    text, constants, functions = program()
    work = tempfile.mkdtemp(prefix="pq-abi-")
    try:
        include = libpq_include_dir(work, "--download" in sys.argv)
        source = os.path.join(work, "check.c")
        open(source, "w").write(text)
        compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
        result = subprocess.run([compiler, "-std=gnu11", "-I", include, "-fsyntax-only", source],
                                capture_output=True, text=True)
        if result.returncode != 0:
            print(result.stderr, file=sys.stderr)
            return 1
        print(f"check_pq_abi: {constants} constants, {functions} function prototypes and PQconninfoOption's layout "
              f"match libpq's headers ({include})")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
