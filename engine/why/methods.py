"""The Dataflow's why methods, ``flow.why``, ``flow.why_loop`` and ``flow.why_cost``:
installed on :class:`~ddlab.engine.dataflow.Dataflow` when this package is imported (as
``ddlab.engine`` does), so the Dataflow itself imports nothing of explanations."""
from __future__ import annotations

from ..dataflow import Dataflow
from .cost import move_cost
from .explain import explain
from .loop_activity import loop_activity


def why(self, collection, record, *, verify: bool = True, budget: int | None = 2_000_000,
        names: dict | None = None):
    """Input records sufficient to produce ``record`` in ``collection`` (after the last
    completed epoch), with its derivation operator by operator; checked by replaying the
    program from scratch on them (``verify``).  A record not there says so, and one that
    left on the last move is explained on the previous epoch with the changes that
    removed it.  See :mod:`ddlab.engine.why.explain` for what is exact and what a bound.

    >>> from ddlab.algorithms import connected_components
    >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"])
    >>> labels = connected_components(edges)
    >>> edges.insert([(1, 2), (2, 3), (3, 4), (2, 5), (7, 8)]); _ = flow.step()
    >>> why = flow.why(labels, (4, 1))
    >>> why.inputs["edges"][["src", "dst"]].values.tolist(), why.verified
    ([[1, 2], [2, 3], [3, 4]], True)
    """
    return explain(self, collection, record, verify=verify, budget=budget, names=names)


def why_loop(self, loop: str | None = None, top: int = 10) -> list:
    """Per loop (``"root/cc"``; default every loop), for the last completed epoch: the
    iterations used, records in difference per iteration (as :meth:`loop_differences`),
    updates per operator inside it, and the ``top`` keys that kept changing longest with
    their values over the iterations.

    >>> from ddlab.algorithms import connected_components
    >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"])
    >>> _ = connected_components(edges, prioritized=False).view()
    >>> edges.insert([(1, 2), (2, 3), (3, 4)]); _ = flow.step()
    >>> activity = flow.why_loop("root/cc")[0]
    >>> activity.iterations["records"].tolist(), activity.top_keys["key"].tolist()[:1]
    ([4, 4, 2], [4])
    """
    return loop_activity(self, loop, top)


def why_cost(self, epoch: int | None = None, groups: dict | None = None):
    """The cost of the last move (or ``epoch``) by operator and by ``groups`` (operator
    id -> declaration name), beside the move before it: runs, updates in and out,
    milliseconds, trace growth and the input changes; the rows add up to the measured
    totals (:class:`StepReport`).

    >>> flow = Dataflow(); xs = flow.input("xs"); _ = xs.distinct().view()
    >>> xs.insert([1, 2]); _ = flow.step(); xs.insert([3]); _ = flow.step()
    >>> cost = flow.why_cost()
    >>> cost.adds_up(), cost.totals[1]["input_updates"], cost.totals[0]["input_updates"]
    (True, 1, 2)
    """
    return move_cost(self, epoch, groups)


for _method in (why, why_loop, why_cost):
    _method.__qualname__ = f"Dataflow.{_method.__name__}"
    setattr(Dataflow, _method.__name__, _method)
