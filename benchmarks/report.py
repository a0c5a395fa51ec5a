"""Run the benchmark suite and write ``benchmarks/RESULTS.md``.

``python -m benchmarks.report [--quick]``: each run is its own process (so peak memory is that
run's), its JSON is kept in ``benchmarks/results.json``, and the markdown table is rebuilt from
it.  ``--only WORKLOAD`` reruns some rows and keeps the others' last figures.
"""
from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (workload, dataset, variant, target note)
SUITE = [
    ("cc", "collegemsg", "auto", "update <= 0.25x scipy's recompute (issues 13, 22)"),
    ("cc", "collegemsg", "plain", "from scratch < 2 s; update < 20 ms median"),
    ("cc", "collegemsg", "prioritized", ""),
    ("cc", "random-400k-3.4m", "auto", "issue 22: from scratch <= 10x scipy, <= 1.5 GB; "
                                       "update <= 0.001x scipy, p99 <= 5x the median"),
    ("cc", "random-400k-3.4m", "prioritized", "<= 20 s; <= 5 ms (p99 <= 50 ms); <= 4 GB"),
    ("cc", "random-400k-3.4m", "plain", ""),
    ("cc", "random-100k-500k", "auto", "report"),
    ("cc", "random-100k-500k", "auto", "max <= 10x scipy's recompute (issue 13)",
     ["--updates", "adversarial"]),
    ("cc", "random-100k-500k", "plain", "report", ["--updates", "adversarial"]),
    ("cc", "random-100k-500k", "prioritized", "report", ["--updates", "adversarial"]),
    ("cc", "travian", "auto", "report; <= 5 ms"),
    ("cc", "travian", "prioritized", "report; <= 5 ms"),
    ("cc", "travian", "plain", "report; <= 5 ms"),
    ("scc", "random-1m-200k", None, "<= 10 s; <= 5 ms; update <= 0.03x scipy (issue 22)"),
    ("scc", "random-1m-2m", None, "<= 90 s; <= 20 ms"),
    ("sssp", "random-1m-1m", "plain", "<= 10 s; <= 2 ms"),
    ("sssp", "random-1m-1m", "prioritized", ""),
    ("sssp", "random-1m-1m", "plain", "1,000 sources", ["--sources", "1000"]),
    ("window-scc", "twitter24h", None, "one step <= 10x scipy's SCC of the window "
                                       "(issue 22); growth <= 1.5"),
    ("figure1", "twitter24h", None, "slide <= 0.1% of prioritized full run"),
    ("spark-windows", "twitter24h", None, "load + window < 60 s; deliver < 5 ms median"),
    ("explore", "twitter24h", None, "move <= 40 ms median, <= 120 ms p99; the explorer's own "
                                    "cost (move minus engine) <= 2 ms (issue 22); <= 20 kB"),
    ("explore", "collegemsg", None, "the demo's default: move <= 100 ms median, <= 300 ms p99 "
                                    "end to end, Play's interval above the p99 (issue 18)"),
    ("demo-start", "collegemsg", None, "Run All to explorer visible <= 15 s (issue 18)"),
    ("why", "twitter24h", "default", "why of a component label <= 100 ms median (issue 21)"),
    ("why", "twitter24h", "without", "memory without the input-change retention"),
    ("why", "random-100k-500k", "default", "report (issue 21)"),
    ("why", "random-100k-500k", "without", "memory without the input-change retention"),
]
NAIAD = {  # Naiad report, Table 2, single-threaded: (from scratch, per update)
    ("sssp", "random-1m-1m"): "4.71 s; 0.25 ms",
    ("scc", "random-1m-200k"): "4.36 s; 1.12 ms",
    ("scc", "random-1m-2m"): "51.84 s; 8.79 ms",
    ("cc", "random-400k-3.4m"): "9.90 s; 0.49 ms",
}


def _key(row):
    extra = " ".join(row[4]) if len(row) > 4 else ""
    return f"{row[0]}|{row[1]}|{row[2] or ''}" + (f"|{extra}" if extra else "")


def run(only=None, updates=200, match=None):
    store = HERE / "results.json"
    results = json.loads(store.read_text()) if store.exists() else {}
    for row in SUITE:
        workload, dataset, variant, _ = row[:4]
        if only and workload not in only:
            continue
        if match and not any(m in _key(row) for m in match):
            continue
        cmd = [sys.executable, "-m", "benchmarks", workload, "--dataset", dataset, "--json",
               "--updates", str(updates)]
        if variant:
            cmd += ["--variant", variant]
        cmd += list(row[4]) if len(row) > 4 else []
        print("running", " ".join(cmd[2:]), flush=True)
        start = time.time()
        proc = subprocess.run(cmd, cwd=HERE.parent, capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr[-2000:], file=sys.stderr)
            results[_key(row)] = {"error": proc.stderr.strip().splitlines()[-1:]}
        else:
            results[_key(row)] = json.loads(proc.stdout.strip().splitlines()[-1])
        results[_key(row)]["wall_s"] = round(time.time() - start, 1)
        store.write_text(json.dumps(results, indent=1, default=str))
    write_markdown(results)


