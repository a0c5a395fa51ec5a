"""Nothing in the runtime grows with the number of epochs (issue 48, the soak): a long session
of window moves, compared at the same window after 200 moves and after 600, holds containers
of the same sizes (sizes, never seconds).

Every dict, list, set and tuple attribute of every operator, scope, tracker, the statistics and
the flow itself is measured at both points, along with the engine's own per-move work (rows
read and paired by a round trip from that window).  A structure keyed by time or appended to per
epoch (statistics history beyond ``stats_epochs``, epoch logs, progress counts never released,
per-epoch dicts, caches keyed by time) grows by hundreds between the two and fails here.
"""
from __future__ import annotations

import numpy as np
import pytest

import ddlab
from ddlab.algorithms import connected_components
from ddlab.sources import WindowFeed
from ddlab.sources.datasets import collegemsg_pandas
from pandas_windows import pandas_windows

#: statistics kept (fewer than the moves between the two checks, so their bound is reached)
KEEP = 50
REFERENCE = 12


def _containers(flow) -> dict:
    """``{(owner, attribute): length}`` of every container attribute of the runtime's
    objects."""
    owners = [("flow", flow), ("statistics", flow.statistics)]
    scopes = [flow.root]
    while scopes:
        scope = scopes.pop()
        owners += [(f"scope {scope.path}", scope), (f"tracker {scope.path}", scope.tracker)]
        scopes += scope.children
    owners += [(op.label, op) for op in flow.operators]
    out = {}
    for name, owner in owners:
        fields = dict(getattr(owner, "__dict__", {}))
        for slot in getattr(type(owner), "__slots__", ()):
            if hasattr(owner, slot):
                fields[slot] = getattr(owner, slot)
        for attr, value in fields.items():
            if isinstance(value, (dict, list, set, tuple)):
                out[(name, attr)] = len(value)
                if attr == "counts" and isinstance(value, list):  # a tracker's, per operator
                    out[(name, "counts held")] = sum(map(len, value))
    return out


def _probe(feed, flow) -> int:
    """Rows read and paired by one move forward and back from the reference window."""
    before = flow.work_done()
    feed.forward()
    feed.backward()
    after = flow.work_done()
    return sum(after[k] - before[k] for k in ("history_rows", "matched_pairs"))


@pytest.mark.slow
def test_nothing_grows_with_the_epochs_of_a_long_session():
    events = collegemsg_pandas()
    batches = pandas_windows(events, width=7 * 86_400, step=86_400, steps=24)
    flow = ddlab.Dataflow("growth", stats_epochs=KEEP)
    edges = flow.input("edges", columns=["src", "dst"])
    labels = connected_components(edges).view()
    degrees = edges.project(0).count().view()
    feed = WindowFeed(batches, edges, flow)
    rng = np.random.default_rng(7)
    seen = {}
    for m in range(1, 601):
        r = rng.random()
        if r < 0.1:
            feed.seek(int(rng.integers(-1, batches.steps)), combine=True)
        elif r < 0.55 and not feed.at_end or feed.position < 0:
            feed.forward()
        else:
            feed.backward()
        if m in (200, 600):
            feed.seek(REFERENCE, combine=True)
            seen[m] = (_containers(flow), _probe(feed, flow), labels.to_dict(),
                       degrees.to_dict(), flow.epoch)
    (early, work_early, labels_early, degrees_early, e1) = seen[200]
    (late, work_late, labels_late, degrees_late, e2) = seen[600]
    assert (labels_late, degrees_late) == (labels_early, degrees_early)  # the same window
    assert e2 - e1 >= 400
    grown = {k: (early.get(k, 0), n) for k, n in late.items()
             if n > max(early.get(k, 0) * 1.25, early.get(k, 0) + 8)}
    assert not grown, grown
    # a bound reached, not a structure that grows: the statistics keep KEEP epochs
    assert late[("statistics", "_epochs")] == KEEP
    # the work of the same move from the same window does not grow either
    assert work_late <= work_early * 1.25, (work_early, work_late)
