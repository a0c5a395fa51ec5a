"""Where data enters and leaves: inputs, materialized views, subscriptions."""
from __future__ import annotations

import numpy as np

from ..batch import Batch, concat_batches, consolidate
from ..columns import decode_rows, key_code
from ..errors import DataflowError, InputError, SubscriberError
from ..runtime.contract import GATHER
from ..trace import Trace
from .base import Operator


class Input(Operator):
    """An input collection's source: buffers the updates of the open epoch, emits them when
    the epoch closes."""

    kind = "input"
    shown_in_derivations = True
    spreads = True  # (its records enter at worker 0: the runtime spreads them over the workers)

    def __init__(self, scope, name, distinct: bool = False):
        super().__init__(scope, [], name)
        self.pending: list[Batch] = []
        #: the updates of the epochs closed by ``Dataflow.advance`` and not yet run, one list
        #: per epoch, oldest first (:attr:`pending` is the open epoch's)
        self.closed: list[list[Batch]] = [[] for _ in range(scope.flow.in_flight)]
        self.kinds: tuple | None = None
        #: a set input: every record's multiplicity stays 0 or 1 (checked at each epoch)
        self.holds_set = bool(distinct)
        #: the accumulated contents (compacted like any trace), kept for checkpoints and for
        #: checking a set input
        self.log = Trace(1, 1, self.flow, name=f"{self.label} contents") \
            if self.flow.retain_inputs or self.holds_set else None
        #: the time of the capability it holds: the open epoch (its updates go out there)
        self.capability: tuple | None = None
        #: the epoch's updates not yet in :attr:`log` (several workers: :meth:`write_log`)
        self._unlogged = None

    def hold_epoch(self, epoch: int) -> None:
        """Hold the capability of the open epoch ``epoch`` (moving it from where it was)."""
        t = (epoch,)
        if self.capability != t:
            tracker = self.scope.tracker
            if self.capability is not None:
                tracker.update(self.index, self.capability, -1)
            tracker.update(self.index, t, 1)
            self.capability = t

    def step(self) -> bool:
        return False  # its updates go out when the epoch closes (flush), not when scheduled

    def flush(self, epoch: int) -> None:
        """Close epoch ``epoch``: send its updates at ``(epoch,)`` and move the capability
        to the next epoch, so the frontier downstream passes ``(epoch,)``."""
        batch = concat_batches(self.pending, self.label)
        self.pending = []
        self.hold_epoch(epoch)
        if batch is not None:
            self._emitted = 0
            if self.holds_set:
                self._check_set(epoch, batch.consolidate())
            if self.log is not None:
                if self.flow.workers > 1 and not self.holds_set:
                    self._unlogged = ((epoch,), batch)  # (written once the others have work)
                else:
                    self.log.insert((epoch,), batch.consolidate())
            self.emit((epoch,), batch)
            self.flow.record_run(self, (epoch,), len(batch), self._emitted, 0.0)
        self.hold_epoch(epoch + 1)  # (after the updates' own pointstamps are counted)

    def write_log(self) -> None:
        """With several workers: add the epoch's updates to the contents now.  (Their
        consolidation takes a while on a large load; the other workers start on their share
        of the updates meanwhile.)"""
        if self._unlogged is not None:
            t, batch = self._unlogged
            self._unlogged = None
            self.log.insert(t, batch.consolidate())

    def _check_set(self, epoch: int, batch: Batch) -> None:
        """Refuse an epoch that would give a record of a set input a multiplicity other than
        0 or 1: its earlier accumulation (looked up by key in the contents) plus this epoch's
        net change, consolidated, must leave every touched record at exactly 1 (or gone)."""
        if not len(batch):
            return
        cols, diffs = list(batch.cols), batch.diffs
        if self.log.kinds is not None and len(self.log):
            codes = np.unique(key_code(batch.cols, batch.kinds, 1))
            before, weights, _, _ = self.log.accumulate_until(codes, (epoch,))
            if len(weights):
                cols = [np.concatenate([b, c]) for b, c in zip(before, cols)]
                diffs = np.concatenate([weights, diffs])
        cols, diffs = consolidate(cols, diffs)
        bad = np.flatnonzero(diffs != 1)
        if len(bad):
            i = int(bad[0])
            record = decode_rows([c[i:i + 1] for c in cols], batch.kinds, self.flow.interner)[0]
            raise InputError(
                f"input {self.name!r} holds a set (distinct=True): epoch {epoch} would give "
                f"record {record!r} multiplicity {int(diffs[i])}"
                + (f" (and {len(bad) - 1} more record(s))" if len(bad) > 1 else "")
                + "; a set's record is in it once or not at all: insert what is absent, "
                  "remove what is present")

    def snapshot(self):
        return (list(self.pending), self.kinds,
                self.log.snapshot() if self.log is not None else None,
                [list(c) for c in self.closed])

    def restore(self, state):
        self.pending, self.kinds = list(state[0]), state[1]
        self.closed = [list(c) for c in state[3]]
        self._unlogged = None
        if self.log is not None:
            self.log.restore(state[2])

    def epoch_batches(self) -> list:
        """The updates of every epoch the next step runs: the closed ones', then the open
        one's (a list of batches per epoch)."""
        return self.closed + [self.pending]

    def traces(self):
        return [self.log] if self.log is not None else []

    def contents(self):
        """``(cols, kinds, multiplicities)`` of everything committed so far, or ``None``."""
        if self.log is None or self.log.kinds is None:
            return None
        rows = self.log.all_rows()
        if not len(rows):
            return None
        cols, diffs = consolidate(rows.cols, rows.diffs)
        if not len(diffs):
            return None
        return cols, self.log.kinds, diffs

    # -- hooks of the analyses (see Operator) -------------------------------------------------
    def kept_trace(self):
        return self.log

    def history_trace(self):
        if self.log is None:
            raise DataflowError(
                f"explanations need the inputs' contents, but {self.label} does not keep them "
                f"(the Dataflow was built with retain_inputs=False)")
        return self.log

    def known_kinds(self, kinds_of):
        return tuple(self.kinds) if self.kinds else None

    def explain_present(self, tracer, step, rec, t, sign):
        """A leaf: the input record is a fact of the explanation."""
        mult = tracer.hist.content(self, tracer.hist.record_pattern([rec]), ())[rec]
        tracer.facts.setdefault(self.id, {})[rec] = mult
        step.note = f"input record (multiplicity {mult})"
        return []

    def explain_exact(self, tracer, step, pattern, t, content):
        tracer.facts.setdefault(self.id, {}).update(content)
        step.note = f"{len(content)} input record(s), all of them"
        return []


