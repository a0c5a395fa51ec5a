"""Graph algorithms (``engine/algorithms/``), compared with networkx after every epoch of
random insertions and deletions: CC (Figure 3), prioritized CC (Figure 10), SCC (the doubly
nested loop of Figure 8), SSSP (Figure 19), reachability and the top label per component;
and the automatic choice between plain and prioritized label propagation."""
from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, strategies as st

import ddlab
from ddlab import algorithms
from ddlab.engine.testing import tuned
from graph_oracle import cc_oracle, scc_oracle

from .graph_programs import EPOCHS, edge_epochs


def _with_threshold(name, program):
    """``program`` built with the automatic choice's threshold at one edge (its large branch)."""
    def build(edges):
        with tuned(**{name: 1}):
            return program(edges)
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
    for adds, rems, present in edge_epochs(plan):
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
    for adds, rems, present in edge_epochs(plan):
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
    for adds, rems, present in edge_epochs(plan):
        edges.insert(adds)
        edges.remove(rems)
        flow.step()
        g = nx.DiGraph(list(present))
        g.add_nodes_from([1, 7])
        want = {(n, r): 1 for r in (1, 7) for n in nx.descendants(g, r) | {r}}
        assert view.to_dict() == want



@given(plan=EPOCHS, tags=st.lists(st.tuples(st.integers(0, 12), st.sampled_from("abc")),
                                  max_size=30))
def test_top_label_per_component_matches_networkx(plan, tags):
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    node_tags = flow.input("tags", columns=["node", "tag"])
    view = algorithms.top_label_per_component(algorithms.connected_components(edges),
                                              node_tags, k=2).view()
    node_tags.insert(tags)
    for adds, rems, present in edge_epochs(plan):
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


def _auto_flow(threshold):
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    with tuned(CC_PRIORITIZED_FROM_EDGES=threshold):
        cc = algorithms.connected_components(edges)
    return flow, edges, cc, cc.view()



@pytest.mark.parametrize("threshold, chosen", [(3, "prioritized"), (4, "plain")])
def test_automatic_choice_follows_the_first_load(threshold, chosen):
    flow, edges, cc, view = _auto_flow(threshold)
    present = {(1, 2), (2, 3), (7, 8)}
    edges.insert(sorted(present))
    flow.step()
    assert algorithms.explain_choice(cc).startswith(f"{chosen} label propagation: first load 3")
    for adds, rems in [([(3, 7)], []), ([], [(2, 3)]), ([(9, 1), (4, 5)], [(1, 2)])]:
        edges.insert(adds)
        edges.remove(rems)
        present = (present | set(adds)) - set(rems)
        flow.step()
        assert view.to_dict() == cc_oracle(present)
    stats = flow.stats()
    assert set(stats.scope) == {"root", "root/cc"}  # one loop, whichever the choice
    priorities = {t[1][0] for t in stats[stats.scope == "root/cc"].time}
    assert (priorities == {0}) == (chosen == "plain")  # plain: one priority class
    names = set(stats[stats.kind == "choose"].operator)
    assert any(f"{chosen} label propagation: first load 3 edges" in n for n in names)



def test_a_rolled_back_first_load_leaves_the_choice_open():
    flow, edges, cc, view = _auto_flow(3)
    boom = edges.map(lambda r: 1 // (r[0] - 99)).view()  # fails on the record (99, 0)
    edges.insert([(1, 2), (2, 3), (99, 0)])
    with pytest.raises(ddlab.OperatorError, match="ZeroDivisionError"):
        flow.step()
    assert "not decided yet" in algorithms.explain_choice(cc)
    edges.insert([(1, 2)])
    flow.step()
    assert algorithms.explain_choice(cc).startswith("plain label propagation: first load 1")
    assert view.to_dict() == cc_oracle({(1, 2)})
    assert boom.to_dict() == {-1: 1}



def test_explain_choice_names_the_choice_a_result_depends_on():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    auto = algorithms.connected_components(edges)
    tags = flow.input("tags", columns=["node", "tag"])
    top = algorithms.top_label_per_component(auto, tags)
    explicit = algorithms.connected_components(edges, prioritized=False)
    edges.insert([(1, 2)])
    flow.step()
    assert algorithms.explain_choice(explicit) is None
    assert algorithms.explain_choice(auto) == algorithms.explain_choice(top) == \
        "plain label propagation: first load 1 edges < 250,000"
