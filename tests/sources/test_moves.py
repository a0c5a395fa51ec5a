"""The move controller: one epoch per move of one or several feeds, all or nothing (every feed
back where it was when the engine rolls the epoch back), and the settle timer, which calls back
only once no move came for its delay.  Oracle: each window's records from the events with the
pandas reference (``events_in_window``)."""
from __future__ import annotations

import asyncio

import pandas as pd
import pytest
from armed import Armed
from pandas_windows import DAY, pandas_windows

import ddlab
from ddlab.sources import MoveController, WindowFeed
from ddlab.sources.windows import events_in_window

EVENTS = pd.DataFrame({"src": [1, 2, 3, 4, 5, 1, 6], "dst": [2, 3, 1, 5, 4, 3, 7],
                       "time": [0, DAY, 2 * DAY, 3 * DAY, 4 * DAY, 5 * DAY, 6 * DAY]})
BATCHES = pandas_windows(EVENTS, width=2 * DAY, step=DAY, steps=6)


def window(k):
    if k < 0:
        return {}
    return {(s, d): 1 for s, d in
            events_in_window(EVENTS, *BATCHES.window(k))[["src", "dst"]].itertuples(index=False)}


def two_feeds():
    flow = ddlab.Dataflow()
    a, b = flow.input("a", columns=["src", "dst"]), flow.input("b", columns=["src", "dst"])
    feeds = {"a": WindowFeed(BATCHES, a, flow, step=False),
             "b": WindowFeed(BATCHES, b, flow, step=False)}
    return flow, feeds, {"a": a.view(), "b": b.view()}


def test_a_move_of_several_feeds_is_one_epoch():
    flow, feeds, views = two_feeds()
    mover = MoveController(flow, feeds)
    report = mover.move({"a": +1, "b": +1})
    assert report.epoch == 0 and flow.epoch == 1 and mover.moves == 1
    mover.move(seek=4)
    assert flow.epoch == 2 and feeds["a"].position == feeds["b"].position == 4
    assert views["a"].to_dict() == views["b"].to_dict() == window(4)
    mover.move({"a": -1})
    assert (feeds["a"].position, feeds["b"].position) == (3, 4) and flow.epoch == 3
    assert views["a"].to_dict() == window(3) and views["b"].to_dict() == window(4)
    mover.move(seek=99)                # past the end: every feed stops at its last position
    assert feeds["a"].position == BATCHES.steps - 1


def test_a_rolled_back_epoch_puts_every_feed_back():
    flow, feeds, views = two_feeds()
    armed = Armed()
    flow.inputs["b"].filter_columns(armed.check).view()
    mover = MoveController(flow, feeds)
    mover.move(seek=2)
    armed.on = True
    with pytest.raises(ddlab.OperatorError, match="on purpose"):
        mover.move({"a": +1, "b": +1})
    assert (feeds["a"].position, feeds["b"].position) == (2, 2) and flow.epoch == 1
    assert not feeds["a"].staged and not feeds["b"].staged
    assert views["a"].to_dict() == views["b"].to_dict() == window(2)
    armed.on = False
    mover.move({"a": +1, "b": +1})
    assert views["a"].to_dict() == views["b"].to_dict() == window(3) and flow.epoch == 2


def test_a_failing_fetch_stages_nothing():
    flow, feeds, views = two_feeds()
    mover = MoveController(flow, feeds)
    mover.move(seek=1)

    def broken(direction):
        raise OSError("the batch could not be read")

    feeds["b"].fetch = broken
    with pytest.raises(OSError, match="could not be read"):
        mover.move({"a": +1, "b": +1})
    assert feeds["a"].position == 1 and not feeds["a"].staged and flow.epoch == 1


def test_a_self_stepping_feed_moves_alone():
    flow = ddlab.Dataflow()
    a, b = flow.input("a", columns=["src", "dst"]), flow.input("b", columns=["src", "dst"])
    stepping = WindowFeed(BATCHES, a, flow, step=True)
    with pytest.raises(ValueError, match=r"\['a'\] close their own epochs.*\['b'\]"):
        MoveController(flow, {"a": stepping, "b": WindowFeed(BATCHES, b, flow, step=False)})
    view = a.view()
    mover = MoveController(flow, {"a": stepping})
    assert mover.move(seek=3) is None               # the feed closed its own epoch
    assert flow.epoch == 1 and view.to_dict() == window(3)


def test_the_settle_timer_calls_back_once_the_moves_stop():
    flow, feeds, _ = two_feeds()
    mover = MoveController(flow, feeds)
    assert mover.settle_after(0, lambda: None) is False, "outside an event loop: not scheduled"
    calls = []

    async def scenario():
        assert mover.settle_after(30, lambda: calls.append("first"))
        assert mover.settle_after(30, lambda: calls.append("second"))   # the last one wins
        await asyncio.sleep(0.1)
        assert calls == ["second"] and not mover.settle_pending
        mover.settle_after(30, lambda: calls.append("moved away"))
        mover.move({"a": +1})                   # a move: the window has not settled
        assert not mover.settle_pending
        await asyncio.sleep(0.1)
        mover.settle_after(30, lambda: calls.append("cancelled"))
        mover.cancel_settle()
        await asyncio.sleep(0.1)

    asyncio.run(scenario())
    assert calls == ["second"]
