"""ddlab: a notebook-first differential dataflow environment.

The engine (``ddlab.engine``) knows nothing of Jupyter; ``%load_ext ddlab`` loads the magics
from ``ddlab.kernel_ext``.  In a Jupyter kernel, importing ddlab also gives every widget a
notebook displays a static snapshot beside it (``ddlab.widgets.snapshot``), so the notebook's
figures survive an export to HTML.  The public Python API is re-exported here, with ``ddlab.lattice``
and ``ddlab.algorithms`` (short names for the engine's modules); ``dir(ddlab)`` lists it.
"""
# Absolute imports on purpose: pytest imports this file as a plain module when the checkout's
# folder name is not a Python identifier (e.g. ``ddlab-main``), where relative imports fail.
from ddlab._version import __version__  # noqa: F401  (re-exported: __all__ below)
from ddlab.engine import *  # noqa: F403  (the engine's public API)
from ddlab.engine import __all__ as _engine_all
import ddlab.algorithms as algorithms  # noqa: F401  (after the engine: it builds on it)
import ddlab.lattice as lattice  # noqa: F401
from ddlab.engine.rules import rules  # noqa: F401  (ddlab.rules(text, inputs): Datalog rules)
from ddlab.engine.sql import sql  # noqa: F401  (ddlab.sql(text, inputs): a maintained SQL query)

__all__ = sorted(set(_engine_all) | {"algorithms", "lattice", "rules", "sql", "__version__"})
del _engine_all


def _snapshots_in_a_kernel() -> None:
    """In a Jupyter kernel (IPython already imported and running one), register the widgets'
    static snapshots; anywhere else, do nothing (and import nothing)."""
    import sys

    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None and getattr(shell, "kernel", None) is not None:
        from ddlab.widgets.snapshot import register

        register(shell)


_snapshots_in_a_kernel()


def __dir__():
    """The public API (what ``from ddlab import *`` gives) and the IPython extension hooks."""
    return sorted(__all__ + ["load_ipython_extension", "unload_ipython_extension"])


def load_ipython_extension(ipython):  # pragma: no cover - exercised through IPython
    """``%load_ext ddlab``: register the magics (imported lazily, so ``import ddlab`` stays light)."""
    from ddlab.kernel_ext import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython):  # pragma: no cover - exercised through IPython
    """``%unload_ext ddlab``."""
    from ddlab.kernel_ext import unload_ipython_extension as _unload

    _unload(ipython)
