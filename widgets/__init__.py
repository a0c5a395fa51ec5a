"""Notebook widgets: the explorer (slide a window over real data and watch components,
per-iteration differences, the lattice trace and latency move live, with ipywidgets + bokeh),
the demo that builds it in one call, and the progress row of long operations.

A layer over the engine's and the window feed's public APIs only (``flow.stats()``,
``flow.loop_differences``, ``flow.lattice``, ``flow.epoch_log``, views, ``WindowFeed``).
Names resolve lazily (PEP 562): ``Progress`` needs only ipywidgets (a core dependency, so the
magics use it without the lab extra); the explorer's names need bokeh and jupyter_bokeh, and
without them one line names ``pip install 'ddlab[lab]'``.

>>> from ddlab.widgets import demo                                  # doctest: +SKIP
>>> demo()                       # CollegeMsg; demo("travian") for each player's alliance  # doctest: +SKIP
>>> from ddlab.widgets import explore, component_collections      # doctest: +SKIP
>>> ex = explore(feed, {"scc": scc}, program=component_collections(edges, result=scc))  # doctest: +SKIP
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from ._deps import require_lab

#: public name -> (module, needs the lab extra)
_EXPORTS = {
    "Explorer": ("explorer", True), "explore": ("explorer", True),
    "explore_graph": ("explorer", True), "ExplorerOptions": ("options", False),
    "ComponentCollections": ("program", True), "component_collections": ("program", True),
    "References": ("references", True), "window_references": ("references", True),
    "demo": ("naiad", True), "DemoData": ("naiad", True), "DEMO_DATA": ("naiad", True),
    "Progress": ("progress", False), "NullProgress": ("progress", False),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    entry = _EXPORTS.get(name)
    if entry is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, needs_lab = entry
    if needs_lab:
        require_lab()
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # pragma: no cover  (names for type checkers; served lazily above)
    from .naiad import DEMO_DATA, DemoData, demo
    from .explorer import Explorer, explore, explore_graph
    from .options import ExplorerOptions
    from .program import ComponentCollections, component_collections
    from .progress import NullProgress, Progress
    from .references import References, window_references
