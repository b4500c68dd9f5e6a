#!/usr/bin/env python3
"""Splits a process's CPU samples by the library type that spent them: where a benchmark's CPU goes, stage by stage.

Input is `perf script -F tid,time,ip,sym,dso` output of a `perf record -e cpu-clock -g` run (Debian's linux-perf; the
software clock works where hardware counters do not). Each sample is charged to the first ProfirestAPI type on its
call chain, leaf upward (`$s12ProfirestAPI<n><Type>` in the mangled name: a JSONValue decode, a state document
written, the engine's loop); a sample with no library frame is charged to the library it ran in (libcurl alone, the
concurrency runtime switching tasks, malloc in libc) or to the kernel function it was in.

    perf record -e cpu-clock -F 499 -g -o partner.data -- ProfirestBench --only partner
    perf script -i partner.data --pid <child> -F tid,time,ip,sym,dso > partner.script
    tools/perf_stages.py partner.script --from 15 --to 35
"""
import argparse
import collections
import re
import sys

HEADER = re.compile(r"\s*\d+\s+(\d+\.\d+):")
TYPE = re.compile(r"\$s12ProfirestAPI(\d+)")


def samples(lines):
    """Each sample as (seconds, [frames leaf first]), a frame being `symbol (dso)`."""
    current = None
    for line in lines:
        header = HEADER.match(line)
        if header:
            if current:
                yield current
            current = (float(header.group(1)), [])
        elif line.strip() and current is not None:
            parts = line.strip().split(" ", 1)
            if len(parts) == 2:
                current[1].append(parts[1])
    if current:
        yield current


def library_type(frame: str):
    match = TYPE.search(frame)
    if not match:
        return None
    start = match.end()
    return frame[start:start + int(match.group(1))]


def dso(frame: str) -> str:
    return frame.rsplit("(", 1)[-1].rstrip(")").split("/")[-1]


def stage(frames) -> str:
    for frame in frames:
        name = library_type(frame)
        if name:
            return name
    if any("libcurl" in frame for frame in frames):
        return "(libcurl, no library frame)"
    leaf = frames[0] if frames else "? (?)"
    if dso(leaf) == "[kernel.kallsyms]":
        return "(kernel: " + leaf.split(" ")[0] + ")"
    return "(" + dso(leaf) + ")"


def split(lines, start=None, end=None):
    """(samples in the window, Counter of stage -> samples)."""
    counted, first = collections.Counter(), None
    total = 0
    for seconds, frames in samples(lines):
        first = seconds if first is None else first
        offset = seconds - first
        if (start is not None and offset < start) or (end is not None and offset >= end):
            continue
        total += 1
        counted[stage(frames)] += 1
    return total, counted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script", help="perf script output (- for stdin)")
    parser.add_argument("--from", dest="start", type=float, help="seconds after the first sample")
    parser.add_argument("--to", dest="end", type=float, help="seconds after the first sample")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    source = sys.stdin if args.script == "-" else open(args.script, encoding="utf-8", errors="replace")
    total, counted = split(source, args.start, args.end)
    print(f"{total} samples")
    for name, count in counted.most_common(args.top):
        print(f"{count:7d} {100 * count / max(total, 1):5.1f} %  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
