"""Graph algorithms on edge collections ``(src, dst)`` (``(src, dst, weight)`` for paths)."""
from __future__ import annotations

import numpy as np

from .. import tuning
from ..collection import Collection
from ..operators.choose import SizeChoice
from ..why.witness import attach, shortest_path


def _undirected(edges: Collection) -> Collection:
    return edges.concat(edges.project(1, 0))


def _seeds(graph: Collection) -> Collection:
    """``(node, node)`` for every node of an undirected ``graph`` (both directions present):
    the sources are all the nodes, so two operators instead of four per update."""
    return graph.project(0).distinct().project(0, 0)


def _decided(edges: Collection, threshold: int) -> tuple[Collection, object]:
    """``edges`` passed through :meth:`~ddlab.engine.collection.Collection.decide`: the first
    load fixes plain or prioritized propagation; and the priority function that follows it:
    one priority class for every label (that is plain label propagation: times ``(0, i)``
    order exactly like ``i``) or :func:`_bit_length_priority`."""
    decision = SizeChoice(threshold, {"small": "plain label propagation",
                                      "large": "prioritized label propagation"}, what="edges")
    decided = edges.decide(decision)

    def priority(node, label):
        # the choice is upstream of every seed, so it has decided before any seed gets here
        if decision.choice == "large":
            return _bit_length_priority(node, label)
        return np.zeros(len(label), dtype=np.int64)

    return decided, priority


def explain_choice(result: Collection) -> str | None:
    """Which label propagation an automatic ``connected_components`` / SCC upstream of
    ``result`` chose, and why (``None`` when none is: a program built with an explicit
    choice).  The same sentence names the ``choose`` operators in ``flow.stats()``."""
    flow = result.flow
    upstream = flow.upstream(result)
    found = [op.decision.explain() for op in flow.operators
             if op.kind == "choose" and op.id in upstream]
    return "; ".join(found) if found else None


def connected_components(edges: Collection, max_iterations: int | None = None,
                         prioritized: bool | None = None) -> Collection:
    """``(node, label)``: label = the smallest node id in the node's (weakly) connected
    component, by label propagation (Naiad report, Figure 3).

    ``prioritized``: ``False`` plain label propagation, ``True`` the prioritized fixed point
    (:func:`connected_components_prioritized`), ``None`` (default) chooses by the size of the
    first load: prioritized from :data:`~ddlab.engine.tuning.CC_PRIORITIZED_FROM_EDGES` edges
    (from scratch it is 4x faster and 3x smaller there), plain below (cheaper per update, as
    fast from scratch on small graphs).  The first load decides for good (plain is the same
    prioritized loop with one priority class).  :func:`explain_choice` and the ``choose``
    operator's name in ``flow.stats()`` say which and why.

    >>> flow = Dataflow(); edges = flow.input("edges")
    >>> cc = connected_components(edges); labels = cc.view()
    >>> edges.insert([(1, 2), (3, 4)]); _ = flow.step()
    >>> sorted(labels.to_dict())
    [(1, 1), (2, 1), (3, 3), (4, 3)]
    >>> explain_choice(cc)
    'plain label propagation: first load 2 edges < 250,000'
    """
    if prioritized:
        return connected_components_prioritized(edges, max_iterations)
    edges = edges.project(0, 1)
    priority = False
    if prioritized is None:
        edges, priority = _decided(edges, tuning.CC_PRIORITIZED_FROM_EDGES)
    graph = _undirected(edges)
    labels = _seeds(graph)
    return _propagate_min_label(graph, labels, "cc", priority,
                                max_iterations).rename("node", "label")


def connected_components_prioritized(edges: Collection, max_iterations: int | None = None,
                                     log_buckets: bool = True) -> Collection:
    """Connected components with the prioritized fixed point (CIDR 2013, Figure 10): small
    labels are propagated first, so a node rarely adopts a label it will later discard.

    Labels enter in order of priority ``bit_length(label)`` (``log_buckets``, as the Rust
    crate's ``propagate`` does; it keeps the number of priority classes small) or of the label
    itself (``log_buckets=False``, the paper's form).  Same result as
    :func:`connected_components`.

    >>> flow = Dataflow(); edges = flow.input("edges")
    >>> labels = connected_components_prioritized(edges).view()
    >>> edges.insert([(5, 6), (6, 1), (8, 9)]); _ = flow.step()
    >>> sorted(labels.to_dict())
    [(1, 1), (5, 1), (6, 1), (8, 8), (9, 8)]
    """
    graph = _undirected(edges.project(0, 1))
    labels = _seeds(graph)
    priority = _bit_length_priority if log_buckets else 1
    return _propagate_min_label(graph, labels, "cc-prioritized", priority,
                                max_iterations).rename("node", "label")


