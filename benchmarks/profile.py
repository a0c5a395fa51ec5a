"""``--profile``: where an update's time goes, by operator and by engine layer.

By operator: the engine's own statistics (``flow.stats()``: seconds per operator run) summed
over the timed update epochs.  By layer: a pyinstrument sample of the update loop; every
sample's time goes to the innermost engine function on its stack that belongs to a layer
(numpy calls count for the engine code that made them):

- ``scheduling``: the scope's sweeps, progress tracking (counts, frontiers), operator queues,
  ``step``/``run_at``/``emit`` bookkeeping, stats;
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
#: a frame of a function mapped to this inherits its caller's layer (shared helpers)
INHERIT = "inherit"
_LOOKUPS, _MAINTENANCE = "trace lookups", "trace maintenance"

#: engine file (relative to ``engine/``) -> {function: layer}; ``"*"`` is the file's default.
#: Functions of the trace package are named one by one (a test checks that every function
#: defined there is), so a new lookup cannot fall into another layer unnoticed.
_LAYERS = {
    # the runtime core: scheduling, counting and the run protocol
    "runtime/scope.py": {"*": "scheduling"},
    "runtime/protocol.py": {"*": "scheduling"},
    "runtime/wiring.py": {"*": "scheduling"},
    "runtime/contract.py": {"*": "scheduling"},
    "runtime/progress/tracker.py": {"*": "scheduling"},
    "runtime/progress/antichain.py": {"*": "scheduling"},
    "runtime/progress/change_batch.py": {"*": "scheduling"},
    "runtime/progress/reachability.py": {"*": "scheduling"},
    "dataflow.py": {"*": "scheduling"},
    "statistics.py": {"*": "scheduling"},
    "batch.py": {"*": "consolidation"},
    "operators/reduce.py": {"_accumulate_small": "consolidation"},
    "operators/io.py": {"*": "sinks"},
    "view.py": {"*": "sinks"},
    # the trace package: what reads it is a lookup, what writes it maintenance
    "trace/lookup.py": {"*": _LOOKUPS},
    "trace/rows.py": {"*": _LOOKUPS},
    "trace/entered.py": {"*": _LOOKUPS},
    "trace/reader.py": {"*": _LOOKUPS},
    "trace/layout.py": {"pack": _MAINTENANCE,
                        "is_sorted": _MAINTENANCE, "unpack": INHERIT, "take_columns": INHERIT,
                        "packed_matrix": INHERIT, "narrowed": _MAINTENANCE, "trimmed": _MAINTENANCE,
                        "fits_narrow": _MAINTENANCE, "_narrows": _MAINTENANCE,
                        "narrow_query": _LOOKUPS,
                        "wide": INHERIT},
    "trace/batches.py": {"__init__": INHERIT, "from_packed": INHERIT, "__len__": INHERIT,
                         "take": _LOOKUPS},
    "trace/recent.py": {"__init__": _MAINTENANCE, "__len__": INHERIT,
                        "append_columns": _MAINTENANCE, "_room": _MAINTENANCE,
                        "_appended": _MAINTENANCE, "buffer": INHERIT, "_sync": _LOOKUPS,
                        "rows": _LOOKUPS, "by_key": _LOOKUPS,
                        "truncated": _MAINTENANCE, "batch": INHERIT, "part": _LOOKUPS,
                        "forget": _MAINTENANCE, "histories": _LOOKUPS, "_read_spine": _LOOKUPS},
    "trace/spine.py": {"__init__": _MAINTENANCE, "row_depth": INHERIT, "layout": INHERIT,
                       "__len__": INHERIT, "snapshot": _MAINTENANCE, "restore": _MAINTENANCE,
                       "check_kinds": _MAINTENANCE, "insert": _MAINTENANCE,
                       "_spill_recent": _MAINTENANCE, "_maintain": _MAINTENANCE,
                       "packed_runs": INHERIT,
                       "_should_merge": _MAINTENANCE, "_merge": _MAINTENANCE,
                       "_merge_by_key": _MAINTENANCE, "compact": _MAINTENANCE,
                       "gather": _LOOKUPS, "gather_matches": _LOOKUPS,
                       "accumulate_until": _LOOKUPS, "all_rows": _LOOKUPS,
                       "compacted_rows": _LOOKUPS, "rows_where": _LOOKUPS, "_spine": _LOOKUPS,
                       "_recent_by_key": _LOOKUPS, "_small_lookup": _LOOKUPS,
                       "_packed": _LOOKUPS, "_no_rows": _LOOKUPS},
}
LAYERS = ("scheduling", "consolidation", "trace lookups", "trace maintenance",
          "operator logic", "kernels", "user code", "sinks", "other")


def engine_file(file_path: str) -> str | None:
    """``file_path`` relative to the engine folder (``"trace/spine.py"``), or None."""
    if _ENGINE not in file_path:
        return None
    return file_path.rsplit(_ENGINE, 1)[1].replace(os.sep, "/")


def layer_of(file_path: str, function: str) -> str | None:
    """The layer a frame belongs to, or None when it inherits its caller's (numpy, builtins,
    shared helpers)."""
    if not file_path:
        return None
    name = engine_file(file_path)
    if name is not None:
        if name.startswith("kernels/"):
            return "kernels"
        table = _LAYERS.get(name)
        if table is not None:
            layer = table.get(function) or table.get("*")
            if layer:
                return None if layer == INHERIT else layer
        if function == "<lambda>" or name.endswith("graphs.py"):
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
