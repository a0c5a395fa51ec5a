"""Witnesses (``engine/why/witness.py``): an algorithm's own short reason for a record, here
the strongly connected components' cycle through an edge, checked against networkx and by
the engine's replay, and given up for the operators' own rules when its check fails."""
import networkx as nx
import pytest

import ddlab
from ddlab.algorithms import connected_components, strongly_connected_components
from ddlab.engine.why import lineage, witness


def _scc_flow(edge_list, columns=("src", "dst")):
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=list(columns))
    scc = strongly_connected_components(edges)
    view = scc.view()
    edges.insert(edge_list)
    flow.step()
    return flow, edges, scc, view


def _random_digraph(seed, nodes=60, edges=150):
    return sorted(nx.gnm_random_graph(nodes, edges, seed=seed, directed=True).edges)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_scc_edge_is_explained_by_a_shortest_cycle_through_it(seed):
    """Every edge inside a component: the explanation is the edge and a shortest path back
    (networkx's distance), replayed to the record, and the derivation says so."""
    edge_list = _random_digraph(seed)
    graph = nx.DiGraph(edge_list)
    flow, _, scc, view = _scc_flow(edge_list)
    inside = sorted(view.to_dict())
    assert len(inside) >= 10
    for u, v in inside[:25]:
        why = flow.why(scc, (u, v))
        assert why.present and why.verified and why.method == "concise"
        got = [tuple(r) for r in why.inputs["edges"][["src", "dst"]].values.tolist()]
        assert (u, v) in got
        assert len(got) == nx.shortest_path_length(graph, v, u) + 1
        cycle = nx.DiGraph(got)
        assert nx.has_path(cycle, v, u) and nx.is_strongly_connected(cycle)
        root = why.nodes()[0]
        assert root["note"] == f"a cycle through the edge: {len(got)} records of edges"


def test_the_cycle_is_much_smaller_than_the_trims_derivation():
    """What the witness replaces: the operators' rules explain an edge by the trims' labels,
    paths from the component's smallest node; the cycle is a fraction of that."""
    ring = [(i, (i + 1) % 40) for i in range(40)] + [(i, (i + 7) % 40) for i in range(40)]
    flow, _, scc, _ = _scc_flow(ring)
    with_witness = flow.why(scc, (20, 21))
    scc.op.witness = None
    without = flow.why(scc, (20, 21))
    assert with_witness.verified and without.verified
    assert with_witness.size == 1 + nx.shortest_path_length(nx.DiGraph(ring), 21, 20)
    assert with_witness.size < without.size / 2
    assert len(with_witness.steps) < len(without.steps) / 10


def test_self_loops_and_extra_fields():
    """A self-loop is its own cycle; records with more fields (a weight) are the witness's
    records as the input holds them."""
    edge_list = [(1, 1, 5), (1, 2, 3), (2, 3, 4), (3, 1, 1), (3, 1, 9), (3, 4, 2)]
    flow, _, scc, view = _scc_flow(edge_list, columns=("src", "dst", "w"))
    assert set(view.to_dict()) == {(1, 1), (1, 2), (2, 3), (3, 1)}
    loop = flow.why(scc, (1, 1))
    assert loop.verified and loop.records() == {"edges": {(1, 1, 5): 1}}
    tri = flow.why(scc, (1, 2))
    assert tri.verified and tri.records() == {"edges": {(1, 2, 3): 1, (2, 3, 4): 1,
                                                        (3, 1, 1): 1}}


def test_the_same_cycle_whether_the_argument_is_read_whole_or_by_key(monkeypatch):
    """A large argument is searched level by level with key reads: the same explanations."""
    edge_list = _random_digraph(5, nodes=80, edges=220)
    flow, _, scc, view = _scc_flow(edge_list)
    records = sorted(view.to_dict())[:20]

    def answers():
        out = []
        for rec in records:
            why = flow.why(scc, rec)
            out.append((why.verified, why.records(), why.tree()))
        return out

    whole = answers()
    monkeypatch.setattr(witness, "WHOLE_ROWS", 0)
    flow.step()                                   # a new epoch: nothing kept from before
    assert answers() == whole


