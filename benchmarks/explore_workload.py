"""``explore``: the Naiad demo in the explorer, end to end.

A 1-hour window over Twitter 24h slides in 1-minute steps; the explorer shows SCC with the top
label (mention or retweet) per component, the per-iteration differences, the lattice trace
and the latency plots.  1,000 moves in mixed directions (runs forward and backward, as a hand
on the slider or Play in both directions would make), each timed from setting the slider's
value until every panel and plot has handed its comm messages over (a recording comm stands
in for the kernel's, so the messages are built and serialized as in a notebook).

Figures: ``move_median_ms``, ``move_p99_ms`` (targets 40 and 120), ``payload_kb`` (the largest
move's comm payload; target 20), ``memory_ratio`` (process RSS after 1,000 moves over after
100; target 1.2), plus the engine's share and a few far jumps for reference.
"""
from __future__ import annotations

import gc
import json
import os
import time

import numpy as np


class _Recorder:
    """Bytes handed to the front end, summed over comm messages since the last reset."""

    def __init__(self):
        self.bytes = 0
        self.messages = 0


def _recording_comms(recorder: _Recorder):
    """Make every widget comm measure its messages (JSON text plus binary buffers)."""
    import comm
    from comm.base_comm import BaseComm

    class RecordingComm(BaseComm):
        def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
            recorder.messages += 1
            recorder.bytes += len(json.dumps(data or {}, default=str))
            for buf in buffers or ():
                recorder.bytes += memoryview(buf).nbytes

    comm.create_comm = lambda *a, **k: RecordingComm(*a, **k)


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _moves(n: int, steps: int, start: int, seed: int) -> list[int]:
    """Targets of ``n`` one-step moves in runs of random length and direction (forward runs a
    bit more likely), staying inside the positions."""
    rng = np.random.default_rng(seed)
    out, pos = [], start
    while len(out) < n:
        direction = 1 if rng.random() < 0.6 else -1
        for _ in range(int(rng.integers(1, 25))):
            nxt = pos + direction
            if not 0 <= nxt < steps:
                break
            pos = nxt
            out.append(pos)
            if len(out) == n:
                break
    return out


def run(args):
    from ddlab.sources import get_spark, load_dataset, window_batches

    dataset = args.dataset or "twitter24h"
    if dataset not in ("twitter24h", "collegemsg"):
        raise SystemExit("explore: --dataset twitter24h (the Naiad demo) or collegemsg")
    width, step = ("1h", "1min") if dataset == "twitter24h" else ("7d", "1d")
    n_moves = max(args.updates, 1000) if args.updates != 200 else 1000
    recorder = _Recorder()
    _recording_comms(recorder)
    from ddlab.widgets import explore_graph

    get_spark()
    t0 = time.perf_counter()
    kwargs = {"with_type": True} if dataset == "twitter24h" else {}
    batches = window_batches(load_dataset(dataset, **kwargs), width, step)
    batches.prefetch()
    load_s = time.perf_counter() - t0
    ex = explore_graph(batches, "scc", reference_at_start=False)
    start = min(60, batches.steps - 1)
    ex.slider.value = start
    targets = _moves(n_moves, batches.steps, start, args.seed)
    times, engine, payload = [], [], []
    rss = {}
    gc.collect()
    for i, target in enumerate(targets, 1):
        recorder.bytes = 0
        t = time.perf_counter()
        ex.slider.value = target
        times.append((time.perf_counter() - t) * 1000)
        payload.append(recorder.bytes)
        engine.append(ex.last_move["engine_s"] * 1000)
        assert ex.position == target, ex.status.value
        if i in (100, n_moves):
            gc.collect()
            rss[i] = _rss_mb()
    jumps = []
    rng = np.random.default_rng(args.seed + 1)
    for target in rng.integers(0, batches.steps, 10):
        t = time.perf_counter()
        ex.slider.value = int(target)
        jumps.append((time.perf_counter() - t) * 1000)
    lat = np.array(times)
    forward = sum(1 for a, b in zip([start] + targets, targets) if b > a)
    return {
        "workload": "explore", "dataset": dataset, "window": width, "step": step,
        "positions": batches.steps, "moves": n_moves, "forward_moves": forward,
        "backward_moves": n_moves - forward, "load_and_window_s": round(load_s, 1),
        "move_median_ms": round(float(np.median(lat)), 2),
        "move_p99_ms": round(float(np.percentile(lat, 99)), 2),
        "engine_median_ms": round(float(np.median(engine)), 2),
        "widgets_median_ms": round(float(np.median(lat - np.array(engine))), 2),
        "payload_kb": round(max(payload) / 1024, 2),
        "payload_median_kb": round(float(np.median(payload)) / 1024, 2),
        "memory_ratio": round(rss[n_moves] / rss[100], 3),
        "rss_after_100_mb": round(rss[100], 1), "rss_after_all_mb": round(rss[n_moves], 1),
        "jump_median_ms": round(float(np.median(jumps)), 1),
        "loop": ex.loop,
    }
