"""ddlab: a notebook-first differential dataflow environment.

The engine (``ddlab.engine``) knows nothing of Jupyter; ``%load_ext ddlab`` loads the magics
from ``ddlab.kernel_ext``.  The public Python API is re-exported here.
"""
from __future__ import annotations

# Absolute imports on purpose: pytest imports this file as a plain module when the checkout's
# folder name is not a Python identifier (e.g. ``ddlab-main``), where relative imports fail.
from ddlab._version import __version__

import sys as _sys

from ddlab.engine import *  # noqa: F401,F403  (the engine's public API)
from ddlab.engine import __all__ as _engine_all
from ddlab.engine import algorithms
from ddlab.engine.rules import rules  # noqa: F401  (ddlab.rules(text, inputs): Datalog rules)

# ``ddlab.algorithms`` is the graph-algorithm library that lives in engine/algorithms/.
_sys.modules["ddlab.algorithms"] = algorithms

__all__ = list(_engine_all) + ["algorithms", "__version__"]


def load_ipython_extension(ipython):  # pragma: no cover - exercised through IPython
    """``%load_ext ddlab``: register the magics (imported lazily, so ``import ddlab`` stays light)."""
    from ddlab.kernel_ext import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython):  # pragma: no cover - exercised through IPython
    """``%unload_ext ddlab``."""
    from ddlab.kernel_ext import unload_ipython_extension as _unload

    _unload(ipython)
