"""``--profile``: where an update's time goes, by operator and by engine layer.

By operator: the engine's own statistics (``flow.stats()``: seconds per operator run) summed
over the timed update epochs.  By layer: a pyinstrument sample of the update loop; every
sample's time goes to the innermost engine function on its stack that belongs to a layer
(numpy calls count for the engine code that made them):

- ``scheduling``: the scope's heap, operator queues, ``run_at``/``emit`` bookkeeping, stats;
- ``consolidation``: sorting and summing updates (``consolidate``, concatenating batches; the
  reduce's Python path summing a few keys' histories);
- ``trace lookups``: finding a key's history in a trace (``gather``, ``gather_matches``,
  ``histories``);
- ``trace maintenance``: inserting batches into traces and merging them;
- ``operator logic``: the operators' own vectorised work (join matching, reduce bookkeeping
  and logics, linear operators, loop plumbing);
- ``kernels``: the compiled kernels and their Python glue (``engine/kernels``);
- ``user code``: functions the program supplied (``map_columns`` lambdas, ...);
- ``sinks``: views and subscribers; ``other``: the benchmark's own code.

The sampler slows the updates down (the JSON says ``"profiled": true``): take latency figures
from a run without ``--profile``, shares from one with it.
"""
from __future__ import annotations

import os
import sys

_ENGINE = os.sep + "engine" + os.sep

_LAYERS = {
    "scope.py": {"*": "scheduling"},
    "dataflow.py": {"*": "scheduling"},
    "base.py": {"run_at": "scheduling", "enqueue": "scheduling", "emit": "scheduling",
                "input_time": "scheduling"},
    "batch.py": {"*": "consolidation"},
    "trace.py": {"gather": "trace lookups", "gather_matches": "trace lookups",
                 "_collect": "trace lookups", "expand_ranges": "trace lookups",
                 "take": "trace lookups", "concat": "trace lookups", "_extend": "trace lookups",
                 "_lookup": "trace lookups", "_small_lookup": "trace lookups",
                 "histories": "trace lookups", "_read_spine": "trace lookups",
                 "_recent_part": "trace lookups", "_packed": "trace lookups",
                 "insert": "trace maintenance", "_maintain": "trace maintenance",
                 "_merge": "trace maintenance", "compact": "trace maintenance",
                 "*": "trace maintenance"},
    "io.py": {"*": "sinks"},
    "view.py": {"*": "sinks"},
    "statistics.py": {"*": "scheduling"},
    "reduce.py": {"_accumulate_small": "consolidation"},
}
LAYERS = ("scheduling", "consolidation", "trace lookups", "trace maintenance",
          "operator logic", "kernels", "user code", "sinks", "other")
_KERNELS = os.sep + "kernels" + os.sep


def layer_of(file_path: str, function: str) -> str | None:
    """The layer a frame belongs to, or None when it inherits its caller's (numpy, builtins)."""
    if not file_path:
        return None
    if _ENGINE in file_path:
        if _KERNELS in file_path:
            return "kernels"
        name = os.path.basename(file_path)
        table = _LAYERS.get(name)
        if table is not None:
            layer = table.get(function) or table.get("*")
            if layer:
                return layer
        if function == "<lambda>" or name == "graphs.py":
            return "user code"  # functions the algorithms hand to map_columns, prioritize...
        return "operator logic"
    if "site-packages" in file_path or "<" in file_path or "lib/python" in file_path:
        return None  # numpy, pandas, builtins: charged to their caller
    if os.sep + "benchmarks" + os.sep in file_path:
        return "other"
    return "user code"


def by_layer(session) -> dict:
    """Seconds per layer of a pyinstrument session (exclusive time, innermost layer wins)."""
    totals = {name: 0.0 for name in LAYERS}
    root = session.root_frame()
    if root is None:
        return totals
    stack = [(root, "other")]
    while stack:
        frame, inherited = stack.pop()
        own = layer_of(frame.file_path or "", frame.function or "")
        layer = own or inherited
        totals[layer] += frame.total_self_time
        for child in frame.children:
            stack.append((child, layer))
    return totals


def by_operator(flow, first_epoch: int) -> list[tuple]:
    """``(operator, kind, scope, runs, seconds)`` summed over epochs ``>= first_epoch``,
    most expensive first."""
    st = flow.stats()
    st = st[st.epoch >= first_epoch]
    if not len(st):
        return []
    g = st.groupby(["operator", "kind", "scope"], sort=False).agg(
        runs=("seconds", "size"), seconds=("seconds", "sum")).reset_index()
    g = g.sort_values("seconds", ascending=False)
    return list(g.itertuples(index=False, name=None))


class UpdateProfiler:
    """Samples the update loop when enabled; :meth:`report` prints both tables to stderr."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.profiler = None
        if enabled:
            try:
                from pyinstrument import Profiler
            except ImportError:
                raise SystemExit("--profile needs pyinstrument (pip install pyinstrument)") from None
            self.profiler = Profiler(interval=0.001)

    def __enter__(self):
        if self.profiler is not None:
            self.profiler.start()
        return self

    def __exit__(self, *exc):
        if self.profiler is not None:
            self.profiler.stop()
        return False

    def report(self, flow, first_epoch: int, updates: int, out=sys.stderr) -> dict:
        """Print where the updates' time went; returns the layer shares for the JSON."""
        if self.profiler is None:
            return {}
        session = self.profiler.last_session
        layers = by_layer(session)
        total = sum(layers.values()) or 1.0
        n = max(updates, 1)
        print(f"\n## Profile of {updates} updates: {total / n * 1000:.3f} ms per update "
              f"sampled (sampling adds overhead)", file=out)
        print("\n| engine layer | ms per update | share |\n|---|---|---|", file=out)
        for name in LAYERS:
            print(f"| {name} | {layers[name] / n * 1000:.3f} | {layers[name] / total:.0%} |",
                  file=out)
        rows = by_operator(flow, first_epoch)
        op_total = sum(r[4] for r in rows) or 1.0
        print("\n| operator | kind | scope | runs per update | ms per update | share |\n"
              "|---|---|---|---|---|---|", file=out)
        for label, kind, scope, runs, secs in rows[:25]:
            print(f"| {label} | {kind} | {scope} | {runs / n:.1f} | {secs / n * 1000:.3f} | "
                  f"{secs / op_total:.0%} |", file=out)
        shares = {f"profile_{name.replace(' ', '_')}_share": round(layers[name] / total, 3)
                  for name in LAYERS}
        return {"profiled": True, **shares}
