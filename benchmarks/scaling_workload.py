"""``python -m benchmarks scaling [--workers 1,2,4,8] [--dataset NAME]``: data-parallel workers
(issue 31) against one worker, on the axes of the Naiad report's Figures 20 and 21.

Four measurements per worker count, each in a fresh process (``DDLAB_WORKERS=N``), so no
forked worker and no peak memory carries over from one to the next:

- from scratch: ``cc`` on random-400k-3.4m and ``scc`` on random-1m-2m (``--dataset`` switches
  both), the first ``flow.step()`` after inserting every edge: seconds, speed-up over one
  worker (Figure 20's axis), CPU seconds and seconds running operators per worker, messages,
  and memory: worker 0's peak RSS and the sum of every worker's peak RSS;
- a batch of 10,000 changes (half deletions of existing edges, half new random edges) to the
  loaded ``cc`` of random-100k-500k: the step's seconds;
- single-edge changes (``--updates`` of them, alternating deletion and insertion) to the
  loaded ``cc`` of CollegeMsg: latency percentiles and every latency (Figure 21's CDF).

Every output is compared with the one-worker run's (row count and a hash of the sorted rows);
the one-worker run is compared with scipy on the same final graph, and an algorithm's
size-based choice (``explain_choice``) is reported where a worker count changed it.  On a
shared machine other jobs take cores: each measurement says how many they used meanwhile
(``..._others_cores_wN``: the machine's busy CPU time less ours, per second), and the run
starts by measuring how many times one spinning process's throughput N spinning at once get.
Memory: ``peak_sum`` adds each worker's peak RSS, which counts pages shared since the fork
once per worker; ``pss_sum`` (after the step) counts them once.
"""
from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent

DEFAULT_WORKERS = (1, 2, 4, 8)
#: from-scratch runs: (algorithm, dataset) (``--dataset`` replaces the dataset of both)
SCRATCH = (("cc", "random-400k-3.4m"), ("scc", "random-1m-2m"))
BATCH_DATASET, BATCH_CHANGES = "random-100k-500k", 10_000
UPDATES_DATASET = "collegemsg"
#: a measurement that takes longer is stopped (with its workers) and reported as an error
CHILD_TIMEOUT_S = 900
#: pure-Python additions one spinning process makes (about a second here)
SPIN = 20_000_000

#: issue 31's targets: (figure key template, comparison, bound, what)
TARGETS = (
    ("cc_{scratch_cc}_scratch_speedup_w2", ">=", 1.6, "cc from scratch, 2 workers"),
    ("scc_{scratch_scc}_scratch_speedup_w2", ">=", 1.5, "scc from scratch, 2 workers"),
    ("batch_{batch}_speedup_w2", ">=", 1.5, "a batch of changes, 2 workers"),
    ("update_{updates}_median_vs_w1_w2", "<=", 1.3, "one-edge update latency, 2 workers"),
    ("cc_{scratch_cc}_memory_vs_w1_w2", "<=", 1.2, "memory (sum of peaks), 2 workers"),
)

NAIAD_FIGURE20 = (
    "Naiad report, section 6.3.1, Figure 20: speed-up (1-thread time / x-thread time) of "
    "Smith-Waterman, SSSP, SCC and CC for 1..48 threads on a 48-core 1.9 GHz AMD Opteron "
    "'Magny-Cours' (section 6.3, mean of 5 runs). The text states no speed-up values for "
    "SSSP, SCC or CC (the single-threaded times are in the figure's key, not in the text); "
    "the one number it gives is for Smith-Waterman on 20,000 characters, whose block size "
    "caps the speed-up at 10x, which it nearly reaches. Single-threaded times on another "
    "machine (Table 2, 2.67 GHz Core i7): CC 3.4M edges 9.90 s, SCC 2M edges 51.84 s.")
