"""Arrangements (``operators/arrange.py``): one index shared by its readers, and the history
``Collection.history()`` reads from it, outside loops, inside them, and entered into them."""
from __future__ import annotations

import ddlab


def test_shared_arrangement_is_built_once():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    arranged = edges.arrange()
    a = arranged.join(edges.project(0, 1)).view()
    b = arranged.join(edges.map(lambda r: (r[0], -r[1]))).view()
    edges.insert([(1, 2), (1, 3)])
    flow.step()
    kinds = [op.kind for op in flow.operators]
    # the two joins read the same arrangement of `edges`; each right side has its own
    assert kinds.count("arrange") == 3
    assert a.to_dict() == {(1, 2, 2): 1, (1, 2, 3): 1, (1, 3, 2): 1, (1, 3, 3): 1}
    assert len(b.to_dict()) == 4



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



def test_history_of_an_arrangement_entered_into_a_loop():
    """The outer arrangement's updates as the loop reads them: times ``(epoch, 0)``, shown in
    the loop's coordinates (before the fix: an AttributeError from the entered view)."""
    flow = ddlab.Dataflow()
    xs = flow.input("xs", columns=["x", "y"])
    arranged = xs.arrange()
    loop = flow.loop("inside")
    entered = arranged.enter(loop)
    x = loop.variable(xs)
    loop.leave(x.set(x.concat(entered).distinct())).view()
    xs.insert([(1, 2), (3, 4)])
    flow.step()
    xs.remove([(1, 2)])
    xs.insert([(5, 6)])
    flow.step()
    outside, inside = arranged.history(), entered.history()
    assert list(inside.columns) == list(outside.columns) == ["x", "y", "time", "diff"]
    # compacted to the last completed epoch (1): every earlier time reads as it
    assert sorted(map(tuple, outside.itertuples(index=False))) == [(3, 4, (1,), 1),
                                                                    (5, 6, (1,), 1)]
    assert sorted(map(tuple, inside.itertuples(index=False))) == [(3, 4, (1, 0), 1),
                                                                   (5, 6, (1, 0), 1)]
