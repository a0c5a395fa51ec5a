"""``%%dd rules``: Datalog rules in a cell, each output a declared collection.

Checked against networkx (reachability, shortest hop counts) after inserts, deletions and
window moves forward and back; errors render with line, column and caret and declare
nothing; ``--limit`` errors or gives the partial rounds; an edited cell replaces its outputs.
"""
from __future__ import annotations

import networkx as nx
import pytest
from IPython.core.error import UsageError

from ddlab.kernel_ext import get_magics

from ..conftest import as_dict, cell, collegemsg_events, dd, user_state

PROGRAM = """
.input edge(src, dst) from edges
.input root(v)
reach(x)            :- root(x).
reach(y)            :- reach(x), edge(x, y).
unreached(v)        :- edge(v, _), !reach(v).
dist(x, 0)          :- root(x).
dist(y, min(d + 1)) :- dist(x, d), edge(x, y).
outdeg(x, count(y)) :- edge(x, y).
.output reach, unreached, dist, outdeg
"""


def _oracle(edges, roots):
    g = nx.DiGraph(list(edges))
    g.add_nodes_from(roots)
    dist = {}
    for r in roots:
        for node, d in nx.single_source_shortest_path_length(g, r).items():
            dist[node] = min(d, dist.get(node, d))
    sources = {s for s, _ in edges}
    out = {}
    for s, _ in edges:
        out[s] = out.get(s, 0) + 1
    return {"reach": {(n,): 1 for n in dist}, "dist": {(n, d): 1 for n, d in dist.items()},
            "unreached": {(v,): 1 for v in sources if v not in dist},
            "outdeg": {(s, len({d for x, d in edges if x == s})): 1 for s in sources}}


def _check(ip, edges, roots):
    want = _oracle(set(edges), roots)
    for name, expected in want.items():
        assert as_dict(dd(ip, f"show {name}").frame) == expected, name


def test_rules_outputs_are_declared_collections_updated_by_inserts_and_deletions(ip):
    dd(ip, "input edges --columns src,dst")
    dd(ip, "input root --columns v")
    edges = [(1, 2), (2, 3), (3, 1), (4, 5), (3, 6)]
    dd(ip, f"insert edges {edges}")
    dd(ip, "insert root [1]")
    result = cell(ip, "rules", PROGRAM)
    session = get_magics(ip).session
    assert list(session.derived) == ["reach", "unreached", "dist", "outdeg"]
    assert {d.group for d in session.derived.values()} == {"rules-1"}
    assert "reach" in ip.user_ns and "2 recursive" not in repr(result)
    assert "recursive: reach, dist" in repr(result)
    _check(ip, edges, [1])
    dd(ip, "remove edges [(2, 3)]")                 # a deletion cuts 3 and 6 off
    edges.remove((2, 3))
    _check(ip, edges, [1])
    changes = as_dict(dd(ip, "changes reach").frame.rename(columns={"diff": "multiplicity"}))
    assert changes == {(3,): -1, (6,): -1}
    dd(ip, "insert edges [(5, 3)]")
    dd(ip, "insert root [4]")
    _check(ip, edges + [(5, 3)], [1, 4])
    # one compiled program for the four outputs: one loop per recursive stratum
    assert session.flow.loops() == ["root/reach", "root/dist"]


def test_graph_and_stats_name_rules_and_relations(ip):
    dd(ip, "input edges --columns src,dst")
    dd(ip, "input root --columns v")
    dd(ip, "insert edges [(1, 2), (2, 3)]")
    dd(ip, "insert root [1]")
    cell(ip, "rules", PROGRAM)
    labels = set(dd(ip, "graph reach").operators["label"])
    assert any(label.startswith("r2 reach: join edge#") for label in labels)
    assert any(label.startswith("reach#") for label in labels)
    stats = dd(ip, "stats reach --by iteration")
    assert len(stats.raw) and set(stats.raw["scope"]) >= {"root/reach"}


