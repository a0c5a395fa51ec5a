"""A worker's replica of the flow: what it announces, receives and rolls back (the same on
worker 0 and on every child)."""
from __future__ import annotations

from time import perf_counter

from ..errors import DataflowError
from ..runtime.wiring import wire
from .exchange import Exchanges, accept_remote


def scopes_of(flow) -> list:
    """Every scope, the root first, in the same order in every replica."""
    out, todo = [], [flow.root]
    while todo:
        scope = todo.pop(0)
        out.append(scope)
        todo.extend(scope.children)
    return out


class Replica:
    """What a worker does to its replica of the flow: announce, receive, roll back."""

    def __init__(self, flow, me: int, workers: int):
        self.flow, self.me, self.workers = flow, me, workers
        self.scopes = scopes_of(flow)
        self.trackers = [s.tracker for s in self.scopes]
        self.ops = flow.operators
        self.exchanges = Exchanges(me, workers)
        # the runtime counts for several workers, and the edges the operators' pacts name
        # move records between them through this replica's exchanges
        wire(flow, workers, self.exchanges)
        stats = flow.statistics  # each run's start from now on (records so far: now)
        stats.starts = [perf_counter()] * len(stats.running)
        self.snapshots = None
        #: the epoch :meth:`begin` was last called for (its snapshots are that epoch's)
        self.begun: int | None = None
        self.synced = len(flow.interner)

    def outbox(self) -> list:
        """This worker's count changes since the last barrier: ``[(scope, op, time, delta)]``."""
        out = []
        for k, tracker in enumerate(self.trackers):
            box = tracker.outbox
            if box.deltas:
                out.extend((k, i, t, d) for (i, t), d in box.deltas.items())
                box.deltas = {}
        return out

    def receive(self, deltas, parts) -> None:
        """The other workers' changes, and the batches they sent this worker."""
        trackers = self.trackers
        for k, i, t, d in deltas:
            trackers[k].apply(i, t, d)
        ops = self.ops
        for op_id, port, t, batch in parts:
            accept_remote(ops[op_id], port, t, batch)

    def begin(self, epoch: int) -> None:
        """Snapshots for a rollback, and the inputs' epoch closed (worker 0's carry data)."""
        flow = self.flow
        self.snapshots = [(op, op.snapshot(), op.carried) for op in self.ops]
        self.begun = epoch
        flow.statistics.discard()
        for inp in flow.inputs.values():
            inp.op.hold_epoch(epoch)
        for inp in flow.inputs.values():
            inp.op.flush(epoch)

    def reset_inputs(self, epoch: int) -> None:
        """Every worker's input capabilities at ``(epoch,)``, in every worker's view: what
        all know without an announcement (at the start, and after a rollback)."""
        for inp in self.flow.inputs.values():
            op = inp.op
            op.capability = (epoch,)
            op.tracker.apply(op.index, (epoch,), self.workers)

    def roll_back(self, epoch: int) -> None:
        """(Workers 1..N-1) back to the snapshots taken at :meth:`begin`, or, if the epoch
        was stopped before this worker began it, to the state it is in (the snapshots of the
        epoch before would undo that epoch here)."""
        flow = self.flow
        if self.begun != epoch:
            self.snapshots = [(op, op.snapshot(), op.carried) for op in self.ops]
        flow.root.clear()
        for op, state, carried in self.snapshots or ():
            op.clear_queues()
            op.restore(state)
            op.carried = carried
        for parts in self.exchanges.outgoing.values():
            parts.clear()
        flow.statistics.discard()
        for inp in flow.inputs.values():
            inp.op.pending = []
        self.reset_inputs(epoch)

    def check_interner(self) -> None:
        """Codes for new text made here would differ from another worker's: refuse."""
        if len(self.flow.interner) != self.synced:
            new = self.flow.interner.values_from(self.synced)[0]
            raise DataflowError(
                f"a user function on worker {self.me} made a new text value ({new!r}) inside "
                f"the dataflow; with several workers text values must come from the inputs "
                f"(or be made before the first step). Run this flow with workers=1.")

    def busy(self) -> bool:
        return bool(self.flow.root.work)


def view_rows(flow) -> list:
    """This worker's view per scheduled operator: ``(op id, holds, frontier)``."""
    rows = []
    for op in flow.operators:
        if op.host is not op or op.kind == "loop":
            continue
        tracker, at = op.scope.tracker, op.location
        holds = {u: n for u, n in sorted(tracker.counts[at].items()) if n > 0}
        rows.append((op.id, holds, sorted(tracker.frontier(at))))
    return rows

