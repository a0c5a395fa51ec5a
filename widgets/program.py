"""The components program behind the results panel.

Why a module of its own: the results panel needs, besides the user's SCC/CC result, a
``(node, component)`` collection, a ``(component, count, label)`` collection and each
component's labelled total (for the top label's share), and these must be declared before
the flow's first step (the engine refuses later additions).  :func:`component_collections`
declares them in one call and says which reference lines fit the program.
"""
from __future__ import annotations

from dataclasses import dataclass

import ddlab  # noqa: F401  (the docstring example uses it)
from ddlab import algorithms

from .references import ALGORITHMS

__all__ = ["ComponentCollections", "component_collections"]


@dataclass
class ComponentCollections:
    """What the components panel and the reference lines read: the algorithm's ``result``,
    the ``components`` ``(node, component)``, the ``top_labels`` ``(component, count,
    label)`` and ``label_totals`` ``(component, total)`` (``None`` without labels), and a
    ``window`` view of the edges (the from-scratch references read the current window from
    it).  Each is a Collection or a View; ``algorithm`` (``"scc"``/``"cc"``) names the
    program the reference lines recompute (``None``: no reference lines).  ``label_name``
    heads the label column (e.g. ``"alliance"``); ``no_labels`` is what the panel says when
    there are none."""

    algorithm: str | None
    result: object = None
    components: object = None
    top_labels: object | None = None
    label_totals: object | None = None
    window: object | None = None
    noun: str | None = None
    label_name: str = "label"
    no_labels: str = "this data has no labels"

    def __post_init__(self):
        if self.algorithm is not None and self.algorithm not in ALGORITHMS:
            raise ValueError(f"explore: references={self.algorithm!r} is not one of "
                             f"{sorted(ALGORITHMS)} (or None)")
        if self.noun is None:
            self.noun = ALGORITHMS[self.algorithm][1] if self.algorithm else "components"

    def parts(self) -> dict:
        """The collections the explorer reads, by role (those given)."""
        roles = ("components", "top_labels", "label_totals", "window")
        return {role: getattr(self, role) for role in roles if getattr(self, role) is not None}


def component_collections(edges, algorithm: str = "scc", *, result=None, labels="auto",
                          window: bool = True, label_name: str = "label",
                          no_labels: str = "this data has no labels") -> ComponentCollections:
    """Declare the collections the components panel reads, on ``edges`` (``src, dst[,
    label]``), before the flow's first step.

    ``result``: the algorithm's collection if it exists already (else it is built with plain
    label propagation, best on small changing windows and what the "incremental" reference
    line recomputes).  ``labels``: ``"auto"`` (the edges' third column when they have one),
    ``None`` (sizes only), a column index, or a ``(node, label)`` collection.  An event's
    label counts for its source node, so a component's top label is the most frequent label
    among the window's records its members sent, and its share is that count over all of
    them.  ``window``: also keep a view of the edges (the from-scratch references read the
    current window from it).

    >>> flow = ddlab.Dataflow(); edges = flow.input("edges", columns=["src", "dst", "label"])
    >>> cc = component_collections(edges, "cc")
    >>> top, totals = cc.top_labels.view(), cc.label_totals.view()
    >>> edges.insert([(1, 2, "a"), (2, 1, "b"), (2, 3, "b")]); _ = flow.step()
    >>> sorted(top.to_dict()), sorted(totals.to_dict())
    ([(1, 2, 'b')], [(1, 3)])
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"component_collections: algorithm {algorithm!r} is not one of "
                         f"{sorted(ALGORITHMS)}")
    graph = edges.project(0, 1)
    if algorithm == "scc":
        if result is None:
            result = algorithms.strongly_connected_components(graph, prioritized=False)
        components = algorithms.connected_components(result, prioritized=False)
    else:
        if result is None:
            result = algorithms.connected_components(graph, prioritized=False)
        components = result
    arity = len(edges.columns) if edges.columns else None
    if isinstance(labels, str) and labels == "auto":
        labels = 2 if arity is not None and arity >= 3 else None
    if labels is None:
        node_labels = None
    elif isinstance(labels, int):
        if arity is not None and labels >= arity:
            raise ValueError(f"component_collections: labels={labels} but the edges have "
                             f"{arity} columns {edges.columns}")
        node_labels = edges.project(0, labels)
    else:
        node_labels = labels
    top = totals = None
    if node_labels is not None:
        top = algorithms.top_label_per_component(components, node_labels)
        totals = components.join(node_labels, select=(1,)).count().rename("component", "total")
    view = edges.view(name=f"window of {edges.name}") if window else None
    return ComponentCollections(algorithm, result, components, top, totals, view,
                                label_name=label_name, no_labels=no_labels)
