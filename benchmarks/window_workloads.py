"""Sliding-window workloads on timestamped events (the papers' Twitter demo).

``window-scc``: a window (default 1 hour) slides in steps (default 1 minute); each step is one
epoch that inserts the edges entering and removes those leaving (a simple graph: an edge is
present while any of its events is in the window).  The dataflow computes strongly connected
components and, per component, the most mentioned user.  Reports the per-step latency and how
the retained state grows (after all steps / after 60 steps).

``figure1``: the CIDR paper's Figure 1 on these events: records in difference per iteration
of connected components over a 12-hour window for four strategies - stateless (every iteration
recomputes every label), incremental (iteration deltas from scratch), prioritized (smallest
labels first), and differential (the window slid by one second).
"""
from __future__ import annotations

from contextlib import nullcontext

import time

import numpy as np
import pandas as pd

import ddlab
from ddlab.engine import algorithms

from .datasets import events as load_events
from .rss import peak_mb
from .work import WorkMeter, python_calls


class WindowSlider:
    """Edge-set changes of a time window over events, computed with pandas (simple graph)."""

    def __init__(self, events: pd.DataFrame):
        self.events = events.sort_values("time", kind="stable").reset_index(drop=True)
        self.times = self.events["time"].to_numpy()
        self.counts: dict = {}

    def _rows(self, lo, hi):
        a, b = np.searchsorted(self.times, [lo, hi], "left")
        return self.events.iloc[a:b]

    def move(self, old: tuple[int, int] | None, new: tuple[int, int]) -> pd.DataFrame:
        """Edge updates that take the window from ``old`` = (start, end) to ``new``."""
        changes: dict = {}
        if old is None:
            entering, leaving = self._rows(*new), self.events.iloc[0:0]
        else:
            entering = self._rows(max(old[1], new[0]), new[1])
            leaving = self._rows(old[0], min(new[0], old[1]))
        for frame, sign in ((entering, 1), (leaving, -1)):
            for edge in zip(frame["src"].tolist(), frame["dst"].tolist()):
                before = self.counts.get(edge, 0)
                after = before + sign
                self.counts[edge] = after
                if after == 0:
                    del self.counts[edge]
                if (before == 0) != (after == 0):
                    changes[edge] = changes.get(edge, 0) + (1 if after else -1)
        rows = [(s, d, w) for (s, d), w in changes.items() if w]
        return pd.DataFrame(rows, columns=["src", "dst", "diff"]).astype("int64")


