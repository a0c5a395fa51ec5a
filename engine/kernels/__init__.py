"""Compiled per-key kernels (numba): the reduce's per-key work for a batch of keys in one call.

Why: a small change touches a few keys, and the numpy path pays tens of numpy calls (each a
microsecond or two of fixed cost) per operator run, while a Python loop pays per history row.
A compiled kernel pays neither: it finds each key's rows in the trace batches, accumulates
them at the time, consolidates, evaluates the built-in logic, diffs against the previous
output and finds the later interesting times, in one or two calls.

The numpy (and Python) paths stay as the reference: every kernel is tested equal to them, and
the fuzzer runs programs with the kernels on and off.  ``DDLAB_KERNELS=0`` turns the kernels
off; without numba (not installed, or failing to import) the engine says so once and runs on
its numpy path.

Kernels are compiled on first use and cached on disk (``cache=True``: next to the sources,
or, when that folder is read-only, in numba's per-user cache directory; ``NUMBA_CACHE_DIR``
overrides both).  :func:`warm_up` compiles (or loads) every kernel and says how long it took.
"""
from __future__ import annotations

import os
import warnings
from contextlib import contextmanager
from time import perf_counter

#: Whether the kernels are used (when numba imports).  ``DDLAB_KERNELS=0`` turns them off.
enabled: bool = os.environ.get("DDLAB_KERNELS", "1") != "0"

_state = {"checked": False, "available": False, "reason": None, "warned": False}


def available() -> bool:
    """Whether numba imports (checked once, lazily: importing numba takes a few tenths of a
    second, paid by the first program that reaches a kernel, not by ``import ddlab``)."""
    if not _state["checked"]:
        _state["checked"] = True
        try:
            import numba  # noqa: F401
        except Exception as err:  # ImportError, or a numba/numpy version mismatch
            _state["reason"] = f"{type(err).__name__}: {err}"
        else:
            _state["available"] = True
    return _state["available"]


def active() -> bool:
    """Whether an operator should take its kernel path now (enabled and numba usable); the
    first time numba is missing it says so, once."""
    if not enabled:
        return False
    if available():
        return True
    if not _state["warned"]:
        _state["warned"] = True
        warnings.warn(f"ddlab: numba is not usable ({_state['reason']}); the engine runs on "
                      f"its numpy path (correct, slower per small change). "
                      f"pip install numba to compile the per-key kernels.",
                      RuntimeWarning, stacklevel=3)
    return False


@contextmanager
def use_kernels(on: bool):
    """Run a block with the kernels on or off (the tests run programs both ways)."""
    global enabled
    previous, enabled = enabled, on
    try:
        yield
    finally:
        enabled = previous


def warm_up() -> float:
    """Compile (or load from the disk cache) every kernel; returns the seconds it took, the
    first-use cost a fresh process pays (the benchmarks report it)."""
    if not available():
        return 0.0
    start = perf_counter()
    from . import reduce as _reduce

    _reduce.warm_up()
    return perf_counter() - start


def cache_dir() -> str | None:
    """Where numba caches the compiled kernels (``None`` when numba is unavailable)."""
    if not available():
        return None
    from .histories import scan_sorted

    impl = getattr(scan_sorted, "_cache", None)
    locator = getattr(impl, "_cache_path", None)
    return str(locator) if locator is not None else None


__all__ = ["enabled", "available", "active", "use_kernels", "warm_up", "cache_dir",
           "reduce_process"]


_reduce_process = None


def reduce_process(op, t, inputs, pending) -> bool:
    """``Reduce.process`` on the kernels (see :mod:`.reduce`); ``False`` when it declines."""
    global _reduce_process
    if _reduce_process is None:
        from .reduce import process

        _reduce_process = process
    return _reduce_process(op, t, inputs, pending)
