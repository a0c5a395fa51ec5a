"""What the magics and widgets read from the engine: pending inputs, bounded views, the graph
with per-edge counts, and an arrangement's history by (epoch, iteration)."""
from __future__ import annotations

import ddlab
from ddlab.algorithms import connected_components


def test_pending_updates_are_visible_until_the_step():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    x.insert([(1, 2)])
    x.remove([(3, 4)])
    assert x.pending_count == 2
    assert sorted(x.pending_updates()) == [((1, 2), 1), ((3, 4), -1)]
    flow.step()
    assert x.pending_count == 0 and x.pending_updates() == []


def test_view_limit_label_and_changes():
    flow = ddlab.Dataflow()
    x = flow.input("x", columns=["k", "v"])
    view = x.view()
    x.insert([(i, i * i) for i in range(10)])
    flow.step()
    assert len(view.to_pandas(limit=3)) == 3
    assert view.to_pandas(limit=3)["k"].tolist() == [0, 1, 2]
    assert view.label.startswith("x#")
    x.remove([(0, 0)])
    flow.step()
    assert view.changes().to_dict("list") == {"k": [0], "v": [0], "diff": [-1]}


def test_graph_counts_updates_per_edge_in_the_last_epoch():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    connected_components(edges, prioritized=False).view()  # one loop kind (no auto choice)
    edges.insert([(1, 2), (2, 3)])
    flow.step()
    ops, links = flow.graph()
    assert set(ops.scope_kind) == {"epoch", "iteration"}
    source = ops.loc[ops.kind == "input", "id"].item()
    assert set(links.loc[links.source == source, "updates"]) == {2}
    assert len(links) == sum(len(op.inputs) for op in flow.operators)


def test_history_shows_loop_times():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    inside = []
    labels = edges.project(0, 0).iterate(
        lambda lab: inside.append(lab.join(edges, select=(2, 1)).concat(lab).min().arrange())
        or inside[-1])
    labels.view()
    edges.insert([(1, 2), (2, 3)])
    flow.step()
    history = inside[0].history()
    assert {len(t) for t in history.time} == {2}          # (epoch, iteration)
    assert history["diff"].sum() == 3                      # nodes 1, 2, 3 hold one label each