NAIAD_FIGURE21 = (
    "Naiad report, section 6.3.2, Figure 21: CDFs of SSSP update latency on a 1M-node graph, "
    "batches of 1, 100 and 10,000 changes, 1 against 48 threads. The text gives no latency "
    "values: at batch size 1 the threads' coordination costs, at 10,000 it helps, and "
    "updating is almost always much faster than recomputing. Table 2 (single thread): CC "
    "0.49 ms, SCC 2M 8.79 ms per update.")


# -- the parent: one fresh process per measurement ---------------------------------------
def run(args) -> dict:
    """The runner's entry: every measurement at every worker count (``--workers``)."""
    scratch = [(algorithm, args.dataset or dataset) for algorithm, dataset in SCRATCH]
    return measure_all(worker_counts(getattr(args, "workers", None)), scratch,
                       batch=(BATCH_DATASET, BATCH_CHANGES),
                       updates=(UPDATES_DATASET, args.updates), seed=args.seed)


def worker_counts(text) -> tuple:
    """``"1,2,4"`` -> ``(1, 2, 4)`` (1 added first when missing: the speed-ups' baseline)."""
    if text is None:
        return DEFAULT_WORKERS
    try:
        counts = sorted({int(part) for part in str(text).split(",") if part.strip()})
    except ValueError:
        raise SystemExit(f"scaling: --workers takes worker counts separated by commas "
                         f"(e.g. 1,2,4), not {text!r}") from None
    if not counts or counts[0] < 1:
        raise SystemExit(f"scaling: --workers {text!r}: every count is a whole number >= 1")
    return tuple(sorted(set(counts) | {1}))


def measure_all(workers, scratch, batch, updates, seed: int = 0) -> dict:
    """Run each measurement at each worker count (``scratch``: ``[(algorithm, dataset)]``,
    ``batch``: ``(dataset, changes)``, ``updates``: ``(dataset, count)``) and gather the
    figures, the speed-ups and the Figure 20/21 series."""
    cores = os.cpu_count() or 1
    out: dict = {"workload": "scaling", "dataset": ", ".join(d for _, d in scratch),
                 "workers": list(workers), "cores": cores,
                 "machine_note": _machine_note(cores, workers)}
    spinners = max(2, min(cores, max(workers)))
    out[f"machine_parallelism_{spinners}_procs"] = machine_parallelism(spinners)
    figure20, loads = {}, []
    for algorithm, dataset in scratch:
        prefix = f"{algorithm}_{_slug(dataset)}"
        runs = _series(out, prefix, workers, loads, kind="scratch", algorithm=algorithm,
                       dataset=dataset, seed=seed)
        out.update(_scratch_figures(prefix, runs))
        if runs:
            figure20[f"{algorithm} {dataset}"] = [
                [w, out.get(f"{prefix}_scratch_speedup_w{w}", 1.0)] for w in runs]
    out["figure20"] = figure20
    out["naiad_figure20"] = NAIAD_FIGURE20

    dataset, changes = batch
    prefix = f"batch_{_slug(dataset)}"
    runs = _series(out, prefix, workers, loads, kind="batch", algorithm="cc", dataset=dataset,
                   seed=seed, changes=changes)
    out[f"{prefix}_changes"] = changes
    for w, r in runs.items():
        out[f"{prefix}_s_w{w}"] = r["phase"]["seconds"]
        if w > 1 and 1 in runs:
            out[f"{prefix}_speedup_w{w}"] = _ratio(runs[1]["phase"]["seconds"],
                                                   r["phase"]["seconds"])

    dataset, count = updates
    prefix = f"update_{_slug(dataset)}"
    runs = _series(out, prefix, workers, loads, kind="updates", algorithm="cc",
                   dataset=dataset, seed=seed, changes=count)
    figure21, latencies = [], {}
    for w, r in runs.items():
        lat = np.array(r["latencies_ms"])
        row = {"workers": w, **{f"{name}_ms": round(float(np.percentile(lat, q)), 3)
                                for name, q in (("median", 50), ("p90", 90), ("p99", 99))}}
        figure21.append(row)
        for name in ("median", "p90", "p99"):
            out[f"{prefix}_{name}_ms_w{w}"] = row[f"{name}_ms"]
        if w > 1 and 1 in runs:
            out[f"{prefix}_median_vs_w1_w{w}"] = _ratio(row["median_ms"],
                                                         figure21[0]["median_ms"])
        latencies[w] = r["latencies_ms"]
    out["figure21"] = figure21
    out["figure21_latencies_ms"] = latencies
    out["naiad_figure21"] = NAIAD_FIGURE21
    out["issue31_targets"] = _targets(out, scratch, batch[0], updates[0])
    out["load_average_max"] = max(loads, default=None)
    return out


