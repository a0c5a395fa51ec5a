"""A step that the scheduler stops short of quiescence is refused, not committed (issue 48).

With one worker, ``Dataflow.step`` committed its views after ``root.run()`` whatever was still
held; the workers' path raised "stalled" in the same case.  A scheduler bug that leaves work
behind - planted here, as ``test_scheduler_reference`` plants its bugs - must now fail the
step with a clear internal error and roll the epoch back: the views read as before it, and
the same updates stepped on the sound scheduler give the from-scratch answer (networkx).
"""
from __future__ import annotations

import pytest
from graph_oracle import cc_oracle

import ddlab
from ddlab.algorithms import connected_components
from ddlab.engine.errors import DataflowError
from ddlab.engine.runtime.progress import ScopeTracker
from ddlab.engine.runtime.scope import Scope


def _one_sweep(self) -> bool:
    """``Scope.run`` that stops after its first sweep (a scope's later iterations and the
    operators waiting on them are left holding their pointstamps)."""
    self.tracker.new_sweep()
    ran = False
    for op in self.ops:
        if op.index in self.visit and op.step():
            ran = True
    return ran


PLANTS = {
    # every time looks incomplete (no sweep's least time is taken as ready, and every
    # frontier asked is in the way): no operator that waits for its frontier ever runs
    "never_complete": [(ScopeTracker, "_ready_time", lambda self: None),
                       (ScopeTracker, "blocked", lambda self, j, t: True)],
    "one_sweep_a_run": [(Scope, "run", _one_sweep)],
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_an_epoch_left_incomplete_by_the_scheduler_is_rolled_back(plant):
    first = [(1, 2), (2, 3), (5, 6)]
    second = [(3, 5), (7, 8), (8, 1)]
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    labels = connected_components(edges).view()
    degrees = edges.project(0).count().view()
    edges.insert(first)
    flow.step()
    before = (labels.to_dict(), degrees.to_dict(), flow.epoch, len(flow.epoch_log()))
    assert before[0] == cc_oracle(first)

    edges.insert(second)
    with pytest.MonkeyPatch.context() as mp:
        for owner, name, broken in PLANTS[plant]:
            mp.setattr(owner, name, broken)
        with pytest.raises(DataflowError, match="epoch 1 stalled") as info:
            flow.step()
    assert sorted(info.value.discarded_updates["edges"]) == [(e, 1) for e in sorted(second)]
    assert (labels.to_dict(), degrees.to_dict(), flow.epoch, len(flow.epoch_log())) == before

    edges.insert(second)  # the same updates again, on the sound scheduler
    flow.step()
    assert labels.to_dict() == cc_oracle(first + second)
    assert degrees.to_dict() == {(s, 1): 1 for s, _ in first + second}
