"""``explore`` and ``demo-start``: the demo's explorer, end to end.

``explore`` (default ``--dataset collegemsg``: the demo's default configuration, a 7-day window
moving one hour per step, from the demo's first position; ``twitter24h``: the Naiad setting,
a 1-hour window of @mentions moving one minute per step; ``travian``: the labelled variant).
1,000 moves in mixed directions (runs forward and backward, as a hand on the slider or Play
in both directions would make), each timed from setting the slider's value until every panel
and plot has handed its comm messages over (a recording comm stands in for the kernel's, so
the messages are built and serialized as in a notebook).  Then the window is let settle at 20
positions and the reference lines are computed (what the explorer does when Play stops or no
move comes for ``settle_ms``): their time, and this move's work against them.

Figures: ``move_median_ms``, ``move_p99_ms`` (targets 100 and 300 on the demo's default;
Play's default interval must be above the p99), ``move_cpu_median_ms`` (this process's CPU:
the figure least moved by other load), ``payload_kb`` (largest move's comm payload),
``memory_ratio`` (RSS after 1,000 moves over after 100), ``settle_median_ms`` and
``work_vs_stateless_median`` (a move's records in difference over the stateless line's, same
window), plus the engine's share and a few far jumps.

``demo-start``: what "Run All" on a fresh kernel costs before the explorer is there, by phase,
in three fresh processes: with an empty window cache and no JVM class archive (a machine's
first run: Spark starts, loads, windows), with an empty window cache and the archive (the
first demo after any earlier Spark start on the machine), and with the cache filled.
"""
from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from .rss import resident_mb


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
    from ddlab.widgets.naiad import DEMO_DATA, demo_windows

    dataset = args.dataset or "collegemsg"
    if dataset not in DEMO_DATA:
        raise SystemExit(f"explore: --dataset one of {', '.join(DEMO_DATA)} (the demo's data)")
    spec = DEMO_DATA[dataset]
    n_moves = max(args.updates, 1000) if args.updates != 200 else 1000
    recorder = _Recorder()
    _recording_comms(recorder)
    from ddlab.sources import get_spark
    from ddlab.widgets import explore_graph

    get_spark()
    t0 = time.perf_counter()
    batches = demo_windows(dataset, cache=False)
    load_s = time.perf_counter() - t0
    ex = explore_graph(batches, "scc", start=spec.position - 1, references_at_start=False,
                       settle_ms=None, label_name=spec.label_name)
    start = spec.position
    ex.slider.value = start
    targets = _moves(n_moves, batches.steps, start, args.seed)
    times, cpu, engine, payload, work = [], [], [], [], []
    rss = {}
    gc.collect()
    for i, target in enumerate(targets, 1):
        recorder.bytes = 0
        t, c = time.perf_counter(), time.process_time()
        ex.slider.value = target
        times.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        payload.append(recorder.bytes)
        engine.append(ex.last_move["engine_s"] * 1000)
        work.append(ex.last_move["work"])
        assert ex.position == target, ex.status.value
        if i in (100, n_moves):
            gc.collect()
            rss[i] = resident_mb()
    # the window settles: reference lines of the current window, and this move's share
    settle, fraction = [], []
    rng = np.random.default_rng(args.seed + 2)
    for target in rng.choice(sorted(set(targets)), size=min(20, len(set(targets))), replace=False):
        ex.slider.value = int(target) - 1 if target > 0 else 1
        ex.slider.value = int(target)
        t = time.perf_counter()
        refs = ex.settle()
        settle.append((time.perf_counter() - t) * 1000)
        stateless = refs.totals(ex.loop)["stateless"]
        fraction.append(ex.last_move["work"] / stateless if stateless else 0.0)
    jumps = []
    rng = np.random.default_rng(args.seed + 1)
    for target in rng.integers(0, batches.steps, 10):
        t = time.perf_counter()
        ex.slider.value = int(target)
        jumps.append((time.perf_counter() - t) * 1000)
    lat = np.array(times)
    forward = sum(1 for a, b in zip([start] + targets, targets) if b > a)
    p99 = float(np.percentile(lat, 99))
    return {
        "workload": "explore", "dataset": dataset, "window": spec.width, "step": spec.step,
        "start": start, "positions": batches.steps, "moves": n_moves, "forward_moves": forward,
        "backward_moves": n_moves - forward, "load_and_window_s": round(load_s, 1),
        "move_median_ms": round(float(np.median(lat)), 2),
        "move_p99_ms": round(p99, 2),
        "move_cpu_median_ms": round(float(np.median(cpu)), 2),
        "move_cpu_p99_ms": round(float(np.percentile(cpu, 99)), 2),
        "engine_median_ms": round(float(np.median(engine)), 2),
        "widgets_median_ms": round(float(np.median(lat - np.array(engine))), 2),
        "play_interval_ms": spec.interval_ms,
        "interval_above_p99": spec.interval_ms > p99,
        "work_median_records": int(np.median(work)),
        "work_vs_stateless_median": round(float(np.median(fraction)), 5),
        "settle_median_ms": round(float(np.median(settle)), 1),
        "settle_max_ms": round(float(np.max(settle)), 1),
        "payload_kb": round(max(payload) / 1024, 2),
        "payload_median_kb": round(float(np.median(payload)) / 1024, 2),
        "memory_ratio": round(rss[n_moves] / rss[100], 3),
        "rss_after_100_mb": round(rss[100], 1), "rss_after_all_mb": round(rss[n_moves], 1),
        "jump_median_ms": round(float(np.median(jumps)), 1),
        "loop": ex.loop,
        "load_average": round(os.getloadavg()[0], 1),
    }


