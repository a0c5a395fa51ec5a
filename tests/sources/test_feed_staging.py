"""WindowFeed owns its position: staged moves, undo after a rolled-back epoch, spans.

Runs without Spark: the feed needs only ``batch(k)``, ``window(k)``, ``len`` and ``width`` of
its batches, so a small pandas stand-in built with the pandas reference serves."""
from __future__ import annotations

import pandas as pd
import pytest

import ddlab
from ddlab.sources import WindowFeed
from ddlab.sources.windows import events_in_window


class PandasBatches:
    """Window update batches computed with the pandas reference (position k-1 -> k)."""

    def __init__(self, events, width, step, steps):
        self.events, self.width, self.step, self.steps = events, width, step, steps
        self.origin = int(events.time.min())

    def __len__(self):
        return self.steps

    def window(self, k):
        return self.origin + k * self.step, self.origin + k * self.step + self.width

    def batch(self, k):
        now = events_in_window(self.events, *self.window(k))
        if k == 0:
            return now
        before = events_in_window(self.events, *self.window(k - 1))
        both = pd.concat([now, before.assign(diff=-before["diff"])])
        summed = both.groupby(["src", "dst"], as_index=False)["diff"].sum()
        return summed[summed["diff"] != 0].reset_index(drop=True)


EVENTS = pd.DataFrame({"src": [1, 2, 3, 4, 5, 1], "dst": [2, 3, 1, 5, 4, 3],
                       "time": [0, 86400, 2 * 86400, 3 * 86400, 4 * 86400, 5 * 86400]})


def _setup(step=False):
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    view = edges.view()
    return flow, edges, view, WindowFeed(PandasBatches(EVENTS, 2 * 86400, 86400, 5), edges,
                                          flow, step=step)


def _expected(k):
    b = PandasBatches(EVENTS, 2 * 86400, 86400, 5)
    return {(s, d): 1 for s, d in events_in_window(EVENTS, *b.window(k))[["src", "dst"]].itertuples(index=False)}


def test_staged_moves_commit_with_the_callers_step():
    flow, _, view, feed = _setup()
    feed.forward(2)
    assert feed.staged and feed.position == 1
    flow.step()
    assert not feed.staged and view.to_dict() == _expected(1)
    assert feed.undo() == 1  # nothing to undo once the epoch committed


def test_undo_after_a_rolled_back_epoch_returns_to_the_engines_position():
    flow, edges, view, feed = _setup()
    edges.map(lambda r: 1 // 0 if r == (4, 5) else r).view()  # fails once (4, 5) enters
    feed.forward(1)
    flow.step()
    feed.forward(2)
    with pytest.raises(ddlab.OperatorError):
        flow.step()
    assert feed.staged
    assert feed.undo() == 0 and not feed.staged
    assert view.to_dict() == _expected(0) and flow.epoch == 1


def test_auto_step_moves_and_spans():
    flow, _, view, feed = _setup(step=True)
    feed.forward(3)
    assert view.to_dict() == _expected(2) and flow.epoch == 3
    feed.seek(0, combine=True)
    assert view.to_dict() == _expected(0) and flow.epoch == 4
    assert feed.span() == "[1970-01-01, 1970-01-03)" and feed.span(-1) == "empty"
    assert feed.width == 2 * 86400 and feed.step_seconds == 86400


def test_a_feed_takes_up_at_the_position_its_input_already_holds():
    flow, edges, view, _ = _setup()
    batches = PandasBatches(EVENTS, 2 * 86400, 86400, 5)
    edges.update(batches.batch(0))
    edges.update(batches.batch(1))
    flow.step()                                     # the input holds window 1 (a replay)
    feed = WindowFeed(batches, edges, flow, step=True, position=1, epochs=2)
    assert feed.position == 1 and feed.epochs == 2 and flow.epoch == 1   # nothing pushed
    feed.forward(2)
    assert view.to_dict() == _expected(3) and feed.epochs == 4
    with pytest.raises(ValueError, match="position=5 is out of range -1..4"):
        WindowFeed(batches, edges, flow, position=5)


def test_fetch_reads_the_next_move_without_moving():
    flow, edges, view, feed = _setup(step=True)
    assert feed.fetch(-1) is None                   # nothing before the empty window
    first = feed.fetch(+1)
    assert feed.position == -1 and flow.epoch == 0 and first.equals(feed.batches.batch(0))
    feed.forward(5)
    assert feed.fetch(+1) is None and feed.at_end and feed.position == 4
    back = feed.fetch(-1)
    assert (back["diff"] == -feed.batches.batch(4)["diff"]).all()
