"""Fusing an arrangement into its only reader: one scheduled run instead of two.

Most arrangements have exactly one reader (the reduce or join that asked for them).  Run
separately, the arrangement is scheduled at a time, runs (inserts the batch into its trace),
emits, and schedules its reader at the same time, which then runs: two trips through the
scope's heap and two operator runs of bookkeeping for one batch.  Fused, the arrangement's
input schedules the reader directly, and the reader runs the arrangement first, at the start
of its own run at that time; the arrangement hands its batch over without scheduling.  What
the trace holds when the reader reads it, the order of the work and every statistics record
(the arrangement's runs are still recorded as its own) are as before.

An arrangement is fused when its only output is a reduce or a join in the same scope (not an
``enter``, a view, or a second reader: then it stays on its own).  :func:`fuse` decides it
again whenever the graph changed, before a step.
"""
from __future__ import annotations

from . import tuning


def fuse(ops) -> None:
    """(Re)decide which of ``ops``' arrangements run inside their only reader."""
    from .operators.arrange import Arrange
    from .operators.base import Operator
    from .operators.join import Join
    from .operators.reduce import Reduce

    for op in ops:
        op.fused = ()
        op.location = None
    for op in ops:
        if not isinstance(op, Arrange):
            continue
        op.fused_into = None
        if not tuning.FAST_PATHS or len(op.outputs) != 1:
            continue
        reader, _ = op.outputs[0]
        if (isinstance(reader, (Reduce, Join)) and reader.scope is op.scope
                and type(reader).input_time is Operator.input_time):
            op.fused_into = reader
            op.location = reader.index  # its pointstamps are its reader's
            reader.fused += (op,)
