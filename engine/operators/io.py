"""Where data enters and leaves: inputs, materialized views, subscriptions."""
from __future__ import annotations

from ..batch import Batch, concat_batches
from ..columns import decode_rows
from ..trace import Trace
from .base import Operator


class Input(Operator):
    """An input collection's source: buffers the updates of the open epoch, emits them when
    the epoch closes."""

    kind = "input"

    def __init__(self, scope, name):
        super().__init__(scope, [], name)
        self.pending: list[Batch] = []
        self.kinds: tuple | None = None

    def flush(self, epoch: int) -> None:
        batch = concat_batches(self.pending, self.label)
        self.pending = []
        if batch is not None:
            self._emitted = 0
            self.emit((epoch,), batch)
            self.flow.record_run(self, (epoch,), len(batch), self._emitted, 0.0)

    def snapshot(self):
        return (list(self.pending), self.kinds)

    def restore(self, state):
        self.pending, self.kinds = list(state[0]), state[1]


class _EpochSink(Operator):
    """A sink that collects the updates of the running epoch and hands them over, consolidated,
    once the epoch has succeeded (a rolled-back epoch leaves no trace in it)."""

    def __init__(self, scope, up, name=None):
        super().__init__(scope, [up], name)
        self._staged: list[Batch] = []

    def process(self, t, inputs):
        self._staged.append(inputs[0])

    def take_epoch(self) -> Batch | None:
        batch = concat_batches(self._staged, self.label)
        self._staged = []
        return batch.consolidate() if batch is not None else None

    def restore(self, state) -> None:
        self._staged = []


class ViewSink(_EpochSink):
    """Keeps the accumulated collection (consolidated, compacted) and the last epoch's changes."""

    kind = "view"

    def __init__(self, scope, up, name=None):
        super().__init__(scope, up, name)
        self.trace = Trace(1, 1, self.flow, name=self.label)
        self.epoch_changes: Batch | None = None

    def commit(self, epoch: int) -> None:
        self.epoch_changes = self.take_epoch()
        if self.epoch_changes is not None and len(self.epoch_changes):
            self.trace.insert((epoch,), self.epoch_changes)

    def snapshot(self):
        return (self.trace.snapshot(), self.epoch_changes)

    def restore(self, state):
        super().restore(state)
        self.trace.restore(state[0])
        self.epoch_changes = state[1]

    def traces(self):
        return [self.trace]

    def contents(self):
        """``(cols, kinds, multiplicities)`` of the accumulated collection."""
        from ..batch import consolidate

        rows = self.trace.all_rows()
        if self.trace.kinds is None or not len(rows):
            return None
        cols, diffs = consolidate(rows.cols, rows.diffs)
        return cols, self.trace.kinds, diffs


class SubscribeSink(_EpochSink):
    """Calls ``fn(updates)`` once per epoch with that epoch's ``(record, time, diff)`` list."""

    kind = "subscribe"

    def __init__(self, scope, up, fn, name=None):
        super().__init__(scope, up, name)
        self.fn = fn

    def deliver(self, epoch: int) -> None:
        batch = self.take_epoch()
        updates = []
        if batch is not None:
            rows = decode_rows(batch.cols, batch.kinds, self.flow.interner)
            updates = [(r, (epoch,), d) for r, d in zip(rows, batch.diffs.tolist())]
        self.fn(updates)