def _bit_length_priority(node, label):
    """``label.bit_length()`` for integer labels (0 for other kinds: one priority class)."""
    if label.dtype.kind not in "iu":
        return np.zeros(len(label), dtype=np.int64)
    label = np.maximum(label, 0)
    return np.where(label > 0, np.floor(np.log2(np.maximum(label, 1))).astype(np.int64) + 1, 0)


def reachability(edges: Collection, roots: Collection, max_iterations: int | None = None):
    """``(node, root)`` for every node reachable from a root along directed edges: a
    breadth-first fixed point (the Rust crate's ``reachability``; Naiad report, Figure 19
    without weights).

    >>> flow = Dataflow(); edges = flow.input("edges"); roots = flow.input("roots")
    >>> reach = reachability(edges, roots).view()
    >>> roots.insert([1]); edges.insert([(1, 2), (2, 3), (4, 1)]); _ = flow.step()
    >>> sorted(reach.to_dict())
    [(1, 1), (2, 1), (3, 1)]
    """
    start = roots.project(0, 0)
    return start.iterate(
        lambda r: r.join(edges.project(0, 1), select=(2, 1)).concat(r).distinct(),
        max_iterations=max_iterations, name="reach").rename("node", "root")


def shortest_paths(edges: Collection, sources: Collection, max_iterations: int | None = None):
    """``(node, distance)`` from the nearest source over weighted edges ``(src, dst, w)``
    (Bellman-Ford; Naiad report, Figure 19).

    >>> flow = Dataflow(); edges = flow.input("edges"); roots = flow.input("roots")
    >>> dist = shortest_paths(edges, roots).view()
    >>> roots.insert([1]); edges.insert([(1, 2, 5), (2, 3, 1), (1, 3, 9)]); _ = flow.step()
    >>> sorted(dist.to_dict())
    [(1, 0), (2, 5), (3, 6)]
    """
    return _distances(edges, sources).iterate(
        lambda d: _relax(d, edges).concat(d).min(),
        max_iterations=max_iterations, name="sssp").rename("node", "distance")


def shortest_paths_prioritized(edges: Collection, sources: Collection,
                               max_iterations: int | None = None):
    """Shortest paths with the prioritized fixed point: tentative distances are settled in
    increasing order (priority = the distance), as Dijkstra's algorithm would, so few
    distances are improved more than once.  Same result as :func:`shortest_paths`.

    >>> flow = Dataflow(); edges = flow.input("edges"); sources = flow.input("sources")
    >>> dist = shortest_paths_prioritized(edges, sources).view()
    >>> sources.insert([1]); edges.insert([(1, 2, 5), (2, 3, 1), (1, 3, 9)])
    >>> _ = flow.step(); edges.remove([(2, 3, 1)]); _ = flow.step()   # the short way to 3 goes
    >>> sorted(dist.to_dict())
    [(1, 0), (2, 5), (3, 9)]
    """
    return _distances(edges, sources).prioritize(
        lambda n, d: d, lambda d: _relax(d, edges).concat(d).min(),
        max_iterations=max_iterations, name="sssp-prioritized").rename("node", "distance")


def _distances(edges, sources):
    return sources.project(0).map_columns(lambda n: (n, np.zeros(len(n), dtype=np.int64)))


def _relax(dist, edges):
    return dist.join(edges.project(0, 1, 2)).map_columns(lambda s, d, dst, w: (dst, d + w))


def top_label_per_component(components: Collection, node_labels: Collection, k: int = 1):
    """``(component, count, label)``: the ``k`` most frequent labels among the nodes (or
    events) of each component, e.g. the most popular hashtag per connected component (the
    CIDR paper's demo).  ``components`` holds ``(node, component)``, ``node_labels`` holds
    ``(node, label)`` with one record per occurrence.

    >>> flow = Dataflow(); edges = flow.input("edges"); tags = flow.input("tags")
    >>> top = top_label_per_component(connected_components(edges), tags).view()
    >>> edges.insert([(1, 2), (3, 4)]); tags.insert([(1, "a"), (2, "b"), (2, "b"), (4, "c")])
    >>> _ = flow.step(); sorted(top.to_dict())
    [(1, 2, 'b'), (3, 1, 'c')]
    """
    per_component = components.join(node_labels, select=(1, 2))     # (component, label)
    counts = per_component.count(key_columns=2)                       # (component, label, n)
    return counts.project(0, 2, 1).top_k(k).rename("component", "count", "label")


