"""Compaction (``lattice.advance`` in every trace merge, ``Dataflow.compact``): state stays
proportional to the live data, and compacting changes no output."""
from __future__ import annotations

import pandas as pd
import pytest

import ddlab
from ddlab.algorithms import connected_components
from graph_oracle import cc_oracle

from .datasets import collegemsg_edges_by_time


@pytest.mark.slow
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



def test_full_compaction_changes_no_output_and_shrinks_state():
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
        return cc_oracle(window(s).itertuples(index=False, name=None))

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