# -- demo-start ----------------------------------------------------------------------------------

_START_SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
phases = []
class Clock:
    def phase(self, text):
        phases.append((round(time.perf_counter() - t0, 2), text))
    def advance(self, *a, **k): pass
    def close(self): pass
    def __enter__(self): return self
    def __exit__(self, *exc): return False
import ddlab.widgets.naiad as d
d.Progress = lambda title: Clock()
phases.append((round(time.perf_counter() - t0, 2), "imported ddlab.widgets"))
ex = d.demo(sys.argv[1])
ex._repr_mimebundle_()       # what displaying the explorer builds
total = time.perf_counter() - t0
print(json.dumps({"total_s": round(total, 2), "phases": phases, "stored": ex.batches.stored}))
"""


def _jvm_archive_dir() -> str:
    """A folder holding the driver JVM's class archive for this Java and pyspark (built here,
    in the foreground, when missing): what every Spark start after a machine's first maps."""
    from ddlab.sources import jvm_archive
    from ddlab.sources.session import check_java

    folder = os.path.join(tempfile.gettempdir(), "ddlab-bench-jvm-archive")
    env = dict(os.environ, DDLAB_JVM_ARCHIVE_DIR=folder, DDLAB_JVM_ARCHIVE="1")
    path = jvm_archive.archive_path(check_java(), folder)
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "ddlab.sources.jvm_archive", str(path)], env=env,
                       capture_output=True, check=True)
    return folder


def run_start(args):
    """Fresh processes, as "Run All" on a fresh kernel: empty cache and no JVM class archive
    (a machine's first run), empty cache with the archive (the first run of a demo after any
    Spark start on the machine), then the filled cache."""
    dataset = args.dataset or "collegemsg"
    out = {"workload": "demo-start", "dataset": dataset}
    archive = _jvm_archive_dir()
    caches = []
    try:
        for label in ("cold", "cold_archive", "warm"):
            if label != "warm":   # an empty window cache; the warm run reads the last one filled
                caches.append(tempfile.mkdtemp(prefix="ddlab-demo-cache-"))
            env = dict(os.environ, DDLAB_CACHE_DIR=caches[-1], DDLAB_JVM_ARCHIVE="0")
            if label == "cold_archive":
                env.update(DDLAB_JVM_ARCHIVE="1", DDLAB_JVM_ARCHIVE_DIR=archive)
            t = time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", _START_SCRIPT, dataset], env=env,
                                  capture_output=True, text=True, check=True)
            wall = time.perf_counter() - t
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            out[f"{label}_s"] = round(wall, 2)
            out[f"{label}_in_process_s"] = result["total_s"]
            out[f"{label}_phases"] = "; ".join(f"{s:g} s {text}" for s, text in result["phases"])
    finally:
        for folder in caches:
            shutil.rmtree(folder, ignore_errors=True)
    out["load_average"] = round(os.getloadavg()[0], 1)
    return out
