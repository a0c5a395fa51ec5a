"""Machine-independent work per update, for the benchmarks' JSON.

``WorkMeter`` takes the engine's counters (``Dataflow.work_done``) around the timed updates
and reports them per update: operator runs, (operator, time) activations, compiled kernel
calls, history rows read, join pairs, trace inserts.  ``python_calls`` counts the Python-level
function calls of a few further updates under ``cProfile``, and the bytecode instructions the
interpreter ran for them (which slows them, so they are never the timed ones): the
interpreter's work, to the instruction, where the seconds of a shared machine vary by a third.
Equal work with unequal seconds is the machine; unequal work is the engine.
"""
from __future__ import annotations

import cProfile
import pstats
import sys


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
    """Python-level function calls and bytecode instructions per update of ``fn()``, which
    makes ``n`` updates (the calls counted by ``cProfile``, the instructions by a trace
    function asking for every opcode; each hook leaves the other's count alone)."""
    executed = [0]

    def each_opcode(frame, event, arg):
        if event == "opcode":
            executed[0] += 1
        return each_opcode

    def each_frame(frame, event, arg):
        frame.f_trace_opcodes = True
        return each_opcode

    profile = cProfile.Profile()
    previous = sys.gettrace()
    sys.settrace(each_frame)
    profile.enable()
    try:
        fn()
    finally:
        profile.disable()
        sys.settrace(previous)
    total = pstats.Stats(profile).total_calls
    return {"work_python_calls_per_update": round(total / max(n, 1), 1),
            "work_python_bytecodes_per_update": round(executed[0] / max(n, 1), 1)}