def _series(out, prefix, workers, loads, **spec) -> dict:
    """One measurement at every worker count: ``{workers: figures}`` of those that ran; the
    correctness checks (against one worker, and scipy's) and any error or skip go to
    ``out``.  A skipped dataset is skipped at every count."""
    runs, baseline = {}, None
    for w in workers:
        result = run_child(w, spec)
        if "skipped" in result:
            out[f"{prefix}_skipped"] = result["skipped"]
            return runs
        if "error" in result:
            out[f"{prefix}_error_w{w}"] = result["error"]
            continue
        if result.get("workers") != w:
            out[f"{prefix}_error_w{w}"] = f"ran {result.get('workers')} workers, not {w}"
            continue
        if "matches_scipy" in result:
            out[f"{prefix}_matches_scipy_w{w}"] = result["matches_scipy"]
        digest = (result["output_rows"], result["output_hash"])
        if baseline is None and w == 1:
            baseline = digest
            out[f"{prefix}_output_rows"] = result["output_rows"]
            out[f"{prefix}_choice"] = result["choice"]
        elif baseline is not None:
            out[f"{prefix}_matches_w1_w{w}"] = digest == baseline
            if result["choice"] != out[f"{prefix}_choice"]:  # (the same result, other work)
                out[f"{prefix}_choice_w{w}"] = result["choice"]
        out.update(_phase_figures(prefix, w, result["phase"]))
        loads.append(result["load_average"])
        runs[w] = result
    return runs


def _phase_figures(prefix: str, w: int, phase: dict) -> dict:
    """What the measured phase cost: CPU seconds (all workers), the cores other jobs used
    meanwhile; with several workers: per worker CPU, seconds queued for a core and seconds
    running operators, worker 0's seconds asleep waiting for the others, messages sent."""
    out = {f"{prefix}_cpu_s_w{w}": round(sum(phase["cpu_s"]), 2),
           f"{prefix}_others_cores_w{w}": phase["others_cores"]}
    if w > 1:
        out[f"{prefix}_cpu_per_worker_s_w{w}"] = phase["cpu_s"]
        out[f"{prefix}_queued_per_worker_s_w{w}"] = phase["queued_s"]
        out[f"{prefix}_worker0_asleep_s_w{w}"] = phase["worker0_asleep_s"]
        out[f"{prefix}_busy_per_worker_s_w{w}"] = phase["busy_s"]
        out[f"{prefix}_messages_w{w}"] = phase["messages"]
    return out


def _scratch_figures(prefix: str, runs: dict) -> dict:
    """Time, speed-up over one worker (Figure 20's axis) and memory of the first step."""
    one = runs.get(1)
    out = {}
    for w, r in runs.items():
        out[f"{prefix}_scratch_s_w{w}"] = r["phase"]["seconds"]
        if w > 1 and one is not None:
            out[f"{prefix}_scratch_speedup_w{w}"] = _ratio(one["phase"]["seconds"],
                                                           r["phase"]["seconds"])
        out[f"{prefix}_worker0_peak_mb_w{w}"] = r["peak_rss_mb"][0]
        out[f"{prefix}_peak_sum_mb_w{w}"] = round(sum(r["peak_rss_mb"]), 1)
        out[f"{prefix}_pss_sum_mb_w{w}"] = round(sum(r["pss_mb"]), 1)
        out[f"{prefix}_rss_before_step_mb_w{w}"] = r["rss_before_step_mb"]
        if w > 1 and one is not None:
            out[f"{prefix}_memory_vs_w1_w{w}"] = _ratio(sum(r["peak_rss_mb"]),
                                                        sum(one["peak_rss_mb"]))
    return out


