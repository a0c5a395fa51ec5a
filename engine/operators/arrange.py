"""Arrange: maintain a shared, indexed trace of a collection.

An arrangement is built once and read by any number of joins and reduces (one index, many
readers), in its own scope or, through :class:`~ddlab.engine.trace.EnteredTrace`, inside
loops nested in it.  The operator inserts each batch into the trace and passes it on; readers
downstream run later at the same time, so the trace they read already holds that batch."""
from __future__ import annotations

from ..trace import Trace
from .base import Operator


class Arrange(Operator):
    kind = "arrange"

    def __init__(self, scope, up, nkey: int, name=None):
        super().__init__(scope, [up], name)
        self.nkey = nkey
        self.trace = Trace(nkey, scope.depth, self.flow, name=self.label)

    #: the only reader this arrangement is fused into (see :mod:`~ddlab.engine.fusion`)
    fused_into = None

    def process(self, t, inputs):
        b = inputs[0].consolidate()
        self.trace.insert(t, b)
        self.emit(t, b)

    def emit(self, t, batch):
        reader = self.fused_into
        if reader is None:
            super().emit(t, batch)
            return
        batch = self.sent(batch)
        if batch is not None:  # the reader is running at t: no scheduling
            reader.accept(self.outputs[0][1], t, batch)

    def run_fused(self, t) -> None:
        """This arrangement's run at ``t``, if it has input then, at the start of its
        reader's run at ``t`` (recorded as its own run, as if scheduled on its own)."""
        if t in self.queued:
            self.run_at(t)

    def snapshot(self):
        return self.trace.snapshot()

    def restore(self, state):
        self.trace.restore(state)

    def traces(self):
        return [self.trace]