def _propagate_min_label(edges: Collection, nodes: Collection, name: str, priority,
                         max_iterations: int | None = None) -> Collection:
    """``(node, label)``: the smallest seed label that reaches each node along ``edges``,
    where ``nodes`` holds the seeds ``(node, label)`` (the loop body of CC and of SCC's trim).

    ``priority`` false: plain label propagation.  Otherwise a prioritized fixed point with that
    priority (``True`` means :func:`_bit_length_priority`): small labels spread first, so few
    nodes adopt a label they later give up (much less work on large graphs)."""
    def step(lab: Collection) -> Collection:
        return lab.join(edges, select=(2, 1)).concat(lab).min()

    if priority is False or priority is None:
        return nodes.iterate(step, max_iterations=max_iterations, name=name)
    if priority is True:
        priority = _bit_length_priority
    return nodes.prioritize(priority, step, max_iterations=max_iterations, name=name)


def _trim(cycle: Collection, edges: Collection, prioritized: bool,
          max_iterations: int | None = None) -> Collection:
    """The edges of ``edges`` whose endpoints get the same label when the smallest node id is
    propagated along ``cycle``, reversed.  Labels are seeded at edge destinations (trap 2 of
    the design note), from the full graph, so seeds do not change as ``cycle`` shrinks."""
    edges = edges.enter(cycle)
    nodes = edges.project(1, 1)
    labels = _propagate_min_label(cycle, nodes, "reach", prioritized, max_iterations)
    return (edges.join(labels, select=(1, 0, 2))          # (dst, src, label(src))
            .join(labels, select=(1, 0, 2, 3))            # (src, dst, label(src), label(dst))
            .filter_columns(lambda s, d, ls, ld: ls == ld)
            .project(1, 0))


def strongly_connected_components(edges: Collection, max_iterations: int | None = None,
                                  prioritized: bool | None = None):
    """The edges ``(src, dst)`` that lie inside a strongly connected component (Naiad report,
    Figure 8; the Rust crate's ``scc``).  A doubly nested loop: each outer iteration keeps the
    edges whose endpoints carry equal forward labels (smallest node reaching them along the
    current edge set), then does the same on the reversed graph, until nothing changes.
    ``prioritized`` propagates labels with the prioritized fixed point (best on large graphs);
    ``False`` uses plain label propagation (fewer, cheaper steps on small changing windows);
    ``None`` (default) chooses by the first load: prioritized from
    :data:`~ddlab.engine.tuning.SCC_PRIORITIZED_FROM_EDGES` edges, plain below (see :func:`explain_choice`).
    ``flow.why`` explains an edge of the result by a shortest cycle through it (a witness,
    :mod:`~ddlab.engine.why.witness`), checked by replay like any explanation.

    >>> flow = Dataflow(); edges = flow.input("edges")
    >>> scc = strongly_connected_components(edges).view()
    >>> edges.insert([(1, 2), (2, 1), (2, 3)]); _ = flow.step()
    >>> sorted(scc.to_dict())
    [(1, 2), (2, 1)]
    """
    graph = edges.project(0, 1)
    if prioritized is None:
        graph, prioritized = _decided(graph, tuning.SCC_PRIORITIZED_FROM_EDGES)
    reverse = graph.project(1, 0)

    def body(cycle: Collection) -> Collection:
        return _trim(_trim(cycle, graph, prioritized, max_iterations), reverse, prioritized,
                     max_iterations)

    result = graph.iterate(body, max_iterations=max_iterations, name="scc").rename("src", "dst")
    return attach(result, edges, _cycle_through, "a cycle through the edge")


def _cycle_through(record, edges) -> list | None:
    """Records of ``edges`` forming a cycle through the SCC edge ``record``: the edge and a
    shortest path back (``flow.why``'s witness: an edge lies inside a strongly connected
    component exactly when such a cycle exists, and on the cycle alone the program keeps it)."""
    u, v = record[0], record[1]
    edge = next((r for dst, r in edges.out_edges([u]).get(u, ()) if dst == v), None)
    back = shortest_path(v, u, edges) if edge is not None else None
    if back is None:
        return None
    return list(dict.fromkeys([edge] + back))