def _targets(out, scratch, batch, updates) -> dict:
    names = {"batch": _slug(batch), "updates": _slug(updates)}
    names.update({f"scratch_{a}": _slug(d) for a, d in scratch})
    verdicts = {}
    for template, op, bound, what in TARGETS:
        try:
            key = template.format(**names)
        except KeyError:
            continue
        value = out.get(key)
        if value is None:
            verdicts[what] = f"not measured ({key})"
            continue
        met = value >= bound if op == ">=" else value <= bound
        verdicts[what] = f"{value} (target {op} {bound}): {'met' if met else 'missed'}"
    return verdicts


def _machine_note(cores: int, workers) -> str:
    over = [w for w in workers if w > cores]
    note = f"{cores} cores"
    if over:
        note += f": {' and '.join(map(str, over))} workers are oversubscribed"
    return note + "; worker 0 is the measuring process, workers 1..N-1 are forked from it"


def _slug(name: str) -> str:
    return name.replace("-", "_").replace(".", "_")


def _ratio(a: float, b: float) -> float:
    return round(a / b, 2) if b else float("inf")


def run_child(workers: int, spec: dict) -> dict:
    """``spec`` measured by a fresh ``python -m benchmarks.scaling_workload`` with
    ``DDLAB_WORKERS=workers``: its JSON line, or ``{"error": ...}``.  The child leads its own
    process group, so a hung measurement is stopped together with its workers."""
    env = {**os.environ, "DDLAB_WORKERS": str(workers)}
    cmd = [sys.executable, "-m", "benchmarks.scaling_workload", json.dumps(spec)]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"error": f"no answer within {CHILD_TIMEOUT_S} s (stopped)"}
    if proc.returncode != 0:
        last = (stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        return {"error": last}
    return json.loads(stdout.strip().splitlines()[-1])


def machine_parallelism(processes: int) -> float:
    """How many times one spinning process's throughput ``processes`` spinning at once reach
    now (``processes`` on an idle machine with as many free cores; less under other load)."""
    code = (f"import time\nt = time.perf_counter()\ns = 0\nfor i in range({SPIN}): s += i\n"
            f"print(time.perf_counter() - t)")

    def spin(n):
        procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                  text=True) for _ in range(n)]
        return [float(p.communicate()[0]) for p in procs]

    alone = spin(1)[0]
    together = spin(processes)
    return round(sum(alone / t for t in together), 2)


