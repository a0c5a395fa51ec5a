"""Compaction keeps state proportional to the live data; statistics record every operator."""
from __future__ import annotations

import pandas as pd

import ddlab
from ddlab.algorithms import connected_components

from .datasets import collegemsg_edges_by_time


def test_sliding_window_state_stays_bounded():
    """500 window steps over CollegeMsg leave at most 2x the updates 50 steps leave."""
    events = collegemsg_edges_by_time()
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    connected_components(edges).view()
    width, step = 2_000, 100  # events in the window, events per step
    retained = {}
    for s in range(501):
        lo, hi = s * step, s * step + width
        if s == 0:
            edges.update(events.iloc[lo:hi].assign(diff=1))
        else:
            entering = events.iloc[hi - step:hi].assign(diff=1)
            leaving = events.iloc[lo - step:lo].assign(diff=-1)
            edges.update(pd.concat([entering, leaving]))
        flow.step()
        if s in (50, 500):
            retained[s] = flow.retained_updates()
    assert retained[500] <= 2 * retained[50], retained


def test_stats_frame_has_one_row_per_operator_run():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    connected_components(edges).view()
    edges.insert([(1, 2), (2, 3)])
    report = flow.step()
    stats = flow.stats()
    assert list(stats.columns) == ["operator", "kind", "scope", "time", "epoch", "iteration",
                                   "in", "out", "seconds"]
    assert len(stats) == report.operator_runs
    loop_rows = stats[stats.scope == "root/cc"]
    assert set(loop_rows.iteration) >= {0, 1, 2}
    assert (loop_rows.time.map(len) == 2).all()
    assert stats["in"].sum() == report.updates_processed
    mins = loop_rows[loop_rows.kind == "reduce"]
    assert mins["out"].sum() > 0
    edges.insert([(3, 4)])
    flow.step()
    assert set(flow.stats(epoch=1).epoch) == {1}


def test_prioritized_stats_show_priority_and_iteration():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    ddlab.algorithms.connected_components_prioritized(edges, log_buckets=False).view()
    edges.insert([(1, 2), (5, 6)])
    flow.step()
    times = flow.stats().query("scope == 'root/cc-prioritized'").time
    assert {t[1][0] for t in times} >= {1, 5}  # (priority, iteration) pairs


def test_statistics_keep_a_bounded_number_of_epochs():
    flow = ddlab.Dataflow(stats_epochs=5)
    x = flow.input("x")
    x.count().view()
    for i in range(23):
        x.insert([(i % 3, i)])
        flow.step()
    epochs = set(flow.stats().epoch)
    assert {18, 19, 20, 21, 22} <= epochs and len(epochs) <= 10 and 0 not in epochs
    assert set(flow.stats(epoch=22).epoch) == {22}


def test_full_compaction_changes_no_output_and_shrinks_state():
    import networkx as nx

    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    view = connected_components(edges).view()
    events = collegemsg_edges_by_time()

    def window(s):  # events [10 s, 10 s + 300): the window after step s
        return events.iloc[s * 10:s * 10 + 300]

    def slide(s):
        return pd.concat([events.iloc[s * 10 + 290:s * 10 + 300].assign(diff=1),
                          events.iloc[s * 10 - 10:s * 10].assign(diff=-1)])

    def oracle(s):
        g = nx.Graph(list(window(s).itertuples(index=False, name=None)))
        return {(n, low): 1 for c in nx.connected_components(g) for low in [min(c)] for n in c}

    edges.update(window(0).assign(diff=1))
    flow.step()
    for s in range(1, 30):
        edges.update(slide(s))
        flow.step()
    before, retained = view.to_dict(), flow.retained_updates()
    assert before == oracle(29)
    flow.compact()
    assert view.to_dict() == before
    assert flow.retained_updates() < retained
    for s in range(30, 35):  # the compacted state keeps answering correctly
        edges.update(slide(s))
        flow.step()
        assert view.to_dict() == oracle(s)