def test_a_rebuild_keeps_the_rules_and_replays_them(ip):
    dd(ip, "input edges --columns src,dst")
    dd(ip, "input root --columns v")
    dd(ip, "insert edges [(1, 2), (2, 3)]")
    dd(ip, "insert root [1]")
    cell(ip, "rules", PROGRAM)
    dd(ip, "input other --columns x")          # a new input: the flow is rebuilt, replayed
    _check(ip, [(1, 2), (2, 3)], [1])
    dd(ip, "rebuild")
    _check(ip, [(1, 2), (2, 3)], [1])


def test_an_edited_cell_replaces_its_outputs(ip):
    dd(ip, "input edges --columns src,dst")
    dd(ip, "insert edges [(1, 2), (2, 3)]")
    cell(ip, "rules", ".input e from edges\np(x, y) :- e(x, y).\np(x, z) :- p(x, y), e(y, z).\n"
                      "q(x) :- p(x, x).\n.output p, q")
    assert as_dict(dd(ip, "show p").frame) == {(1, 2): 1, (2, 3): 1, (1, 3): 1}
    cell(ip, "rules", ".input e from edges\np(x, y) :- e(y, x).\n.output p")
    session = get_magics(ip).session
    assert list(session.derived) == ["p"] and "q" not in ip.user_ns
    assert as_dict(dd(ip, "show p").frame) == {(2, 1): 1, (3, 2): 1}


def test_limit_errors_or_gives_the_partial_rounds(ip):
    dd(ip, "input edges --columns src,dst")
    dd(ip, "input root --columns v")
    chain = [(i, i + 1) for i in range(10)]
    dd(ip, f"insert edges {chain}")
    dd(ip, "insert root [0]")
    before = user_state(ip)
    with pytest.raises(UsageError, match="did not converge within 3 iterations"):
        cell(ip, "rules --limit 3", ".input e from edges\n.input root\n"
                                    "r(x) :- root(x).\nr(y) :- r(x), e(x, y).")
    assert user_state(ip) == before               # nothing declared
    cell(ip, "rules --limit 3 --partial", ".input e from edges\n.input root\n"
                                          "r(x) :- root(x).\nr(y) :- r(x), e(x, y).")
    assert as_dict(dd(ip, "show r").frame) == {(i,): 1 for i in range(4)}   # 3 hops
    dd(ip, "remove edges [(1, 2)]")
    assert as_dict(dd(ip, "show r").frame) == {(0,): 1, (1,): 1}


@pytest.mark.parametrize("body, expected", [
    ("reach(y) :- reach(x), edge(x, y)\n",
     "line 1, column 33: the text ended early"),
    (".input edge from edgs\nreach(y) :- edge(_, y).",
     "line 1, column 18: unknown input 'edgs'"),
    (".input edge from edges\np(x) :- edge(x, _), !q(x).\nq(x) :- p(x).",
     "p -> !q -> p"),
    (".input edge from edges\np(x, y) :- edge(x, _).",
     "variable y appears in the head but not in the body"),
    (".input edge from edges\nc(x, count(y)) :- edge(x, y), c(y, _).",
     "count inside recursion"),
])
def test_errors_render_with_a_caret_and_declare_nothing(ip, body, expected):
    dd(ip, "input edges --columns src,dst")
    dd(ip, "insert edges [(1, 2)]")
    before = user_state(ip)
    with pytest.raises(UsageError) as info:
        cell(ip, "rules", body)
    message = str(info.value)
    assert expected in message and "^" in message.splitlines()[2], message
    assert user_state(ip) == before


def test_an_output_may_not_take_an_input_name(ip):
    dd(ip, "input edges --columns src,dst")
    with pytest.raises(UsageError, match="output 'edges' is a declared input"):
        cell(ip, "rules", ".input e from edges\nedges(x, y) :- e(x, y).")


def test_help_lists_the_rules_cell(ip):
    from IPython.utils.capture import capture_output

    with capture_output() as cap:
        ip.run_line_magic("dd", "help rules")
    assert "--partial" in cap.stdout and ".output" in cap.stdout


