"""Graph algorithms on edge collections ``(src, dst)`` (``(src, dst, weight)`` for paths)."""
from __future__ import annotations

import numpy as np

from ..collection import Collection


def _undirected(edges: Collection) -> Collection:
    return edges.concat(edges.project(1, 0))


def _nodes(edges: Collection) -> Collection:
    return edges.project(0).concat(edges.project(1)).distinct()


def connected_components(edges: Collection, max_iterations: int | None = None) -> Collection:
    """``(node, label)``: label = the smallest node id in the node's (weakly) connected
    component, by label propagation (Naiad report, Figure 3).

    >>> flow = Dataflow(); edges = flow.input("edges")
    >>> labels = connected_components(edges).view()
    >>> edges.insert([(1, 2), (3, 4)]); _ = flow.step()
    >>> sorted(labels.to_dict())
    [(1, 1), (2, 1), (3, 3), (4, 3)]
    """
    graph = _undirected(edges.project(0, 1))
    labels = _nodes(edges.project(0, 1)).project(0, 0)
    return labels.iterate(
        lambda lab: lab.join(graph, select=(2, 1)).concat(lab).min(),
        max_iterations=max_iterations, name="cc").rename("node", "label")


def connected_components_prioritized(edges: Collection, max_iterations: int | None = None,
                                     log_buckets: bool = True) -> Collection:
    """Connected components with the prioritized fixed point (CIDR 2013, Figure 10): small
    labels are propagated first, so a node rarely adopts a label it will later discard.

    Labels enter in order of priority ``bit_length(label)`` (``log_buckets``, as the Rust
    crate's ``propagate`` does; it keeps the number of priority classes small) or of the label
    itself (``log_buckets=False``, the paper's form).  Same result as
    :func:`connected_components`.
    """
    graph = _undirected(edges.project(0, 1))
    labels = _nodes(edges.project(0, 1)).project(0, 0)
    priority = _bit_length_priority if log_buckets else 1
    return labels.prioritize(
        priority, lambda lab: lab.join(graph, select=(2, 1)).concat(lab).min(),
        max_iterations=max_iterations, name="cc-prioritized").rename("node", "label")


def _bit_length_priority(node, label):
    """``label.bit_length()`` for integer labels (0 for other kinds: one priority class)."""
    if label.dtype.kind not in "iu":
        return np.zeros(len(label), dtype=np.int64)
    label = np.maximum(label, 0)
    return np.where(label > 0, np.floor(np.log2(np.maximum(label, 1))).astype(np.int64) + 1, 0)


def reachability(edges: Collection, roots: Collection, max_iterations: int | None = None):
    """``(node, root)`` for every node reachable from a root along directed edges (BFS)."""
    start = roots.project(0, 0)
    return start.iterate(
        lambda r: r.join(edges.project(0, 1), select=(2, 1)).concat(r).distinct(),
        max_iterations=max_iterations, name="reach").rename("node", "root")


def shortest_paths(edges: Collection, sources: Collection, max_iterations: int | None = None):
    """``(node, distance)`` from the nearest source over weighted edges ``(src, dst, w)``
    (Bellman-Ford; Naiad report, Figure 19)."""
    dist = sources.project(0).map_columns(lambda n: (n, np.zeros(len(n), dtype=np.int64)))
    return dist.iterate(
        lambda d: d.join(edges.project(0, 1, 2)).map_columns(lambda s, dd, dst, w: (dst, dd + w))
        .concat(d).min(),
        max_iterations=max_iterations, name="sssp").rename("node", "distance")


def strongly_connected_components(edges: Collection, max_iterations: int | None = None):
    """The edges ``(src, dst)`` that lie inside a strongly connected component (Naiad report,
    Figure 8): alternately trim edges whose endpoints get different forward-reachability
    labels, and the same on the reversed graph, until nothing changes (a doubly nested loop).
    """
    def trim(graph: Collection) -> Collection:
        # label every node with the smallest node that reaches it; seed from destinations
        nodes = graph.project(1).distinct().project(0, 0)
        reach = nodes.iterate(
            lambda lab: lab.join(graph, select=(2, 1)).concat(nodes).min(),
            name="reach")
        # keep edges whose two endpoints carry the same label
        return (graph.join(reach, select=(1, 0, 2))          # (dst, src, label(src))
                .join(reach, select=(1, 0, 2, 3))            # (src, dst, label(src), label(dst))
                .filter_columns(lambda s, d, ls, ld: ls == ld)
                .project(0, 1))

    def body(graph: Collection) -> Collection:
        forward = trim(graph)
        return trim(forward.project(1, 0)).project(1, 0)

    return edges.project(0, 1).iterate(body, max_iterations=max_iterations,
                                       name="scc").rename("src", "dst")
