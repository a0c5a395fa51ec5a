"""The explorer: slide a window over real data and watch components, per-iteration
differences, the lattice trace and latency move live (ipywidgets + bokeh).

A layer over the engine's and the window feed's public APIs only (``flow.stats()``,
``flow.loop_differences``, ``flow.lattice``, ``flow.epoch_log``, views, ``WindowFeed``).

>>> from ddlab.widgets import explore, component_collections   # doctest: +SKIP
>>> ex = explore(feed, {"scc": scc}, **component_collections(edges, result=scc).options())  # doctest: +SKIP
"""
from __future__ import annotations

from ._deps import require_lab

require_lab()

from .explorer import Explorer, explore, explore_graph  # noqa: E402
from .program import ComponentCollections, component_collections, graph_references  # noqa: E402

__all__ = ["Explorer", "explore", "explore_graph", "ComponentCollections",
           "component_collections", "graph_references"]
