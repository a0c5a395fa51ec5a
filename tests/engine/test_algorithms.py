"""Graph programs written with the public API, compared with networkx after every epoch of
random insertions and deletions: CC (Figure 3), prioritized CC (Figure 10), SCC (the doubly
nested loop of Figure 8), SSSP (Figure 19) and reachability."""
from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, strategies as st

import ddlab
from ddlab import algorithms

EDGE = st.tuples(st.integers(0, 12), st.integers(0, 12))
EPOCHS = st.lists(st.tuples(st.lists(EDGE, max_size=10), st.lists(st.integers(0, 50), max_size=5)),
                  min_size=1, max_size=6)


def _epochs(plan):
    """Turn (insertions, deletion picks) into edge-set changes; deletions pick existing edges."""
    present: set = set()
    for adds, picks in plan:
        adds = sorted(set(adds) - present)
        pool = sorted(present)
        rems = sorted({pool[p % len(pool)] for p in picks}) if pool else []
        rems = [r for r in rems if r not in adds]
        present = (present | set(adds)) - set(rems)
        yield adds, rems, set(present)


def cc_oracle(edges):
    g = nx.Graph(edges)
    return {(n, low): 1 for c in nx.connected_components(g) for low in [min(c)] for n in c}


def scc_oracle(edges):
    g = nx.DiGraph(edges)
    comp = {n: low for c in nx.strongly_connected_components(g) for low in [min(c)] for n in c}
    return {(a, b): 1 for a, b in edges if comp[a] == comp[b]}


def _with_threshold(name, program):
    """``program`` built with the automatic choice's threshold at one edge (its large branch)."""
    from ddlab.engine.algorithms import graphs

    def build(edges):
        old = getattr(graphs, name)
        setattr(graphs, name, 1)
        try:
            return program(edges)
        finally:
            setattr(graphs, name, old)
    return build


PROGRAMS = {
    "cc": (algorithms.connected_components, cc_oracle),
    "cc_plain": (lambda e: algorithms.connected_components(e, prioritized=False), cc_oracle),
    "cc_auto_large": (_with_threshold("CC_PRIORITIZED_FROM_EDGES",
                                      algorithms.connected_components), cc_oracle),
    "scc_plain": (lambda e: algorithms.strongly_connected_components(e, prioritized=False),
                  scc_oracle),
    "scc_prioritized": (lambda e: algorithms.strongly_connected_components(e, prioritized=True),
                        scc_oracle),
    "scc_auto_large": (_with_threshold("SCC_PRIORITIZED_FROM_EDGES",
                                       algorithms.strongly_connected_components), scc_oracle),
    "cc_prioritized": (algorithms.connected_components_prioritized, cc_oracle),
    "cc_prioritized_by_label": (
        lambda e: algorithms.connected_components_prioritized(e, log_buckets=False), cc_oracle),
    "scc": (algorithms.strongly_connected_components, scc_oracle),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@given(plan=EPOCHS)
def test_graph_program_matches_networkx(name, plan):
    program, oracle = PROGRAMS[name]
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    view = program(edges).view()
    for adds, rems, present in _epochs(plan):
        edges.insert(adds)
        edges.remove(rems)
        flow.step()
        assert view.to_dict() == oracle(present)


@pytest.mark.parametrize("program", [algorithms.shortest_paths,
                                     algorithms.shortest_paths_prioritized])
@given(plan=EPOCHS, weights=st.lists(st.integers(1, 5), min_size=200, max_size=200))
def test_shortest_paths_match_networkx(program, plan, weights):
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst", "w"])
    roots = flow.input("roots", columns=["node"])
    view = program(edges, roots).view()
    roots.insert([0, 5])
    weight = {}
    for adds, rems, present in _epochs(plan):
        for e in adds:
            weight[e] = weights[(e[0] * 13 + e[1]) % len(weights)]
        edges.insert([e + (weight[e],) for e in adds])
        edges.remove([e + (weight[e],) for e in rems])
        flow.step()
        g = nx.DiGraph()
        g.add_nodes_from([0, 5])
        g.add_weighted_edges_from([e + (weight[e],) for e in present])
        dist = nx.multi_source_dijkstra_path_length(g, {0, 5})
        assert view.to_dict() == {(n, d): 1 for n, d in dist.items()}


@given(plan=EPOCHS)
def test_reachability_matches_networkx(plan):
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    roots = flow.input("roots", columns=["node"])
    view = algorithms.reachability(edges, roots).view()
    roots.insert([1, 7])
    for adds, rems, present in _epochs(plan):
        edges.insert(adds)
        edges.remove(rems)
        flow.step()
        g = nx.DiGraph(list(present))
        g.add_nodes_from([1, 7])
        want = {(n, r): 1 for r in (1, 7) for n in nx.descendants(g, r) | {r}}
        assert view.to_dict() == want


def test_mutual_recursion_even_odd_distances():
    """Two loop variables defined in terms of each other: nodes at even / odd hop counts."""
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    roots = flow.input("roots", columns=["node"])

    def body(even, odd):
        step_from_odd = odd.join(edges, select=(1,)).concat(roots).distinct()
        step_from_even = even.join(edges, select=(1,)).distinct()
        return step_from_odd, step_from_even

    even, odd = flow.iterate([roots, roots.filter(lambda r: False)], body)
    even_view, odd_view = even.view(), odd.view()
    roots.insert([0])
    edges.insert([(0, 1), (1, 2), (2, 3), (3, 1)])
    flow.step()
    g = nx.DiGraph([(0, 1), (1, 2), (2, 3), (3, 1)])
    frontier = {0}
    even_set, odd_set = {0}, set()
    for hop in range(1, 10):
        frontier = {m for n in frontier for m in g.successors(n)}
        (even_set if hop % 2 == 0 else odd_set).update(frontier)
    assert set(even_view.to_dict()) == even_set
    assert set(odd_view.to_dict()) == odd_set
    edges.remove([(3, 1)])
    flow.step()
    assert set(even_view.to_dict()) == {0, 2}
    assert set(odd_view.to_dict()) == {1, 3}


@given(plan=EPOCHS, tags=st.lists(st.tuples(st.integers(0, 12), st.sampled_from("abc")),
                                  max_size=30))
def test_top_label_per_component_matches_networkx(plan, tags):
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    node_tags = flow.input("tags", columns=["node", "tag"])
    view = algorithms.top_label_per_component(algorithms.connected_components(edges),
                                              node_tags, k=2).view()
    node_tags.insert(tags)
    for adds, rems, present in _epochs(plan):
        edges.insert(adds)
        edges.remove(rems)
        flow.step()
        g = nx.Graph(list(present))
        want = {}
        for comp in nx.connected_components(g):
            counts = {}
            for node, tag in tags:
                if node in comp:
                    counts[tag] = counts.get(tag, 0) + 1
            best = sorted(((n, t) for t, n in counts.items()), reverse=True)[:2]
            want.update({(min(comp), n, t): 1 for n, t in best})
        assert view.to_dict() == want


def test_docstring_examples():
    import doctest

    from ddlab.engine.algorithms import graphs

    result = doctest.testmod(graphs, extraglobs={"Dataflow": ddlab.Dataflow})
    assert result.attempted >= 5 and result.failed == 0
