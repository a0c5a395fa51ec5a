"""Machine-independent work per update, for the benchmarks' JSON.

``WorkMeter`` takes the engine's counters (``Dataflow.work_done``) around the timed updates
and reports them per update: operator runs, (operator, time) activations, compiled kernel
calls, history rows read, join pairs, trace inserts.  ``python_calls`` counts the Python-level
function calls of a few further updates under ``cProfile`` (which slows them, so they are
never the timed ones).  Equal work with unequal seconds is the machine; unequal work is the
engine.
"""
from __future__ import annotations

import cProfile
import pstats


class WorkMeter:
    """``start(flow)`` before the timed updates, ``per_update(flow, n)`` after them."""

    def start(self, flow) -> "WorkMeter":
        self.before = flow.work_done()
        return self

    def per_update(self, flow, n: int) -> dict:
        after = flow.work_done()
        return {f"work_{k}_per_update": round((after[k] - self.before[k]) / max(n, 1), 1)
                for k in after}


def python_calls(fn, n: int) -> dict:
    """Python-level function calls per update of ``fn()``, which makes ``n`` updates."""
    profile = cProfile.Profile()
    profile.enable()
    try:
        fn()
    finally:
        profile.disable()
    total = pstats.Stats(profile).total_calls
    return {"work_python_calls_per_update": round(total / max(n, 1), 1)}
