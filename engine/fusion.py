"""Fusing an operator into its only reader: one scheduled run instead of several.

Most linear operators and arrangements have exactly one reader: the concat before a ``min``,
the arrangement a join asked for, the projection feeding it.  Scheduled on their own, each is
a run of its own at every time: the scheduler asks whether the time is complete, the operator
runs, its output is queued and counted as a pointstamp, and its reader is asked the same
question again.  Fused, the operator's input is counted as its reader's pointstamp (the
*location* of the group), the reader's frontier is asked once, and at the start of the
reader's run at ``t`` the fused operators run at ``t``, upstream first, handing their output on
to the next.  What each operator processes, the order of the work and every statistics record
(a fused operator's runs are still recorded as its own) are as before: an operator upstream of
the reader is upstream of every operator of the group, so the group's time is complete for
each of them when it is for the reader.

An operator is fused when it is ``fusable`` (it turns a time's input into output at that same
time: linear operators, arrangements), has exactly one reader, and that reader is in the same
scope and reads at the time it is sent (not a loop's ``enter``/``leave``/``feedback``, a loop
node or an input).  Chains fuse: a concat into an arrangement fused into a reduce all run in
the reduce's run.  :func:`fuse` decides it again whenever the graph changed, before a step.
"""
from __future__ import annotations

from . import tuning


def route(ops) -> None:
    """Every operator on its own: its pointstamps counted at its own index
    (:attr:`location`), its output handed to each reader's ``accept`` where the reader reads
    at the time sent, else to its ``enqueue`` (:attr:`targets`).  Then :func:`fuse` groups."""
    from .operators.base import Operator

    identity = Operator.input_time
    for op in ops:
        op.fused = ()
        op.location = op.index
        op.host = op
        op.fused_into = None
        op.targets = [(reader.accept if type(reader).input_time is identity else reader.enqueue,
                       port) for reader, port in op.outputs]


def fuse(ops, workers: int = 1) -> None:
    """(Re)decide which of ``ops`` (routed by :func:`route`) run inside their only reader.

    With several ``workers`` an operator is not fused into a reader its output is exchanged
    to (an arrangement, a view, a size choice): its pointstamps must stay at its own location, upstream of
    the reader, so that another worker's instance of the reader waits for what it will send
    (counted at the reader's location, they would look like the reader's own input, which
    holds nothing back there)."""
    from .operators.arrange import Arrange
    from .operators.base import Operator
    from .operators.choose import Decide
    from .operators.io import Input, _EpochSink
    from .operators.loops import ScopeNode

    if not tuning.FAST_PATHS:
        return
    identity = Operator.input_time
    excluded = (ScopeNode, Input) if workers == 1 else (ScopeNode, Input, Arrange, _EpochSink,
                                                        Decide)
    for op in ops:
        if not op.fusable or len(op.outputs) != 1 or type(op).input_time is not identity:
            continue
        reader, _ = op.outputs[0]
        if (reader.scope is op.scope and type(reader).input_time is identity
                and not isinstance(reader, excluded)):
            op.fused_into = reader
    for op in ops:
        if op.fused_into is None:
            continue
        host = op.fused_into
        while host.fused_into is not None:
            host = host.fused_into
        host.fused += (op,)
        op.location = host.index  # its pointstamps are its group's
        op.host = host
    for op in ops:
        if len(op.fused) > 1:
            op.fused = tuple(sorted(op.fused, key=lambda f: f.index))  # upstream first


def settle(ops) -> None:
    """With one worker, a host's work (:attr:`local`) is its tracker's count of its location:
    the same dictionary, kept once (set after :func:`fuse`, which places the hosts)."""
    for op in ops:
        if op.host is op:
            op.local = op.tracker.counts[op.location]
        op.own_work = False
