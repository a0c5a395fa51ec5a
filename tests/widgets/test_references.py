"""The reference lines are of the window the current move landed on, with the differential
line's metric: checked against a from-scratch run on that window's edges (taken straight
from the events, not from the explorer) and a plain-Python stateless executor; until they
are computed for the current window, none are shown and the status line says so."""
from __future__ import annotations

import pytest

from ddlab.widgets import explore_graph, window_references
from ddlab.widgets.references import REFERENCE_NAMES, stateless_curves

from .oracles import scc_oracle, scratch_oracle, stateless_oracle, stats_curve, window_edges

pytestmark = pytest.mark.spark

LOOPS = ("root/scc", "root/scc/reach", "root/scc/reach2", "root/cc")


def check_references(ex, events, batches):
    """The shown references against the oracles, on the current window."""
    pos = ex.position
    refs = ex.current_references()
    assert refs is not None and refs.position == pos and refs.window == ex.feed.span()
    edges = window_edges(events, batches, pos)
    stateless = stateless_oracle(edges)
    for loop in LOOPS:
        assert refs.curve("incremental", loop) == scratch_oracle(edges, loop, prioritized=False), loop
        assert refs.curve("prioritized", loop) == scratch_oracle(edges, loop, prioritized=True), loop
        assert refs.curve("stateless", loop) == stateless[loop], loop
    # the plot shows this loop's three lines, each naming this window
    shown = ex.sources["references"].data
    assert shown["window"] == [ex.feed.span()] * 3 and shown["position"] == [pos] * 3
    assert [list(r) for r in shown["records"]] == [refs.curve(n, ex.loop) for n in REFERENCE_NAMES]
    # the status line gives this move's work and the three totals of the same window
    totals = refs.totals(ex.loop)
    work = sum(stats_curve(ex.flow, ex.flow.epoch - 1, ex.loop))
    assert (f"this move: {work:,} records of work" in ex.status.value
            and f"window {ex.feed.span()}" in ex.status.value)
    assert (f"from scratch on this window: {totals['stateless']:,} stateless / "
            f"{totals['incremental']:,} incremental / {totals['prioritized']:,} prioritized "
            f"records") in ex.status.value
    return refs, work


def test_references_are_the_current_window_from_scratch(hourly):
    events, batches = hourly
    ex = explore_graph(batches, "scc", start=395, settle_ms=None)
    check_references(ex, events, batches)          # computed at start
    ex.slider.value = 396
    # a move lands on a new window: its references are not known yet, none are drawn
    assert ex.current_references() is None
    assert ex.sources["references"].data["xs"] == []
    assert "from scratch on this window: press" in ex.status.value
    assert ex.iterations.subtitle.text.startswith(f"window {ex.feed.span()}")
    ex.settle()
    refs, work = check_references(ex, events, batches)
    totals = refs.totals(ex.loop)
    # the papers' story, on the same window: one step's work is far below recomputing
    assert 0 < work < totals["incremental"] < totals["stateless"]
    # another loop: its curves come from the same references (no recomputation)
    ex.loop_select.value = "root/cc"
    assert ex.current_references() is refs
    check_references(ex, events, batches)
    # back to a window seen before: its references show at once
    ex.loop_select.value = "root/scc/reach"
    ex.slider.value = 395
    assert ex.current_references() is not None
    check_references(ex, events, batches)


def test_stateless_executor_matches_the_plain_python_one_and_networkx(hourly):
    events, batches = hourly
    for k in (0, 100, 396, 1500, 4000):
        edges = window_edges(events, batches, k)
        curves = stateless_curves(edges, "scc")
        assert curves == stateless_oracle(edges), f"window {k}"
        # the stateless system runs as many iterations as the engine's from-scratch run
        # of the flat loops (the nested ones sum over outer iterations)
        refs = window_references(edges, "scc")
        for loop in ("root/scc", "root/cc"):
            assert len(curves[loop]) == len(refs.curve("incremental", loop)), (k, loop)
    cc = stateless_curves(edges, "cc")["root/cc"]
    nodes = len(set(edges["src"]) | set(edges["dst"]))
    assert cc and set(cc) == {nodes}, "connected components: one label per node, every iteration"
    assert scc_oracle(edges)   # the window does hold an SCC


def test_references_wait_for_the_window_to_settle_in_a_kernel_loop(hourly):
    """With an event loop (as in a kernel), the references come by themselves once no move
    came for settle_ms, and never while moves keep coming."""
    import asyncio

    events, batches = hourly
    ex = explore_graph(batches, "scc", start=400, settle_ms=50, references_at_start=False)

    async def session():
        ex.slider.value = 401
        await asyncio.sleep(0.01)
        ex.slider.value = 402             # before the first settles: it is cancelled
        assert ex.current_references() is None
        await asyncio.sleep(0.4)
        return ex.current_references()

    refs = asyncio.run(session())
    assert refs is not None and refs.position == 402 and set(ex.references) == {402}
    check_references(ex, events, batches)