def run_window_scc(args):
    dataset = args.dataset or "twitter24h"
    width = getattr(args, "width", None) or 3600
    step = getattr(args, "step", None) or 60
    ev = load_events(dataset)
    slider = WindowSlider(ev)
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    scc = algorithms.strongly_connected_components(edges, prioritized=False)
    components = algorithms.connected_components(scc)
    top = algorithms.top_label_per_component(components, edges)
    view = top.view()
    delivered = []
    top.subscribe(delivered.append)
    t0 = int(slider.times.min())
    steps = int((slider.times.max() - t0 - width) // step)
    window = (t0, t0 + width)
    start = time.perf_counter()
    edges.update(slider.move(None, window))
    flow.step()
    initial = time.perf_counter() - start
    latencies, cpu, retained = [], [], {}
    profiler = None
    if getattr(args, "profile", False):
        from .profile import UpdateProfiler

        profiler = UpdateProfiler(True)
    first_epoch = flow.epoch
    counted = min(20, steps // 10)  # the last steps: counted call by call, never timed

    def move(s):
        nonlocal window
        new = (t0 + s * step, t0 + s * step + width)
        batch = slider.move(window, new)
        window = new
        return batch

    group = max(getattr(args, "in_flight", 1) or 1, 1)
    meter = WorkMeter().start(flow)
    timed = range(1, steps - counted + 1)
    with profiler if profiler is not None else nullcontext():
        for lo in range(1, steps - counted + 1, group):
            # ``--in-flight K``: K slides, each its own epoch (advance() between them), run
            # by one step; the time recorded is the step's over K (per slide, amortised)
            slides = range(lo, min(lo + group, steps - counted + 1))
            moves = [move(s) for s in slides]  # (the window's bookkeeping: not the engine's)
            start, start_cpu = time.perf_counter(), time.process_time()
            for k, batch in enumerate(moves):
                edges.update(batch)
                if k + 1 < len(moves):
                    flow.advance()
            flow.step()
            latencies.append((time.perf_counter() - start) * 1000 / len(moves))
            cpu.append((time.process_time() - start_cpu) * 1000 / len(moves))
            if 60 in slides:
                retained[60] = flow.retained_updates()
    lat = np.array(latencies)
    work = meter.per_update(flow, len(timed))

    def last_steps():
        for s in range(steps - counted + 1, steps + 1):
            edges.update(move(s))
            if (s - steps + counted) % group and s < steps:
                flow.advance()
            else:
                flow.step()
    work.update(python_calls(last_steps, counted))
    retained[steps] = flow.retained_updates()
    # the same-run C baseline: scipy's strongly connected components of the last window's
    # graph from scratch (what a step would cost recomputing, without the top-label join)
    from .graph_workloads import _timed, scipy_scc

    final = np.array(sorted(slider.counts), dtype=np.int64).reshape(-1, 2)
    scipy_s, _ = _timed(lambda: scipy_scc(final))
    shares = profiler.report(flow, first_epoch, len(lat)) if profiler is not None else {}
    return {
        "workload": "window-scc", "dataset": dataset, "events": int(len(ev)),
        "window_s": width, "step_s": step, "steps": steps, "in_flight": group,
        "initial_s": round(initial, 3),
        "update_median_ms": round(float(np.median(lat)), 3),
        "update_p99_ms": round(float(np.percentile(lat, 99)), 3),
        "update_median_cpu_ms": round(float(np.median(cpu)), 3),
        "scipy_s": scipy_s,
        "update_vs_scipy": round(float(np.median(lat)) / 1000.0 / scipy_s, 3),
        "retained_after_60": retained.get(60), "retained_after_all": retained.get(steps),
        "state_growth": round(retained[steps] / retained[60], 3) if 60 in retained else None,
        "components_with_top_label": len(view),
        "peak_rss_mb": peak_mb(),
        **work,
        **shares,
    }


def _loop_differences(flow, epoch, scope):
    """Records in difference per iteration: the loop variable's changes (feedback output),
    in the loop's time order (for a prioritized loop, (priority, iteration) pairs in order)."""
    st = flow.stats(epoch=epoch)
    fb = st[(st.kind == "feedback") & (st.scope == scope)]
    keyed = sorted(zip(fb.time.map(lambda t: t[-1]), fb["out"]))
    return [int(n) for _, n in keyed]


def _stateless(window_edges, nodes, iterations):
    """The stateless line: label records processed per iteration when every iteration
    recomputes every label from scratch.  Measured with the Spark baseline
    (``stateless_cc``: links plus labels per iteration) when Spark is usable; otherwise the
    lower bound of one record per node for as many iterations as label propagation needs."""
    try:
        from ddlab.sources import spark_status, stateless_cc

        ok, _ = spark_status()
        if ok:
            start = time.perf_counter()
            result = stateless_cc(window_edges[window_edges["diff"] > 0])
            seconds = round(time.perf_counter() - start, 2)
            return [int(r) for r in result.iterations["records"]], "spark stateless_cc", seconds
    except ImportError:
        pass
    return [nodes] * iterations, "nodes x iterations (Spark unavailable)", None


def run_figure1(args):
    dataset = args.dataset or "twitter24h"
    width = getattr(args, "width", None) or 12 * 3600
    ev = load_events(dataset)
    slider = WindowSlider(ev)
    t0 = int(slider.times.min())
    window = (t0, t0 + width)
    first = slider.move(None, window)
    curves = {}
    # incremental (iteration deltas, no prioritization) and prioritized full runs
    for name, program, scope in (
            ("incremental", algorithms.connected_components, "root/cc"),
            ("prioritized", algorithms.connected_components_prioritized, "root/cc-prioritized")):
        flow = ddlab.Dataflow()
        edges = flow.input("edges", columns=["src", "dst"])
        labels = program(edges).view()
        edges.update(first)
        flow.step()
        curves[name] = _loop_differences(flow, 0, scope)
        if name == "prioritized":
            # differential: slide the window by one second, many times
            slides = []
            w = window
            for s in range(1, 61):
                new = (w[0] + 1, w[1] + 1)
                edges.update(slider.move(w, new))
                w = new
                flow.step()
                slides.append(_loop_differences(flow, s, scope))
            curves["differential"] = max(slides, key=sum)
            slide_totals = [sum(c) for c in slides]
            nodes = len(labels)
    curves["stateless"], stateless_source, stateless_s = _stateless(first, nodes,
                                                                     len(curves["incremental"]))
    full = sum(curves["prioritized"])
    return {
        "workload": "figure1", "dataset": dataset, "window_s": width,
        "edges_in_window": int(len(first)), "nodes_in_window": nodes,
        "stateless_total": sum(curves["stateless"]),
        "stateless_source": stateless_source, "stateless_spark_s": stateless_s,
        "incremental_total": sum(curves["incremental"]),
        "prioritized_total": full,
        "slide_median_total": float(np.median(slide_totals)),
        "slide_max_total": int(max(slide_totals)),
        "slide_work_fraction": round(float(np.median(slide_totals)) / full, 6),
        "slide_work_fraction_max": round(max(slide_totals) / full, 6),
        "per_iteration": curves,
    }
