"""tools/perf_stages.py: each CPU sample is charged to the first library type on its call chain, leaf upward."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import perf_stages  # noqa: E402

SCRIPT = """\
 2632  3123.100000: 
\t7f00 swift_retain (/opt/swift/usr/lib/swift/linux/libswiftCore.so)
\t5a00 $s12ProfirestAPI9JSONValueO4fromACs7Decoder_p_tKcfC (/work/ProfirestBench)
\t5b00 $s12ProfirestAPI5EventV4fromACs7Decoder_p_tKcfC (/work/ProfirestBench)

 2633  3124.200000: 
\t1000 Curl_multi_wait (/usr/lib/x86_64-linux-gnu/libcurl.so.4.8.0)
\t2000 start_thread (/usr/lib/x86_64-linux-gnu/libc.so.6)

 2632  3130.500000: 
\tffff finish_task_switch.isra.0 ([kernel.kallsyms])

 2632  3131.000000: 
\t3000 malloc (/usr/lib/x86_64-linux-gnu/libc.so.6)
"""


def test_samples_are_charged_to_the_first_library_type_or_where_they_ran():
    total, counted = perf_stages.split(SCRIPT.splitlines(keepends=True))
    assert total == 4
    assert counted == {"JSONValue": 1, "(libcurl, no library frame)": 1,
                       "(kernel: finish_task_switch.isra.0)": 1, "(libc.so.6)": 1}


def test_a_window_counts_from_the_first_sample():
    total, counted = perf_stages.split(SCRIPT.splitlines(keepends=True), start=1, end=7.5)
    assert total == 2
    assert set(counted) == {"(libcurl, no library frame)", "(kernel: finish_task_switch.isra.0)"}
