"""Pausing Python's cyclic garbage collector while an explanation runs.

Why: an explanation of a long path allocates a few hundred thousand small tuples and dicts
(decoded records, their histories, the derivation), most of which it keeps (the epoch's
store, the answer).  Every 700 such allocations start a collection of the youngest objects,
every tenth of those a collection of the middle generation, and as the survivors pile up a
collection of the whole heap: each one traverses every object a notebook holds (the flow,
its replays, pandas, networkx...).  Measured on the long-path benchmark (``python -m
benchmarks why --dataset long-paths-20k``): two thirds of the time spent reading traces'
keys was the collector's, and the slowest connected-component explanations were those a
full collection fell into (about 300 ms each).  Paused for the explanation, the youngest
generation is collected once at its end instead (what it allocated, not the whole heap):
the same objects are freed, a little later.

Explanations nest (a record that left is explained on the previous epoch inside its own
explanation) and may run in several threads: the outermost pause decides, and the collector
is enabled again only if it was enabled when that pause began.
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

_LOCK = threading.Lock()
_DEPTH = [0]
_WAS_ENABLED = [False]


@contextmanager
def collector_paused():
    """Run a block with automatic garbage collection off (see the module docstring)."""
    with _LOCK:
        if _DEPTH[0] == 0:
            _WAS_ENABLED[0] = gc.isenabled()
            gc.disable()
        _DEPTH[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH[0] -= 1
            resume = _DEPTH[0] == 0 and _WAS_ENABLED[0]
            if resume:
                gc.enable()
        if resume:
            gc.collect(0)


__all__ = ["collector_paused"]
