"""The components program behind the results panel, and the from-scratch reference curves.

Why a module of its own: the results panel needs, besides the user's SCC/CC result, a
``(node, component)`` collection and a ``(component, count, label)`` collection, and these
must be declared before the flow's first step (the engine refuses later additions).
:func:`component_collections` declares them in one call; :func:`graph_references` computes
the per-iteration reference lines (the CIDR paper's Figure 1) for one window from scratch.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import pandas as pd

import ddlab
from ddlab import algorithms

__all__ = ["ComponentCollections", "component_collections", "graph_references", "ALGORITHMS"]

#: Algorithm name -> (the loop scope its result is computed in, the results panel's noun).
ALGORITHMS = {"scc": ("root/scc", "strongly connected components"),
              "cc": ("root/cc", "connected components")}


@dataclass
class ComponentCollections:
    """What :func:`component_collections` declared: the algorithm's ``result``, the
    ``components`` ``(node, component)``, the ``top_labels`` ``(component, count, label)``
    (``None`` without labels) and a ``window`` view of the edges (for the references)."""

    algorithm: str
    result: object
    components: object
    top_labels: object | None
    window: object | None
    extra: dict = field(default_factory=dict)

    def options(self) -> dict:
        """The :func:`~ddlab.widgets.explore` keyword arguments for the full panel."""
        return {"components": self.components, "top_labels": self.top_labels,
                "window": self.window, "references": self.algorithm}


def component_collections(edges, algorithm: str = "scc", *, result=None, labels="auto",
                          window: bool = True) -> ComponentCollections:
    """Declare the collections the components panel reads, on ``edges`` (``src, dst[,
    label]``), before the flow's first step.

    ``result``: the algorithm's collection if it exists already (else it is built: SCC with
    plain label propagation, best on small changing windows; CC by label propagation).
    ``labels``: ``"auto"`` (the edges' third column when they have one), ``None`` (sizes
    only), a column index, or a ``(node, label)`` collection.  An event's label counts for its
    source node, so a component's top label is the most frequent label among the events its
    members sent.  ``window``: also keep a view of the edges (the from-scratch references
    read the current window from it).

    >>> flow = ddlab.Dataflow(); edges = flow.input("edges", columns=["src", "dst", "label"])
    >>> cc = component_collections(edges, "cc"); top = cc.top_labels.view()
    >>> edges.insert([(1, 2, "a"), (2, 1, "b"), (2, 3, "b")]); _ = flow.step()
    >>> sorted(top.to_dict())
    [(1, 2, 'b')]
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"component_collections: algorithm {algorithm!r} is not one of "
                         f"{sorted(ALGORITHMS)}")
    graph = edges.project(0, 1)
    if algorithm == "scc":
        if result is None:
            result = algorithms.strongly_connected_components(graph, prioritized=False)
        components = algorithms.connected_components(result)
    else:
        if result is None:
            result = algorithms.connected_components(graph)
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
    top = (algorithms.top_label_per_component(components, node_labels)
           if node_labels is not None else None)
    view = edges.view(name=f"window of {edges.name}") if window else None
    return ComponentCollections(algorithm, result, components, top, view)


def _scratch_curve(records: pd.DataFrame, algorithm: str, prioritized: bool,
                   loop: str | None = None) -> tuple[list, int]:
    """Records in difference per iteration of ``loop`` (default: the algorithm's outer loop)
    when ``records`` are computed from scratch in one epoch of a fresh flow, and the size of
    the result."""
    wanted = loop
    flow = ddlab.Dataflow("reference")
    edges = flow.input("edges", columns=["src", "dst"])
    if algorithm == "scc":
        out = algorithms.strongly_connected_components(edges, prioritized=prioritized)
        loop = "root/scc"
    elif prioritized:
        out = algorithms.connected_components_prioritized(edges)
        loop = "root/cc-prioritized"
    else:
        out = algorithms.connected_components(edges)
        loop = "root/cc"
    if wanted is not None:  # the same loop in this variant (CC's prioritized loop is renamed)
        loop = loop + wanted[len(ALGORITHMS[algorithm][0]):] if wanted.startswith(
            ALGORITHMS[algorithm][0]) else wanted
    view = out.view()
    if len(records):
        edges.update(records)
    flow.step()
    return [int(r) for r in flow.loop_differences(0, loop)["records"]], len(view)


def graph_references(algorithm: str, *, spark: bool = True) -> Callable[[pd.DataFrame], dict]:
    """A function ``references(window, loop=None)`` computing the reference lines of ``loop``
    (a scope path of the algorithm's program; default its outer loop) for one window's edges
    ``src, dst``:
    ``{"incremental": [...], "prioritized": [...], "stateless": [...]}`` records in difference
    per iteration, plus ``"stateless_source"``.

    Stateless is the Spark baseline (``stateless_cc``) for CC's loop when Spark is usable
    (and ``spark``); otherwise the engine's own full recount: a stateless system re-processes
    the whole loop variable every iteration (every node's label; every edge in SCC's outer
    loop), for as many iterations as the from-scratch run needed.
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"graph_references: algorithm {algorithm!r} is not one of "
                         f"{sorted(ALGORITHMS)}")

    def references(window: pd.DataFrame, loop: str | None = None) -> dict:
        records = window[["src", "dst"]].drop_duplicates().copy()
        records["diff"] = 1
        start = time.perf_counter()
        incremental, _ = _scratch_curve(records, algorithm, False, loop)
        prioritized, _ = _scratch_curve(records, algorithm, True, loop)
        stateless, source = None, None
        outer = loop is None or loop == ALGORITHMS[algorithm][0]
        if spark and algorithm == "cc" and outer and len(records):
            stateless = _spark_stateless(records)
            if stateless is not None:
                source = "Spark stateless_cc"
        if stateless is None:
            # A stateless system re-processes the whole loop variable every iteration: every
            # node's label in a label propagation (CC, SCC's inner loops), every edge in SCC's
            # outer loop.  Counted here, for as many iterations as the from-scratch run took.
            if algorithm == "scc" and outer:
                whole, source = len(records), "engine recount (every edge, every iteration)"
            else:
                whole = len(pd.unique(records[["src", "dst"]].to_numpy().ravel()))
                source = "engine recount (every node's label, every iteration)"
            stateless = [whole] * len(incremental)
        return {"incremental": incremental, "prioritized": prioritized, "stateless": stateless,
                "stateless_source": source, "seconds": time.perf_counter() - start}

    return references


def _spark_stateless(records: pd.DataFrame) -> list | None:
    try:
        from ddlab.sources import spark_status, stateless_cc

        ok, _ = spark_status()
        if not ok:
            return None
        result = stateless_cc(records)
        return [int(r) for r in result.iterations["records"]]
    except Exception:  # Spark missing or failing: fall back to the engine's recount
        return None