def _fmt(value, unit=""):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.3g}{unit}" if value < 100 else f"{value:,.0f}{unit}"
    return f"{value}{unit}"


def write_markdown(results):
    lines = [
        "# Benchmark results",
        "",
        f"Machine: {platform.processor() or platform.machine()}, 2 cores, 24 GiB "
        f"(the project's standard machine), Python {platform.python_version()}, "
        f"single-threaded engine. Regenerate with `python -m benchmarks.report`; every row "
        f"is one run of `python -m benchmarks WORKLOAD --dataset NAME --json` in its own "
        f"process, baselines measured in the same run on the same final graph.",
        "",
        "Updates: 200 single-edge changes (half insertions of new edges, half deletions of "
        "existing ones), each its own epoch, timed from the call that pushes the change to the "
        "delivery of its output changes to a subscriber. networkx: one from-scratch "
        "recomputation on the final graph (what each change costs without an incremental "
        "engine); speedup = networkx recompute / ddlab median update.",
        "",
        "| workload | data | variant | edges | from scratch | update median | update p99 | "
        "peak RSS | networkx recompute | speedup vs networkx | scipy | other | Naiad (Table 2) | target |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in SUITE:
        workload, dataset, variant, target = row[:4]
        if len(row) > 4:
            variant = f"{variant} {' '.join(row[4])}"
        r = results.get(_key(row))
        if r is None:
            continue
        if "error" in r:
            lines.append(f"| {workload} | {dataset} | {variant or ''} | | error: {r['error']} "
                         f"| | | | | | | | | {target} |")
            continue
        other = []
        for k in ("update_median_cpu_ms", "update_vs_scipy", "initial_vs_scipy", "initial_peak_rss_mb",
                  "engine_peak_mb",
                  "adversarial_max_ms",
                  "adversarial_max_vs_scipy", "choice", "matches_networkx", "sources", "reached",
                  "state_growth", "slide_work_fraction", "load_and_window_s",
                  "deliver_median_ms", "steps", "retained_updates", "move_median_ms",
                  "move_p99_ms", "move_cpu_median_ms", "move_cpu_p99_ms", "engine_median_ms",
                  "widgets_median_ms", "play_interval_ms", "interval_above_p99",
                  "work_median_records", "work_vs_stateless_median", "settle_median_ms",
                  "payload_kb", "memory_ratio", "cold_s", "warm_s", "load_average",
                  "why_median_ms", "why_p90_ms", "why_unchecked_median_ms",
                  "explanation_edges_median", "path_equals_bfs_distance", "why_loop_ms",
                  "why_loop_agrees", "why_cost_ms", "why_cost_adds_up", "from_scratch_s",
                  "rss_after_setup_mb", "rss_after_queries_mb", "rss_after_why_loop_mb",
                  "retained_input_kb", "skipped"):
            if k in r:
                other.append(f"{k}={r[k]}")
        lines.append(
            f"| {workload} | {dataset} | {variant or ''} | {_fmt(r.get('edges'))} | "
            f"{_fmt(r.get('initial_s'), ' s')} | {_fmt(r.get('update_median_ms'), ' ms')} | "
            f"{_fmt(r.get('update_p99_ms'), ' ms')} | {_fmt(r.get('peak_rss_mb'), ' MB')} | "
            f"{_fmt(r.get('networkx_recompute_s'), ' s')} | {_fmt(r.get('speedup_vs_networkx'), 'x')} | "
            f"{_fmt(r.get('scipy_s'), ' s')} | {'; '.join(other)} | "
            f"{NAIAD.get((workload, dataset), '')} | {target} |")
    notes = HERE / "NOTES.md"
    if notes.exists():
        lines += ["", notes.read_text().strip()]
    (HERE / "RESULTS.md").write_text("\n".join(lines) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report")
    parser.add_argument("--only", nargs="*", help="workloads to rerun")
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--match", nargs="*", help="rerun the rows whose key "
                        "(workload|dataset|variant|args) contains one of these")
    parser.add_argument("--markdown-only", action="store_true")
    args = parser.parse_args(argv)
    if args.markdown_only:
        write_markdown(json.loads((HERE / "results.json").read_text()))
    else:
        run(args.only, args.updates, args.match)


if __name__ == "__main__":
    main()