# -- the child: one measurement ----------------------------------------------------------
def measure(spec: dict) -> dict:
    """Load ``spec["dataset"]`` into a fresh flow (``DDLAB_WORKERS`` workers), step it from
    scratch, then apply the changes of ``spec["kind"]``; the figures of this worker count."""
    from .__main__ import _load_kernels
    from .datasets import DatasetUnavailable
    from .datasets import edges as load_edges

    _load_kernels()  # before anything is timed (they compile on first use otherwise)
    try:
        frame = load_edges(spec["dataset"], spec["seed"])[["src", "dst"]]
    except (DatasetUnavailable, ImportError) as err:
        return {"skipped": f"{spec['dataset']}: {err}"}
    import ddlab
    from ddlab.engine import algorithms

    program = {"cc": algorithms.connected_components,
               "scc": algorithms.strongly_connected_components}[spec["algorithm"]]
    flow = ddlab.Dataflow("scaling", max_rows_per_epoch=None)  # workers: DDLAB_WORKERS
    edges = flow.input("edges", columns=["src", "dst"])
    result = program(edges)
    view = result.view()
    edges.insert(frame)
    rows = frame.to_numpy()
    out = {"workers": flow.workers, "rss_before_step_mb": _proc_mb("self", "VmRSS")}
    with Phase(flow) as phase:
        flow.step()
    if spec["kind"] == "scratch":
        out.update(_memory(flow))
    else:
        deletions, insertions = draw_changes(rows, spec["changes"], spec["seed"] + 1)
        with Phase(flow) as phase:
            if spec["kind"] == "batch":
                edges.remove(deletions)
                edges.insert(insertions)
                flow.step()
            else:
                out["latencies_ms"] = _single_updates(flow, edges, deletions, insertions)
        rows = _final_edges(rows, deletions, insertions)
    out["phase"] = phase.figures
    out["choice"] = algorithms.explain_choice(result)
    out["output_rows"], out["output_hash"] = _digest(view.to_dict())
    if flow.workers == 1:
        out["matches_scipy"] = view.to_dict() == _scipy_answer(spec["algorithm"], rows)
    out["load_average"] = round(os.getloadavg()[0], 2)
    return out


def draw_changes(rows: np.ndarray, changes: int, seed: int) -> tuple[list, list]:
    """``changes // 2`` distinct existing edges to delete and ``changes - changes // 2`` new
    distinct edges between existing nodes to insert (seeded: the same at every worker count)."""
    rng = np.random.default_rng(seed)
    n_delete = min(changes // 2, len(rows))
    picked = rng.choice(len(rows), n_delete, replace=False)
    deletions = [tuple(int(x) for x in rows[i]) for i in picked]
    present = set(map(tuple, rows.tolist()))
    nodes = np.unique(rows)
    insertions: list = []
    while len(insertions) < changes - n_delete:
        u, v = (int(x) for x in rng.choice(nodes, 2))
        if (u, v) not in present:
            present.add((u, v))
            insertions.append((u, v))
    return deletions, insertions


def _single_updates(flow, edges, deletions, insertions) -> list:
    """Milliseconds per one-edge epoch, alternating a deletion and an insertion."""
    changes = [c for pair in zip(deletions, insertions) for c in pair]
    changes += deletions[len(insertions):] + insertions[len(deletions):]
    removals = set(deletions)
    latencies = []
    for record in changes:
        start = time.perf_counter()
        (edges.remove if record in removals else edges.insert)([record])
        flow.step()
        latencies.append(round((time.perf_counter() - start) * 1000, 3))
    return latencies


def _final_edges(rows: np.ndarray, deletions, insertions) -> np.ndarray:
    gone = set(deletions)
    kept = [r for r in map(tuple, rows.tolist()) if r not in gone]
    return np.array(kept + list(insertions), dtype=np.int64).reshape(-1, 2)


class Phase:
    """Wall seconds of a phase, each worker's CPU seconds in it (a worker forked during it
    counts from its fork) and its seconds queued for a core (runnable, not running: other
    jobs, or more workers than cores), worker 0's seconds asleep (waiting for the other
    workers), the cores other jobs used meanwhile (the machine's busy time less ours, per
    second), and the workers' own account of the last epoch: seconds running operators,
    messages worker 0 sent."""

    def __init__(self, flow):
        self.flow = flow
        self.figures: dict = {}

    def _sample(self) -> tuple:
        pids = _pids(self.flow)
        tasks = [f"self/task/{threading.get_native_id()}", *pids]  # (worker 0's main thread)
        return _cpu_all(pids), [_schedstat(task) for task in tasks]

    def __enter__(self):
        self.cpu, self.sched = self._sample()
        self.machine = _machine_busy()
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        seconds = time.perf_counter() - self.start
        machine = _machine_busy() - self.machine
        cpu, sched = self._sample()

        def since(now, then):
            return [round(b - a, 2) for a, b in zip(then + [0.0] * len(now), now)]

        cpu = since(cpu, self.cpu)
        ran = since([r for r, _ in sched], [r for r, _ in self.sched])
        queued = since([q for _, q in sched], [q for _, q in self.sched])
        team = self.flow._team
        self.figures = {
            "seconds": round(seconds, 3),
            "cpu_s": cpu,
            "queued_s": queued,
            "worker0_asleep_s": round(max(0.0, seconds - ran[0] - queued[0]), 2),
            "others_cores": round(max(0.0, machine - sum(cpu)) / seconds, 2),
            "busy_s": [round(b, 2) for b in getattr(team, "busy_seconds", [])],
            "messages": getattr(team, "messages", 0)}


def _schedstat(task) -> tuple[float, float]:
    """Seconds a task ran, and seconds it waited runnable for a core
    (``/proc/TASK/schedstat``: nanoseconds)."""
    with open(f"/proc/{task}/schedstat") as fh:
        ran, queued = fh.read().split()[:2]
    return int(ran) / 1e9, int(queued) / 1e9


def _pids(flow) -> list:
    """The child workers' process ids (the transport's :class:`Children` own them)."""
    children = getattr(flow._team, "children", None)
    return [p.pid for p in getattr(children, "procs", [])]


def _memory(flow) -> dict:
    """Peak RSS of every worker (worker 0 first), and their proportional set sizes now."""
    pids = _pids(flow)
    # ru_maxrss is KiB on Linux: worker 0's peak so far (in a fresh process, the step's)
    return {"peak_rss_mb": [round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)]
            + [_proc_mb(pid, "VmHWM") for pid in pids],
            # each page shared since the fork counted once across the workers
            "pss_mb": [_proc_mb(pid, "Pss", "smaps_rollup") for pid in ["self", *pids]]}