class _EpochSink(Operator):
    """A sink that collects the updates of the running epoch and hands them over, consolidated,
    once the epoch has succeeded (a rolled-back epoch leaves no trace in it)."""

    def __init__(self, scope, up, name=None):
        super().__init__(scope, [up], name)
        #: ``(epoch, batch)`` of the running step (several epochs when epochs are in flight)
        self._staged: list = []

    def pact(self, port):
        """Views and subscribers are read at worker 0: everything is gathered there."""
        return GATHER

    def process(self, t, inputs):
        self._staged.append((t[0], inputs[0]))

    def take_epoch(self, epoch: int) -> Batch | None:
        """``epoch``'s updates, consolidated (taken out of the staging area)."""
        staged = self._staged
        mine = [b for e, b in staged if e == epoch]
        self._staged = [(e, b) for e, b in staged if e != epoch] if len(mine) < len(staged) else []
        batch = concat_batches(mine, self.label)
        return batch.consolidate() if batch is not None else None

    def restore(self, state) -> None:
        self._staged = []


class ViewSink(_EpochSink):
    """Keeps the accumulated collection (consolidated, compacted) and the last epoch's changes."""

    kind = "view"
    passes_records = presents_input = True

    def __init__(self, scope, up, name=None):
        super().__init__(scope, up, name)
        self.trace = Trace(1, 1, self.flow, name=self.label)
        self.epoch_changes: Batch | None = None

    def commit(self, epoch: int) -> None:
        self.epoch_changes = self.take_epoch(epoch)
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

    def kept_trace(self):
        return self.trace

    def contents(self):
        """``(cols, kinds, multiplicities)`` of the accumulated collection."""
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
        #: committed epochs not yet handed to ``fn``: one list of updates per epoch (each
        #: update with its own epoch's time)
        self.undelivered: list = []

    def take_updates(self, epoch: int) -> list:
        """This epoch's ``(record, (epoch,), diff)`` list; clears the staging area."""
        batch = self.take_epoch(epoch)
        if batch is None:
            return []
        rows = decode_rows(batch.cols, batch.kinds, self.flow.interner)
        return [(r, (epoch,), d) for r, d in zip(rows, batch.diffs.tolist())]


def deliver_to_subscribers(subscribers, epochs: list, report, guard=None) -> None:
    """Hand the committed ``epochs`` (one step's, oldest first) to every subscriber, whatever
    any one of them does: one call of its function per epoch, in order.

    Every sink's updates are taken first (so nothing of these epochs can leak into the next
    one with a wrong time), then each callback runs; one that raises does not stop the others
    (nor its own later epochs).  Afterwards a :class:`SubscriberError` names the failing
    subscriber(s) and says the epoch committed; a ``KeyboardInterrupt`` (or other
    non-``Exception``) from a callback is re-raised as itself, after the remaining calls were
    made, with the same note.

    ``guard`` (a started :class:`~ddlab.engine.interrupts.DeferredInterrupts`) is released once
    the updates are staged: an interrupt noted while the epochs committed is raised then, and
    the staged updates reach their subscribers, with their true times, at the next step.
    """
    last = epochs[-1]
    try:
        for sub in subscribers:
            sub.undelivered.extend(sub.take_updates(e) for e in epochs)
    finally:  # released whatever staging does: Ctrl-C must never stay swallowed
        if guard is not None:
            guard.release(f"ddlab: epoch {last} committed before this interrupt (views and "
                          f"flow.epoch show it); subscribers receive its updates, with their "
                          f"times, after the next step.")
    failures = []
    for sub in subscribers:
        calls, sub.undelivered = sub.undelivered, []
        for updates in calls:
            try:
                sub.fn(updates)
            except BaseException as err:  # noqa: BLE001 - every sink must be served
                failures.append((sub.label, err, updates[0][1][0] if updates else last))
    if not failures:
        return
    label, first, epoch = failures[0]
    others = f" (and {len(failures) - 1} more failed call(s))" if len(failures) > 1 else ""
    message = (f"subscriber {label}{others} raised {type(first).__name__}: {first} while "
               f"receiving epoch {epoch}. The epoch committed and stands (views and "
               f"flow.epoch show it); every other subscriber received its updates.")
    if not isinstance(first, Exception):
        first.add_note("ddlab: " + message)
        raise first
    failures = [(label, err) for label, err, _ in failures]
    raise SubscriberError(message, failures, report) from first
