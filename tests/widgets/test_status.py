"""The explorer's status line: the move's records and time beside the same window's
from-scratch records and times (the engine's runs, the stateless re-execution and scipy's
compiled components, each measured once when the window settled); the error details panel
shows only while there is an error.  No Spark: windows cut with pandas."""
from __future__ import annotations

import networkx as nx
import pytest
from armed import Armed

import ddlab
from ddlab.sources import WindowFeed
from ddlab.widgets import component_collections, explore, explore_graph
from ddlab.widgets.references import REFERENCE_NAMES, SCIPY, scipy_components
from ddlab.widgets.status import milliseconds

from .oracles import stats_curve, window_edges


def test_the_status_line_gives_times_beside_records(daily):
    events, batches = daily
    ex = explore_graph(batches, "scc", start=10, settle_ms=None, references_at_start=False)
    ex.forward()
    move = ex.last_move
    work = sum(stats_curve(ex.flow, ex.flow.epoch - 1, ex.loop))
    assert (f"this move: {work:,} records of work in {milliseconds(move['total_s'])} "
            f"(engine {milliseconds(move['engine_s'])})") in ex.status_text
    assert "from scratch on this window: computed when" not in ex.status_text   # settle_ms None
    assert "from scratch on this window: press" in ex.status_text
    refs = ex.settle()
    assert set(refs.timings) == {*REFERENCE_NAMES, SCIPY}
    assert all(t > 0 for t in refs.timings.values())
    totals = refs.totals(ex.loop)
    records = " / ".join(f"{totals[n]:,} {n}" for n in REFERENCE_NAMES)
    times = " / ".join(milliseconds(refs.timings[n]) for n in REFERENCE_NAMES)
    assert (f"from scratch on this window: {records} records in {times}; scipy's compiled "
            f"SCC: {milliseconds(refs.timings[SCIPY])}") in ex.status_text
    assert refs.seconds == pytest.approx(sum(refs.timings.values()))
    # how it was measured is said where the numbers are
    assert "measured" not in ex.status_text and "each from scratch run was made once" in \
        ex.status.value


def test_scipys_components_are_the_windows_components(daily):
    events, batches = daily
    edges = window_edges(events, batches, 12)
    for algorithm, oracle in (("scc", nx.strongly_connected_components),
                              ("cc", nx.weakly_connected_components)):
        labels, seconds = scipy_components(edges, algorithm)
        nodes = sorted(set(edges["src"]) | set(edges["dst"]))
        parts = {}
        for node, label in zip(nodes, labels.tolist()):
            parts.setdefault(label, set()).add(node)
        g = nx.DiGraph(list(zip(edges["src"], edges["dst"])))
        assert sorted(map(sorted, parts.values())) == sorted(map(sorted, oracle(g)))
        assert seconds > 0


def test_the_error_details_show_only_while_there_is_an_error(daily):
    _, batches = daily
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    program = component_collections(edges, "scc")
    armed = Armed()
    guarded = edges.filter_columns(armed.check).view()
    feed = WindowFeed(batches, edges, flow, step=False)
    ex = explore(feed, {"scc": program.result, "guarded": guarded}, program=program,
                 settle_ms=None, references_at_start=False)
    panel = ex.status_line.panel
    assert panel in ex.widget.children and panel.layout.display == "none"
    ex.move_to(3)
    assert panel.layout.display == "none", "no error: no error details"
    armed.on = True
    ex.move_to(4)
    assert panel.layout.display != "none" and ex.position == 3
    shown = "".join(o.get("text", "") for o in ex.details.outputs)
    assert "Traceback" in shown and "failed on purpose" in shown
    assert "moving from position 3 to 4 failed: OperatorError" in ex.status_text
    armed.on = False
    ex.move_to(4)
    assert panel.layout.display == "none" and ex.position == 4
    ex.move_to(99)                       # refused before anything ran: no traceback to show
    assert "out of range" in ex.status_text and panel.layout.display == "none"