def _machine_busy() -> float:
    """CPU seconds every core of the machine spent busy since boot (``/proc/stat``)."""
    with open("/proc/stat") as fh:
        ticks = [int(x) for x in fh.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = ticks[:8]  # (guest is in user)
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _proc_mb(pid, field: str, table: str = "status") -> float:
    """A field of ``/proc/PID/TABLE`` (kB there) in MB."""
    with open(f"/proc/{pid}/{table}") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return round(int(line.split()[1]) / 1024, 1)
    raise KeyError(f"{field} not in /proc/{pid}/{table}")


def _cpu_self() -> float:
    times = os.times()
    return times.user + times.system


def _cpu_all(pids) -> list:
    """User + system CPU seconds of this process and of each live ``pids`` (``/proc/PID/stat``
    fields 14 and 15)."""
    out = [_cpu_self()]
    for pid in pids:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        out.append((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
    return out


def _digest(rows: dict) -> tuple[int, str]:
    """Row count and a hash of the sorted rows: equal outputs, equal digests."""
    text = repr(sorted(rows.items())).encode()
    return len(rows), hashlib.sha256(text).hexdigest()[:16]


def _scipy_answer(algorithm: str, edges: np.ndarray) -> dict:
    """What the view should hold for ``edges``, from scipy (the same-run oracle of
    :mod:`.graph_workloads`)."""
    from .graph_workloads import _components, scipy_scc

    if algorithm == "cc":
        ids, comp = _components(edges)
        low = np.full(comp.max() + 1, np.iinfo(np.int64).max)
        np.minimum.at(low, comp, ids)
        return {(int(n), int(low[c])): 1 for n, c in zip(ids, comp)}
    ids = np.unique(edges)
    comp = dict(zip(ids.tolist(), scipy_scc(edges)[1].tolist()))
    return {(a, b): 1 for a, b in edges.tolist() if comp[a] == comp[b]}


if __name__ == "__main__":
    print(json.dumps(measure(json.loads(sys.argv[1]))))
