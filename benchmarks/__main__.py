"""Runner: ``python -m benchmarks WORKLOAD [--dataset NAME] [--json]``.

Prints one JSON object (``--json``) or a markdown table of the figures a workload measured.
``--updates adversarial`` (cc) times the hardest deletions for label propagation;
``--profile`` prints to stderr where the updates' time goes, by operator and by engine layer.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import sys

from .registry import WORKLOADS


def _peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def _updates(text: str):
    if text == "adversarial":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--updates takes a number or 'adversarial', not {text!r}") from None


def _load_kernels():
    """Load (or compile) the engine's compiled kernels before anything is timed, so no timed
    step runs on the numpy path while they compile; returns the seconds it took (``None``
    when they are off or numba is missing: ``DDLAB_KERNELS=0`` measures the numpy path)."""
    from ddlab.engine import kernels, tuning

    if not tuning.KERNELS or not kernels.available():
        return None
    return round(kernels.warm_up(), 3)


def _kernels_status() -> str:
    from ddlab.engine import kernels

    return kernels.status()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("workload", choices=sorted(WORKLOADS))
    parser.add_argument("--dataset", default=None, help="dataset name (workload default if omitted)")
    parser.add_argument("--updates", type=_updates, default=200,
                        help="single-change updates to time, or 'adversarial' (cc: delete every "
                             "edge of each component's minimum-label node)")
    parser.add_argument("--adversarial-count", type=int, default=100,
                        help="with --updates adversarial: at most this many deletions")
    parser.add_argument("--profile", action="store_true",
                        help="print (to stderr) where the updates' time goes, by operator and "
                             "by engine layer (needs pyinstrument)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sources", type=int, default=1,
                        help="sssp: number of source nodes (the largest out-degrees)")
    parser.add_argument("--variant", default=None,
                        help="algorithm variant where a workload has several (plain, prioritized)")
    parser.add_argument("--moves", type=int, default=None,
                        help="soak: window moves in the session (default 10,000)")
    parser.add_argument("--stats-epochs", type=int, default=None,
                        help="soak: Dataflow(stats_epochs=N) (default: the Dataflow default)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="kernels: fresh processes per measurement (default 3)")
    parser.add_argument("--workers", default=None,
                        help="scaling: worker counts separated by commas (default 1,2,4,8)")
    parser.add_argument("--in-flight", type=int, default=1,
                        help="(cc, scc, sssp...) updates per step, each its own epoch "
                             "(Dataflow.advance between them): epochs in flight")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    args.adversarial = args.updates == "adversarial"
    if args.adversarial:
        if args.workload != "cc":
            parser.error("--updates adversarial is defined for the cc workload")
        args.updates = args.adversarial_count
    module_name, func_name = WORKLOADS[args.workload].split(":")
    run = getattr(importlib.import_module(module_name), func_name)
    kernels_load_s = _load_kernels()
    result = dict(run(args))
    result.setdefault("kernels", _kernels_status())
    if kernels_load_s is not None:
        result.setdefault("kernels_load_s", kernels_load_s)
    result.setdefault("load_average", round(os.getloadavg()[0], 2))
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
