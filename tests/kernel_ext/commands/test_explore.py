"""``%dd explore``: the explorer over a declared collection, driven by setting the slider.

Checked against networkx at the positions visited: the SCC view and the components panel's
count; the declarations it adds are ordinary ones; a later declaration retires the explorer;
mistakes give one line."""
from __future__ import annotations

import networkx as nx
import pytest
from IPython.core.error import UsageError

from ddlab.kernel_ext import get_magics

from ..conftest import as_dict, cell, collegemsg_events, dd, scc_oracle
from ..test_spark import window_edges

pytestmark = pytest.mark.spark


def _components(edges: set) -> int:
    """Strongly connected components with at least two nodes (what the panel counts)."""
    graph = nx.DiGraph(list(edges))
    return sum(1 for c in nx.strongly_connected_components(graph) if len(c) > 1)


def test_explore_scc_slides_the_window_and_matches_networkx(ip, spark):
    pytest.importorskip("bokeh", reason="the explorer needs the lab extra")
    events = collegemsg_events()
    dd(ip, "input edges --from collegemsg --window 7d --step 1d")
    cell(ip, "scc", "strongly_connected_components(edges, prioritized=False)")
    ex = dd(ip, "explore scc")
    session = get_magics(ip).session
    assert {"scc_components"} <= set(session.derived)      # declared like any %%dd cell
    assert "scc_components" in ip.user_ns
    for k in (4, 9, 2, 40, 39):
        ex.slider.value = k
        edges = window_edges(events, k)
        assert ex.position == k and session.state.handles["edges"].feed.position == k
        assert as_dict(dd(ip, "show scc").frame) == scc_oracle(edges), f"window {k}"
        shown = dd(ip, "show scc_components").frame
        assert shown["label"].nunique() == _components(edges), f"window {k}"
        assert f"position {k}" in ex.status.value
    assert ex.flow is session.flow
    dd(ip, "step 2")                   # the magics move the same feed: the explorer follows
    assert ex.slider.value == 41 and "position 41" in ex.status.value


def test_a_new_declaration_retires_the_explorer(ip, spark):
    pytest.importorskip("bokeh", reason="the explorer needs the lab extra")
    dd(ip, "input edges --from collegemsg --window 7d --step 1d")
    cell(ip, "scc", "strongly_connected_components(edges, prioritized=False)")
    ex = dd(ip, "explore scc")
    ex.slider.value = 3
    cell(ip, "cc", "connected_components(edges)")
    assert "stopped" in ex.status.value and ex.slider.disabled and ex.play.disabled
    again = dd(ip, "explore scc")        # the panel's declarations are reused, not repeated
    assert again.position == 3 and again.flow is get_magics(ip).session.flow


def test_explore_needs_a_windowed_input(ip):
    dd(ip, "input edges --columns src,dst")
    cell(ip, "cc", "connected_components(edges)")
    with pytest.raises(UsageError, match="no windowed input is upstream of cc"):
        dd(ip, "explore cc")
    with pytest.raises(UsageError, match="no collection 'ccc'"):
        dd(ip, "explore ccc")
