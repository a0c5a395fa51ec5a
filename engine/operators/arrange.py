"""Arrange: maintain a shared, indexed trace of a collection.

An arrangement is built once and read by any number of joins and reduces (one index, many
readers), in its own scope or, through :class:`~ddlab.engine.trace.EnteredTrace`, inside
loops nested in it.  The operator inserts each batch into the trace and passes it on; readers
downstream run later at the same time, so the trace they read already holds that batch."""
from __future__ import annotations

from ..runtime.contract import Exchange
from ..trace import Trace
from .base import Operator


class Arrange(Operator):
    kind = "arrange"
    fusable = True
    passes_records = presents_input = True

    def __init__(self, scope, up, nkey: int, name=None):
        super().__init__(scope, [up], name)
        self.nkey = nkey
        self.trace = Trace(nkey, scope.depth, self.flow, name=self.label)

    def pact(self, port):
        """Each worker arranges the records of the keys it owns."""
        return Exchange(self.nkey)

    def process(self, t, inputs):
        b = inputs[0].consolidate()
        self.trace.insert(t, b)
        self.emit(t, b)

    def snapshot(self):
        return self.trace.snapshot()

    def restore(self, state):
        self.trace.restore(state)

    def traces(self):
        return [self.trace]

    def kept_trace(self):
        return self.trace

    def copy_into(self, scope, inputs):
        return Arrange(scope, inputs[0], self.nkey, self.name)
