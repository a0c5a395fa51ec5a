"""Runner: ``python -m benchmarks WORKLOAD [--dataset NAME] [--json]``.

Prints one JSON object (``--json``) or a markdown table of the figures a workload measured.
"""
from __future__ import annotations

import argparse
import importlib
import json
import resource
import sys

from .registry import WORKLOADS


def _peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("workload", choices=sorted(WORKLOADS))
    parser.add_argument("--dataset", default=None, help="dataset name (workload default if omitted)")
    parser.add_argument("--updates", type=int, default=200, help="single-change updates to time")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sources", type=int, default=1,
                        help="sssp: number of source nodes (the largest out-degrees)")
    parser.add_argument("--variant", default=None,
                        help="algorithm variant where a workload has several (plain, prioritized)")
    parser.add_argument("--moves", type=int, default=None,
                        help="soak: window moves in the session (default 10,000)")
    parser.add_argument("--stats-epochs", type=int, default=None,
                        help="soak: Dataflow(stats_epochs=N) (default: the Dataflow default)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    module_name, func_name = WORKLOADS[args.workload].split(":")
    run = getattr(importlib.import_module(module_name), func_name)
    result = dict(run(args))
    result.setdefault("workload", args.workload)
    result.setdefault("peak_rss_mb", _peak_rss_mb())
    if args.json:
        print(json.dumps(result, default=float))
    else:
        print("| figure | value |\n|---|---|")
        for key, value in result.items():
            print(f"| {key} | {value} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
