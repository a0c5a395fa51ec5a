"""The session without a shell: windows survive rebuilds at the feed's own position, a failed
epoch or declaration changes nothing, contents match a from-scratch recount."""
from __future__ import annotations

import pandas as pd
import pytest

from ddlab.kernel_ext.declarations import DerivedDecl, InputDecl
from ddlab.kernel_ext.messages import SessionError
from ddlab.kernel_ext.session import Session

#: the records present at each window position (the oracle)
WINDOWS = [{(1, 2)}, {(1, 2), (2, 3)}, {(2, 3), (3, 9)}, {(3, 9)}]


class SetBatches:
    """Window update batches from explicit record sets: batch k = window k - window k-1."""

    width, step = 86400, 3600

    def __len__(self):
        return len(WINDOWS)

    def window(self, k):
        return k * self.step, k * self.step + self.width

    def batch(self, k):
        now, before = WINDOWS[k], WINDOWS[k - 1] if k else set()
        rows = [(s, d, 1) for s, d in sorted(now - before)]
        rows += [(s, d, -1) for s, d in sorted(before - now)]
        return pd.DataFrame(rows, columns=["src", "dst", "diff"]).astype("int64")

    def unpersist(self):
        pass


def windowed_session():
    s = Session()
    s.declare_input(InputDecl("edges", ["src", "dst"], "sets", "spark", batches=SetBatches()), {})
    return s


def contents(s, name):
    return set(s.handle(name).view.to_dict())


def test_a_rebuild_keeps_the_window_where_the_feed_is():
    s = windowed_session()
    s.step(2)
    assert s.handle("edges").feed.position == 1 and contents(s, "edges") == WINDOWS[1]
    s.declare_derived(DerivedDecl("rev", "edges.map(lambda r: (r[1], r[0]))"), {})
    feed = s.handle("edges").feed
    assert feed.position == 1 and feed.flow is s.flow          # a new feed, same place
    assert contents(s, "rev") == {(d, src) for src, d in WINDOWS[1]}
    result = s.step(5)
    assert [line.window["position"] for line in result.lines] == [2, 3]
    assert "stopped after 2 of 5 steps" in result.note
    assert contents(s, "rev") == {(d, src) for src, d in WINDOWS[3]}
    s.seek(0)
    assert contents(s, "edges") == WINDOWS[0] and s.handle("edges").feed.position == 0


def test_a_failing_epoch_leaves_the_window_and_the_contents():
    s = windowed_session()
    body = "edges.map(lambda r: (r[0], r[1] // (r[1] - 9)))"       # fails once (3, 9) arrives
    s.declare_derived(DerivedDecl("bad", body), {})
    s.step(1)
    epoch, before = s.flow.epoch, contents(s, "bad")
    with pytest.raises(SessionError, match="rolled back") as err:
        s.step(1)
    assert "did not move" in err.value.hint
    assert s.handle("edges").feed.position == 1 and s.flow.epoch == epoch
    assert contents(s, "bad") == before and contents(s, "edges") == WINDOWS[1]


def test_a_failing_declaration_changes_nothing():
    s = windowed_session()
    s.step(1)
    flow, state = s.flow, s.state
    with pytest.raises(SessionError, match="NameError"):
        s.declare_derived(DerivedDecl("cc", "connected_components(edgs)"), {})
    assert s.flow is flow and s.state is state and s.names == ["edges"]
    assert len(flow.operators) == len(s.flow.operators)


def test_rows_are_checked_before_anything_is_queued():
    s = Session()
    s.declare_input(InputDecl("e", ["src", "dst"]), {})
    with pytest.raises(SessionError, match="row 1 .* has 3 fields"):
        s.insert("e", [(1, 2), (1, 2, 3)], +1)
    with pytest.raises(SessionError, match="lacks column 'dst'") as err:
        s.insert("e", pd.DataFrame({"src": [1], "dts": [2]}), +1)
    assert err.value.hint.startswith("Did you mean 'dts'?")
    assert s.pending() == 0
