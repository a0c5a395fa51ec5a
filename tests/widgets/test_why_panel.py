"""The explorer's why panel: picking a component explains one of its nodes with input edges
that suffice (checked with networkx on those edges alone), the explanation goes stale on a
move and is recomputed when the window settles, and a component that left says so."""
from __future__ import annotations

import networkx as nx
import pandas as pd

from ddlab.widgets import explore_graph

from .oracles import window_edges


def scc_component_of(edges: pd.DataFrame, node) -> int | None:
    """The explorer's component id of ``node`` from networkx alone: the smallest node of the
    weakly connected piece of the SCC edges (edges inside one SCC) that holds it."""
    g = nx.DiGraph(list(zip(edges["src"].tolist(), edges["dst"].tolist())))
    if node not in g:
        return None
    scc = {n: i for i, comp in enumerate(nx.strongly_connected_components(g)) for n in comp}
    inner = nx.Graph([(a, b) for a, b in g.edges if scc[a] == scc[b]])
    return min(nx.node_connected_component(inner, node)) if node in inner else None


def check_sufficient(ex, events, batches):
    """The shown explanation's edges are in the window and, alone, put its node in its
    component; the node's component in the whole window is the one picked."""
    why = ex.why.explanation
    node, component = why.record
    window = window_edges(events, batches, ex.position)
    assert scc_component_of(window, node) == component
    explained = why.inputs["edges"]
    inside = set(zip(window["src"], window["dst"]))
    assert set(zip(explained["src"], explained["dst"])) <= inside
    assert scc_component_of(explained, node) == component
    return why


def test_picking_a_component_explains_a_node_with_edges_that_suffice(hourly):
    events, batches = hourly
    ex = explore_graph(batches, "scc", start=400, references_at_start=False)
    biggest, size = ex.results.current[0][:2]
    ex.why.pick.value = biggest
    why = check_sufficient(ex, events, batches)
    assert why.present and why.verified and ex.why.shown_for == ex.feed.span()
    assert ex.why.node.value == why.record[0] and why.record[0] in ex.why.members_of(biggest)
    assert "why is node" in ex.why.output.value and "stale" not in ex.why.output.value
    # another node of the same component, picked by hand
    other = next(n for n in ex.why.members_of(biggest) if n != why.record[0])
    ex.why.node.value = other
    assert ex.why.explanation.record == (other, biggest)
    check_sufficient(ex, events, batches)


def test_a_move_makes_it_stale_until_the_window_settles(hourly):
    events, batches = hourly
    ex = explore_graph(batches, "scc", start=400, references_at_start=False)
    comp = ex.results.current[0][0]
    ex.why.pick.value = comp
    before = ex.why.shown_for
    ex.forward(1)
    assert ex.why.shown_for == before != ex.feed.span()
    assert "stale" in ex.why.output.value and before in ex.why.output.value
    ex.settle()
    assert ex.why.shown_for == ex.feed.span() and "stale" not in ex.why.output.value
    if ex.why.explanation is not None:
        check_sufficient(ex, events, batches)


def test_a_component_that_left_the_window_says_so(hourly):
    events, batches = hourly
    ex = explore_graph(batches, "scc", start=400, references_at_start=False)
    comp = ex.results.current[0][0]
    ex.why.pick.value = comp
    gone = next(k for k in range(600, batches.steps, 97)
                if scc_component_of(window_edges(events, batches, k), comp) != comp)
    ex.move_to(gone)
    ex.settle()
    assert ex.why.explanation is None
    assert "not among this window's components" in ex.why.output.value
    assert ex.why.pick.value == comp      # still picked: it is explained again if it returns


def test_keys_per_iteration_of_the_last_move(hourly):
    """The button lists the plotted loop's iterations of the last move with the records the
    engine's statistics counted and, at each, keys that are nodes of the window."""
    events, batches = hourly
    ex = explore_graph(batches, "scc", start=400, references_at_start=False)
    ex.forward(1)
    ex.why.keys_button.click()
    a = ex.why.activity
    assert a is not None and a.loop == ex.loop
    counted = ex.flow.loop_differences(ex.flow.epoch - 1, ex.loop)
    assert a.iterations["records"].tolist() == counted["records"].tolist()
    window = window_edges(events, batches, ex.position)
    nodes = set(window["src"]) | set(window["dst"])
    for _, time_, records, _ in a.iterations.itertuples(index=False):
        keys = a.keys_at.get(time_, [])
        assert bool(keys) == bool(records) and len(keys) <= records
        assert set(keys) <= nodes
    assert "records in difference" in ex.why.keys_output.value
    ex.forward(1)                       # another move: the shown keys were the last move's
    assert ex.why.activity is None and ex.why.keys_output.value == ""


class _FailingWhy:
    """The flow, except that ``why`` fails as a bug deep in the engine would."""

    def __init__(self, flow):
        self._flow = flow

    def __getattr__(self, name):
        return getattr(self._flow, name)

    def why(self, *args, **kwargs):
        def explain_deep_inside():
            raise RuntimeError("an engine bug on purpose")
        explain_deep_inside()

    def why_loop(self, *args, **kwargs):
        return self.why()


def test_a_failing_explanation_keeps_its_traceback(daily):
    """One line says what failed; the traceback is kept beside it (as the explorer keeps its
    own), so a bug behind the panel can be reported."""
    _, batches = daily
    ex = explore_graph(batches, "scc", start=20, references_at_start=False, settle_ms=None)
    ex.why.flow = _FailingWhy(ex.flow)
    ex.why.pick.value = ex.results.current[0][0]
    assert "why failed: RuntimeError: an engine bug on purpose" in ex.why.output.value
    assert isinstance(ex.why.last_error, RuntimeError)
    assert "Traceback (most recent call last)" in ex.why.output.value
    assert "explain_deep_inside" in ex.why.output.value
    ex.why.keys_button.click()
    assert "why failed: RuntimeError" in ex.why.keys_output.value
    assert "explain_deep_inside" in ex.why.keys_output.value
    ex.why.flow = ex.flow                # it works again: the error and its traceback go
    ex.why.explain(ex.results.current[0][0])
    assert ex.why.last_error is None and "Traceback" not in ex.why.output.value
