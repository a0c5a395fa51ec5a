"""Workload ``soak``: a long slider session - 10,000 window moves (forward, backward and jumps)
through :class:`ddlab.sources.WindowFeed` over Spark's ``window_batches``, on connected
components plus per-node degrees.

``python -m benchmarks soak --dataset collegemsg --json`` (7-day window, 1-day steps) or
``--dataset twitter24h`` (1-hour window, 1-minute steps).  ``--moves N`` changes the length.

What "flat" means here, and how it is measured:

- ``state_ratio``: retained updates (``flow.retained_updates()``) after the last move over
  after move 1,000.  Both of those moves are a jump to the same reference window (the middle
  position), so the live data are identical and any difference is leaked history.
- ``memory_ratio``: the process's resident memory (``/proc/self/statm``, after a garbage
  collection; the JVM is another process) at the same two points.
- ``latency_ratio``: median move latency of the last 1,000 moves over that of the first 1,000
  (each move is a feed call: staging the batch plus the engine's step), in this process's CPU
  time, so other work on a shared machine does not skew it (``wall_latency_ratio`` is the
  same in wall-clock time).
- ``work_ratio``: the same ratio of the rows each move reads and pairs (``history_rows`` +
  ``matched_pairs`` of ``flow.work_done()``), machine-independent.  The two halves of the walk
  do not visit the same windows (CollegeMsg's windows differ in size several-fold), so
  ``latency_ratio`` and ``work_ratio`` also measure where the walk went;
  ``matched_latency_ratio`` and ``matched_work_ratio`` compare like with like: per (position,
  direction) visited at least twice in each half, the last 1,000's median over the first
  1,000's, averaged geometrically weighted by visits.  A runtime that grows with the epochs
  shows there; a walk into bigger windows does not (NOTES.md, issue 48).

``--stats-epochs N`` sets ``Dataflow(stats_epochs=N)``: statistics are kept per epoch for the
last N epochs by design (the data of the live plots), so with the default (10,000) memory grows
until move 10,000 by the statistics alone; the figures in RESULTS.md say which was used.

The mix of moves is random but seeded: 45% forward, 45% backward (by one position; at an end
the move turns around), 10% jumps to a uniformly drawn position (one combined epoch).
"""
from __future__ import annotations

import gc
from time import perf_counter, process_time

import numpy as np

from .rss import resident_mb

WINDOWS = {"twitter24h": ("1h", "1min"), "collegemsg": ("7d", "1d")}
CHECK_AT = 1_000