def test_a_witness_that_fails_its_check_gives_way_to_the_operators_rules():
    """A witness proposing records that do not suffice: the replay says so, the note names
    it, and the explanation is the operators' own (a shortest path to the label)."""
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    labels = connected_components(edges, prioritized=False)
    edges.insert([(1, 2), (2, 3), (3, 4), (7, 8)])
    flow.step()
    honest = flow.why(labels, (4, 1))
    witness.attach(labels, edges, lambda record, edges: [(7, 8)], "an unrelated edge")
    why = flow.why(labels, (4, 1))
    assert why.verified and why.method == "concise"
    assert why.records() == honest.records() == {"edges": {(1, 2): 1, (2, 3): 1, (3, 4): 1}}
    assert any("the witness of" in n and "did not reproduce" in n for n in why.notes)
    unchecked = flow.why(labels, (4, 1), verify=False)     # unchecked: taken as it is
    assert unchecked.records() == {"edges": {(7, 8): 1}} and unchecked.verified is None


def test_the_exact_method_never_asks_a_witness():
    flow, _, scc, _ = _scc_flow([(1, 2), (2, 1), (2, 3), (3, 2)])
    tracer = lineage.Tracer(flow, exact_only=True)
    tracer.run(scc.op, (1, 2))
    assert tracer.witnessed == [] and tracer.facts
    concise = lineage.Tracer(flow)
    concise.run(scc.op, (1, 2))
    assert concise.witnessed == [scc.op.label]


def test_an_edge_that_left_is_explained_by_its_old_cycle_and_the_cut():
    """An edge whose only cycle was cut: explained on the previous epoch (in the replay, the
    witness reads the replay's copy of the input) by that cycle, and the cut edge named."""
    edge_list = [(1, 2), (2, 3), (3, 1), (3, 4), (4, 5), (5, 3)]
    flow, edges, scc, view = _scc_flow(edge_list)
    edges.remove([(5, 3)])
    flow.step()
    assert (4, 5) not in view.to_dict()
    why = flow.why(scc, (4, 5))
    assert not why.present and why.previous is not None
    assert why.previous.records() == {"edges": {(3, 4): 1, (4, 5): 1, (5, 3): 1}}
    assert why.previous.nodes()[0]["note"].startswith("a cycle through the edge")
    assert why.removed_by["edges"][["src", "dst", "diff"]].values.tolist() == [[5, 3, -1]]


class _DictEdges:
    """:class:`witness.Edges` over a plain edge list, for the search alone."""

    def __init__(self, edge_list):
        content = {e: 1 for e in edge_list}
        self._out, self._in = witness._index(content, 0, 1), witness._index(content, 1, 0)

    def out_edges(self, nodes):
        return self._out

    def in_edges(self, nodes):
        return self._in


@pytest.mark.parametrize("seed", range(4))
def test_the_search_from_both_ends_finds_shortest_paths(seed):
    """Against networkx on random graphs, sparse and branching: a path of the shortest
    length, made of the graph's edges, from start to goal; ``None`` where there is none."""
    import random

    rng = random.Random(seed)
    nodes, m = (40, 60) if seed % 2 else (60, 400)
    edge_list = sorted(nx.gnm_random_graph(nodes, m, seed=seed, directed=True).edges)
    graph, edges = nx.DiGraph(edge_list), _DictEdges(edge_list)
    graph.add_nodes_from(range(nodes))
    for _ in range(150):
        a, b = rng.randrange(nodes), rng.randrange(nodes)
        path = witness.shortest_path(a, b, edges)
        if not nx.has_path(graph, a, b):
            assert path is None
            continue
        assert len(path) == nx.shortest_path_length(graph, a, b)
        assert all(graph.has_edge(*e) for e in path)
        walk = [a] + [e[1] for e in path]
        assert walk[-1] == b and all(e[0] == w for e, w in zip(path, walk))
