#!/usr/bin/env python3
"""Draws benchmarks/results/latest.json as benchmarks/results/figures.png: each figure that has a target, as a
fraction of its target (1.0 = exactly on target; a bar past the line misses it), coloured by met or missed.

Usage: .venv/bin/python benchmarks/chart.py [latest.json] [figures.png]   (make chart; make bench runs it)
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# (key or key/subkey, label, target, lower is better). Kept in step with BENCHMARKS.md.
FIGURES = [
    ("get_sequential_ratio", "GET sequential ÷ raw URLSession", 1.05, True),
    ("get_concurrent_ratio", "GET 64 in flight ÷ raw URLSession", 1.05, True),
    ("post_sequential_ratio", "POST sequential ÷ raw URLSession keep-alive", 1.05, True),
    ("post_concurrent_ratio", "POST 64 in flight ÷ raw URLSession keep-alive", 1.05, True),
    ("get_sequential_ratio_vs_curl", "GET sequential ÷ libcurl driven directly", 1.1, True),
    ("get_concurrent_ratio_vs_curl", "GET 64 in flight ÷ libcurl driven directly", 1.1, True),
    ("post_sequential_ratio_vs_curl", "POST sequential ÷ libcurl driven directly", 1.1, True),
    ("net50_get_after_idle_ratio_h2", "+50 ms, HTTP/2: GET after 2 s idle ÷ raw URLSession", 1.0, True),
    ("net50_get_after_idle_ratio_h1", "+50 ms, HTTP/1.1: GET after 2 s idle ÷ raw URLSession", 1.0, True),
    ("net50_post_sequential_ratio_h2", "+50 ms, HTTP/2: sequential POSTs ÷ raw URLSession", 1.0, True),
    ("net50_post_sequential_ratio_h1", "+50 ms, HTTP/1.1: sequential POSTs ÷ raw URLSession", 1.0, True),
    ("net50_post_concurrent_ratio_h2", "+50 ms, HTTP/2: 64 POSTs in flight ÷ raw URLSession", 1.0, True),
    ("net50_post_concurrent_ratio_h1", "+50 ms, HTTP/1.1: 64 POSTs in flight ÷ raw URLSession", 1.0, True),
    ("paging_ratio", "all() over 100 000 items ÷ raw URLSession", 1.1, True),
    ("stampede_time_ratio", "1 000 requests on an expired token ÷ valid", 1.1, True),
    ("sse_latency_p99_ms/1000", "event stream p99 at 1 000/s (ms)", 20, True),
    ("sse_events_per_second", "event stream, events/s (higher is better)", 20_000, False),
    ("sse_rss_growth_mb", "memory growth over 1 000 000 events (MB)", 5, True),
    ("sse_flood_rss_growth_mb", "memory growth over 1 000 000 events flat out (MB)", 10, True),
    ("sse_idle_cpu_percent", "CPU holding 1, then 100 quiet event streams (% of a core)", 1, True),
    ("partner_rss_per_connection_kb", "1 000 restaurants in one process: memory a connection (KB)", 64, True),
    ("partner_threads", "1 000 restaurants: threads of the process", 32, True),
    ("partner_idle_cpu_percent", "1 000 restaurants, feeds quiet: CPU (% of a core)", 2, True),
    ("partner_event_p99_ms", "1 000 restaurants at 1 event/s each: p99 (ms)", 100, True),
    ("partner_tcp_connections", "1 000 restaurants through nginx, HTTP/2: TCP connections", 4, True),
    ("outbox_enqueue_ms_p50", "outbox: a write journaled, p50 (ms, with its fsync)", 1, True),
    ("outbox_drain_10000_seconds", "outbox: 10 000 waiting writes delivered (s)", 15, True),
    ("outbox_journal_max_mb", "outbox: the journal's largest size (MB; target: its bound)", 4.8839, True),
    ("library_clean_build_seconds", "clean release build of the library (s)", 90, True),
]


def value(results, key):
    for part in key.split("/"):
        if not isinstance(results, dict) or part not in results:
            return None
        results = results[part]
    return results if isinstance(results, (int, float)) else None


def main():
    source = sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results/latest.json"
    target_png = sys.argv[2] if len(sys.argv) > 2 else "benchmarks/results/figures.png"
    with open(source, encoding="utf-8") as f:
        results = json.load(f)
    rows = []
    for key, label, target, lower in FIGURES:
        v = value(results, key)
        if v is None:
            continue
        # As a fraction of the target, oriented so that below 1 is always good.
        fraction = v / target if lower else target / v
        shown = f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"
        rows.append((f"{label}: {shown} (target {'≤' if lower else '≥'} {target:,})", fraction, fraction <= 1))
    if not rows:
        sys.exit(f"no figures with targets in {source}")
    rows.reverse()
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(rows) + 1.6))
    ax.barh([r[0] for r in rows], [min(r[1], 2.0) for r in rows],
            color=["#3a7d44" if r[2] else "#c0392b" for r in rows])
    for i, (_, fraction, _) in enumerate(rows):
        ax.text(min(fraction, 2.0) + 0.02, i, f"{fraction:.2f}", va="center", fontsize=8)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xlim(0, 2.2)
    ax.set_xlabel("figure ÷ target (for events/s: target ÷ figure) — left of the line: met")
    machine = results.get("bench_machine", {})
    transport = machine.get("default_transport", "?").split(" (")[0]
    ax.set_title(f"make bench — {machine.get('date', '?')}, load {machine.get('load_average_at_start', ['?'])[0]} at start\n"
                 f"{machine.get('cores', '?')} × {machine.get('cpu', '?')}; the library's default transport: {transport}",
                 fontsize=9)
    ax.tick_params(axis="y", labelsize=8)
    fig.tight_layout()
    fig.savefig(target_png, dpi=110)
    print(f"wrote {target_png}")


if __name__ == "__main__":
    main()
