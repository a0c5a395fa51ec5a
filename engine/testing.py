"""Process-wide switches for tests and benchmarks: not part of ddlab's API.

The engine's thresholds (``engine/tuning.py``) and its compiled kernels are read from module
globals on every run, so one switch changes every dataflow of the process at once.  That is
what a test of "the same program on every path" needs, and what a user must not reach for:
nothing under ``ddlab`` exports these, and the switches live here, apart from the settings
they change.  Each block holds one process-wide lock while it runs, so two threads switching
settings at once run their blocks one after the other instead of undoing each other's values
halfway through.

>>> from ddlab.engine import testing, tuning
>>> with testing.tuned("tiny", SMALL_KEYS=5):
...     tuning.SMALL_QUERY, tuning.SMALL_KEYS, tuning.FAST_PATHS
(2, 5, True)
>>> tuning.SMALL_QUERY
16
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

from . import kernels, tuning

#: held for the whole of a switched block (re-entrant: blocks nest)
SWITCH_LOCK = threading.RLock()


@contextmanager
def tuned(preset: str | None = None, **values):
    """Run a block with a preset of :data:`tuning.PRESETS` (``"tiny"``, ``"general"``,
    ``"numpy"``, ``"default"``) and/or single values, restoring every setting afterwards."""
    settings = dict(tuning.PRESETS[preset]) if preset is not None else {}
    settings.update(values)
    unknown = sorted(set(settings) - set(tuning.DEFAULTS))
    if unknown:
        raise KeyError(f"tuning has no setting {', '.join(unknown)}; see tuning.THRESHOLDS")
    with SWITCH_LOCK:
        saved = {name: getattr(tuning, name) for name in settings}
        try:
            for name, value in settings.items():
                setattr(tuning, name, value)
            yield
        finally:
            for name, value in saved.items():
                setattr(tuning, name, value)


@contextmanager
def use_kernels(on: bool):
    """Run a block with the compiled kernels on or off (on also means loaded now, compiling
    in this process if the cache is cold)."""
    with tuned(KERNELS=on):
        if on and kernels.available():
            kernels.warm_up()
        yield


__all__ = ["SWITCH_LOCK", "tuned", "use_kernels"]