def run(args) -> dict:
    dataset = (getattr(args, "dataset", None) or "collegemsg").lower()
    if dataset not in WINDOWS:
        raise SystemExit(f"soak: dataset must be one of {sorted(WINDOWS)}, not {dataset!r}")
    moves = int(getattr(args, "moves", None) or 10_000)
    if moves < 2 * CHECK_AT:
        raise SystemExit(f"soak: --moves must be at least {2 * CHECK_AT:,} (the session's first "
                         f"{CHECK_AT:,} moves are compared with its last {CHECK_AT:,}), "
                         f"not {moves:,}")
    width, step = WINDOWS[dataset]

    import ddlab
    from ddlab.algorithms import connected_components
    from ddlab.sources import WindowFeed, get_spark, load_dataset, window_batches

    t0 = perf_counter()
    get_spark()
    batches = window_batches(load_dataset(dataset), width, step)
    batches.prefetch()  # every batch in memory before the session starts: RSS then is its base
    load_s = perf_counter() - t0

    stats_epochs = getattr(args, "stats_epochs", None)
    flow = ddlab.Dataflow("soak", **({} if stats_epochs is None else
                                     {"stats_epochs": stats_epochs}))
    edges = flow.input("edges", columns=["src", "dst"])
    labels = connected_components(edges).view()
    degrees = edges.project(0).count().view()
    feed = WindowFeed(batches, edges, flow)
    reference = batches.steps // 2

    rng = np.random.default_rng(getattr(args, "seed", 0) or 0)
    latencies = np.zeros(moves)
    wall = np.zeros(moves)
    rows = np.zeros(moves)  # history rows + matched pairs of each move
    where = np.zeros((moves, 2), dtype=np.int64)  # (position after, direction) of each move
    kinds = {"forward": 0, "backward": 0, "jump": 0}
    checks = {}
    for m in range(1, moves + 1):
        r = rng.random()
        if m in (CHECK_AT, moves):
            kind, target = "jump", reference
        elif r < 0.10:
            kind, target = "jump", int(rng.integers(-1, batches.steps))
        elif r < 0.55:
            kind = "forward" if not feed.at_end else "backward"
            target = None
        else:
            kind = "backward" if feed.position >= 0 else "forward"
            target = None
        before, was = flow.work_done(), feed.position
        start, cpu = perf_counter(), process_time()
        if kind == "jump":
            feed.seek(target, combine=True)
        elif kind == "forward":
            feed.forward()
        else:
            feed.backward()
        latencies[m - 1] = process_time() - cpu
        wall[m - 1] = perf_counter() - start
        after = flow.work_done()
        rows[m - 1] = sum(after[k] - before[k] for k in ("history_rows", "matched_pairs"))
        where[m - 1] = feed.position, np.sign(feed.position - was)
        kinds[kind] += 1
        if m in (CHECK_AT, moves):
            gc.collect()
            checks[m] = {"retained": flow.retained_updates(), "rss_mb": resident_mb(),
                         "labels": len(labels), "degrees": len(degrees)}
    first, last = checks[CHECK_AT], checks[moves]
    assert (first["labels"], first["degrees"]) == (last["labels"], last["degrees"]), \
        "the reference window must read the same at both checks"
    head = float(np.median(latencies[:CHECK_AT]))
    tail = float(np.median(latencies[-CHECK_AT:]))
    wall_ratio = float(np.median(wall[-CHECK_AT:]) / np.median(wall[:CHECK_AT]))
    return {
        "workload": "soak", "dataset": dataset, "window": width, "step": step,
        "positions": batches.steps, "moves": moves, **{f"{k}_moves": v for k, v in kinds.items()},
        "epochs": flow.epoch, "load_and_window_s": round(load_s, 2),
        "stats_epochs": flow.stats_epochs,
        "session_s": round(float(wall.sum()), 2), "session_cpu_s": round(float(latencies.sum()), 2),
        "retained_after_1000": first["retained"], "retained_after_last": last["retained"],
        "state_ratio": round(last["retained"] / first["retained"], 3),
        "rss_mb_after_1000": round(first["rss_mb"], 1), "rss_mb_after_last": round(last["rss_mb"], 1),
        "memory_ratio": round(last["rss_mb"] / first["rss_mb"], 3),
        "first_1000_median_ms": round(head * 1000, 3), "last_1000_median_ms": round(tail * 1000, 3),
        "latency_ratio": round(tail / head, 3), "wall_latency_ratio": round(wall_ratio, 3),
        "work_ratio": round(float(np.median(rows[-CHECK_AT:]) / max(np.median(rows[:CHECK_AT]), 1)), 3),
        "matched_latency_ratio": round(matched_ratio(latencies, where), 3),
        "matched_work_ratio": round(matched_ratio(rows, where), 3),
        "p99_ms": round(float(np.percentile(latencies, 99)) * 1000, 3),
        "reference_position": reference, "components_at_reference": last["labels"],
    }


def matched_ratio(values: np.ndarray, where: np.ndarray) -> float:
    """The last :data:`CHECK_AT` moves' ``values`` over the first's, compared at equal
    (position, direction): per pair visited at least twice in each, the ratio of the medians,
    then their geometric mean weighted by visits (``nan`` when no pair qualifies)."""
    head, tail = slice(0, CHECK_AT), slice(len(values) - CHECK_AT, len(values))
    logs, weights = [], []
    for key in {tuple(k) for k in where[head].tolist()} & {tuple(k) for k in where[tail].tolist()}:
        a = values[head][(where[head] == key).all(axis=1)]
        b = values[tail][(where[tail] == key).all(axis=1)]
        if len(a) >= 2 and len(b) >= 2 and np.median(a) > 0 and np.median(b) > 0:
            logs.append(np.log(np.median(b) / np.median(a)))
            weights.append(len(a) + len(b))
    return float(np.exp(np.average(logs, weights=weights))) if logs else float("nan")