@pytest.mark.spark
def test_window_moves_update_rules_forward_and_back(ip, spark):
    """CollegeMsg in a 7-day window: reachability from the window's busiest sender and its
    hop counts (min in recursion) follow every move, forward and back (deletions)."""
    from ..test_spark import window_edges

    events = collegemsg_events()
    dd(ip, "input edges --from collegemsg --window 7d --step 1d")
    dd(ip, "input root --columns v")
    dd(ip, "insert root [9]")
    cell(ip, "rules", ".input edge(src, dst) from edges\n.input root(v)\n"
                      "reach(x) :- root(x).\nreach(y) :- reach(x), edge(x, y).\n"
                      "hops(x, 0) :- root(x).\nhops(y, min(d + 1)) :- hops(x, d), edge(x, y).")
    for k in (3, 12, 11, 4, 30):
        dd(ip, f"step --to {k}")
        edges = window_edges(events, k)
        g = nx.DiGraph(list(edges))
        g.add_node(9)
        lengths = nx.single_source_shortest_path_length(g, 9)
        assert as_dict(dd(ip, "show reach").frame) == {(n,): 1 for n in lengths}, k
        assert as_dict(dd(ip, "show hops").frame) == {(n, d): 1 for n, d in lengths.items()}, k


def test_the_explorer_slides_a_rules_output(ip, spark):
    """``%dd explore`` on a relation of a ``%%dd rules`` cell, as on any collection: moving
    the slider moves the window, and the relation follows (networkx at each position); the
    per-iteration plot shows the rules' loop."""
    pytest.importorskip("bokeh", reason="the explorer needs the lab extra")
    from ..test_spark import window_edges

    events = collegemsg_events()
    dd(ip, "input edges --from collegemsg --window 7d --step 1d")
    dd(ip, "input root --columns v")
    dd(ip, "insert root [9]")
    cell(ip, "rules", ".input edge(src, dst) from edges\n.input root(v)\n"
                      "hops(x, 0) :- root(x).\nhops(y, min(d + 1)) :- hops(x, d), edge(x, y).")
    ex = dd(ip, "explore hops")
    assert ex.loop is not None and "hops" in ex.loop
    for k in (3, 12, 11, 4):
        ex.slider.value = k
        assert ex.position == k and f"position {k}" in ex.status.value
        g = nx.DiGraph(list(window_edges(events, k)))
        g.add_node(9)
        lengths = nx.single_source_shortest_path_length(g, 9)
        assert as_dict(dd(ip, "show hops").frame) == {(n, d): 1 for n, d in lengths.items()}, k
        assert as_dict(ex.views["hops"].to_pandas()) == {(n, d): 1 for n, d in lengths.items()}


def test_why_of_a_rules_output_is_a_proof_of_minimal_height(ip):
    """``%dd why`` on a relation of a ``%%dd rules`` cell: the rule-by-rule proof; its height
    is networkx's hop count (each hop one application of the recursive rule, after the base
    rule), its leaves are the input facts on that shortest path; after a deletion the proof
    takes the next shortest path, and a fact no longer derived says so."""
    dd(ip, "input edges --columns src,dst")
    dd(ip, "input root --columns v")
    edges = [(1, 2), (2, 3), (3, 4), (1, 5), (5, 6), (6, 7), (7, 4)]
    dd(ip, f"insert edges {edges}")
    dd(ip, "insert root [1]")
    cell(ip, "rules", PROGRAM)
    for present, expected_hops in ((edges, 3), ([e for e in edges if e != (2, 3)], 4)):
        if present is not edges:
            dd(ip, "remove edges [(2, 3)]")
        proof = dd(ip, "why reach 4")
        hops = nx.shortest_path_length(nx.DiGraph(present), 1, 4)
        assert hops == expected_hops and proof.height == hops + 1   # root(1) -> reach(1): r1
        leaves = []
        stack = [proof.root]
        while stack:
            node = stack.pop()
            stack += node.children
            if node.rule is None:
                leaves.append((node.relation, node.fact))
        path = nx.shortest_path(nx.DiGraph(present), 1, 4)
        assert sorted(leaves) == sorted([("root", (1,))] + [("edge", e) for e in zip(path, path[1:])])
        assert "[r2, line 5: reach(y) :- reach(x), edge(x, y).]" in repr(proof)
    dd(ip, "remove edges [(7, 4)]")
    assert "is not derived" in repr(dd(ip, "why reach 4"))
