"""Wiring: where each operator's output goes, which operators run inside their reader, and
how the runtime counts work, for one worker or several.  The one place that sets the
runtime's fields on operators, scopes and trackers, from the operators' declared contracts
(:mod:`.contract`) alone.

**Delivery.**  Each operator's output goes to each reader's ``accept`` where the reader reads
at the time sent, else to its ``enqueue`` (which moves the time first: a loop's enter, leave,
feedback).  With several workers an edge whose reader declares a pact other than
:data:`~.contract.PIPELINE`, or whose writer ``spreads``, goes through an exchange channel
instead (:class:`~ddlab.engine.workers.exchange.Exchanges`): the batch is split by the owner of
each record and the other workers' parts are sent to them.

**Fusion.**  Most linear operators and arrangements have exactly one reader: the concat before
a ``min``, the arrangement a join asked for, the projection feeding it.  Scheduled on their
own, each is a run of its own at every time: the scheduler asks whether the time is complete,
the operator runs, its output is queued and counted as a pointstamp, and its reader is asked
the same question again.  Fused, the operator's input is counted as its reader's pointstamp
(the *location* of the group), the reader's frontier is asked once, and at the start of the
reader's run at ``t`` the fused operators run at ``t``, upstream first, handing their output on
to the next.  What each operator processes, the order of the work and every statistics record
(a fused operator's runs are still recorded as its own) are as before: an operator upstream of
the reader is upstream of every operator of the group, so the group's time is complete for
each of them when it is for the reader.

An operator is fused when it is ``fusable``, has exactly one reader, both read at the time
sent, the reader is in the same scope and ``hosts_fused``, and, with several workers, the edge
moves no records between workers (its pointstamps must stay at its own location, upstream of
the reader, so that another worker's instance of the reader waits for what it will send).
Chains fuse: a concat into an arrangement fused into a reduce all run in the reduce's run.

**Counting work.**  With one worker a host's work (``local``) is its tracker's count of its
location (the same dictionary, kept once), a sweep visits the operators holding counts, and a
count change is applied and nothing kept.  With several workers the tracker counts every
worker's pointstamps, so a host counts its own work apart (``own_work``), a sweep visits the
operators with work here, eager operators take input as it arrives (``runs_eagerly``), and
every count change is kept to announce to the others.

:func:`wire` decides it all again whenever the graph changed (one worker, before a step) and
when a flow's workers start (each worker, for its replica).
"""
from __future__ import annotations

from .. import tuning
from .contract import PIPELINE, edge_kind, reads_at_time_sent


def wire(flow, workers: int = 1, exchanges=None) -> None:
    """Set every operator's delivery, fusion and work counting for ``workers`` workers;
    with several, ``exchanges`` (this worker's :class:`~ddlab.engine.workers.exchange.Exchanges`)
    makes the channels of the edges that move records between workers."""
    ops = flow.operators
    _route(ops, exchanges if workers > 1 else None)
    _fuse(ops, workers)
    scopes = _scopes(flow.root)
    if workers == 1:
        for op in ops:
            if op.host is op:
                op.local = op.tracker.counts[op.location]
            op.own_work = False
            op.runs_eagerly = False
        for scope in scopes:
            scope.visit = scope.tracker.active
            scope.tracker.count_for_workers(1)
        return
    for op in ops:
        if op.host is op:
            op.local = {}
        op.own_work = True
        op.runs_eagerly = op.eager
    for scope in scopes:
        scope.visit = scope.work
        scope.work.clear()
        scope.tracker.count_for_workers(workers)


def _route(ops, exchanges) -> None:
    """Every operator on its own (:func:`_fuse` groups them after): its pointstamps counted at
    its own index (``location``), its output delivered to each reader (``targets``)."""
    for op in ops:
        op.fused = ()
        op.location = op.index
        op.host = op
        op.fused_into = None
        targets = []
        for reader, port in op.outputs:
            deliver = reader.accept if reads_at_time_sent(reader) else reader.enqueue
            if exchanges is not None:
                kind = edge_kind(op, reader, port)
                if kind is not None:
                    deliver = exchanges.channel(kind, reader, port, deliver)
            targets.append((deliver, port))
        op.targets = targets


def _fuse(ops, workers: int) -> None:
    """Decide which operators run inside their only reader (see the module's docstring)."""
    if not tuning.FAST_PATHS:
        return
    for op in ops:
        if not op.fusable or len(op.outputs) != 1 or not reads_at_time_sent(op):
            continue
        reader, port = op.outputs[0]
        if (reader.scope is op.scope and reader.hosts_fused and reads_at_time_sent(reader)
                and (workers == 1 or (reader.pact(port) == PIPELINE and not op.spreads))):
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


def _scopes(root) -> list:
    """Every scope, the root first (breadth first: the same order in every replica)."""
    out, todo = [], [root]
    while todo:
        scope = todo.pop(0)
        out.append(scope)
        todo.extend(scope.children)
    return out
