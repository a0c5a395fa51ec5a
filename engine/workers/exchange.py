"""Exchange: records move to the worker that owns their key before they are arranged.

Each worker runs a replica of the whole dataflow and holds a shard of every keyed operator's
state.  An edge into an arrangement is an *exchange*: the batch sent along it is split by the
owner of each record's key (:mod:`.partition`); this worker's part is delivered as before, the
others' parts go into :attr:`Exchanges.outgoing` for their owners.  An edge into a view or a
subscription gathers everything at worker 0 (the notebook's process), where the views are read.

A part sent to another worker is a pointstamp at its reader (the timely dataflow paper's
message in flight): the sender counts it in its own view of the reader's location (so nothing
downstream of the reader runs past it here) and announces that count with its other changes;
the receiver queues the part without counting it again (:func:`accept_remote`) and releases
it, as any batch, when the run that takes it ends.
"""
from __future__ import annotations

from ..operators.arrange import Arrange
from ..operators.choose import Decide
from ..operators.io import Input, _EpochSink
from .partition import owners, split


#: how an edge moves records between workers (:func:`edge_exchange`)
GATHER, BY_KEY, SPREAD_EDGE = "gather", "by key", "spread"


def edge_exchange(op, reader) -> str | None:
    """How the edge from ``op`` to ``reader`` moves records between workers: ``"gather"``
    (everything to worker 0: a view reads everything there; so does a size choice, which
    must see the whole of its first batch; straight from an input it is taken on the batch
    before it is spread), ``"by key"`` (into an arrangement: to the owner of each record's
    key), ``"spread"`` (out of an input: by the hash of the whole record, so every worker
    starts the epoch with a share) or ``None`` (stays on its worker)."""
    if isinstance(reader, _EpochSink) or (isinstance(reader, Decide) and not isinstance(op, Input)):
        return GATHER
    if isinstance(reader, Arrange):
        return BY_KEY
    if isinstance(op, Input):
        return SPREAD_EDGE
    return None


class Exchanges:
    """The exchange edges of one worker's replica and the parts waiting to be sent."""

    def __init__(self, flow, me: int, workers: int):
        self.me, self.workers = me, workers
        #: destination worker -> ``[(reader id, port, time, batch)]`` not yet sent
        self.outgoing: dict[int, list] = {w: [] for w in range(workers) if w != me}
        #: the last batch an input spread and its parts: an input sends one batch to each
        #: of its readers, split once
        self._spread = (None, None)
        for op in flow.operators:
            targets = []
            for (deliver, port), (reader, _) in zip(op.targets, op.outputs):
                kind = edge_exchange(op, reader)
                if kind == GATHER:
                    deliver = _Exchange(self, reader, port, deliver, None)
                elif kind == BY_KEY:
                    deliver = _Exchange(self, reader, port, deliver, reader.nkey)
                elif kind == SPREAD_EDGE:
                    deliver = _Exchange(self, reader, port, deliver, SPREAD)
                targets.append((deliver, port))
            op.targets = targets

    def pending(self) -> bool:
        """Whether parts wait to be sent."""
        return any(self.outgoing.values())

    def take(self) -> dict[int, list]:
        """The parts to send, by destination (and an empty outbox after)."""
        out = {w: parts for w, parts in self.outgoing.items() if parts}
        for w in out:
            self.outgoing[w] = []
        return out


#: an input's records spread over the workers by the hash of the whole record: every worker
#: starts the epoch with a share of the work, in step with the others
SPREAD = -1


class _Exchange:
    """One exchange edge: ``(port, t, batch)`` in, parts out to their owners."""

    __slots__ = ("team", "reader", "port", "deliver", "nkey")

    def __init__(self, team: Exchanges, reader, port: int, deliver, nkey: int | None):
        self.team, self.reader, self.port, self.deliver, self.nkey = (
            team, reader, port, deliver, nkey)

    def __call__(self, port: int, t: tuple, batch) -> None:
        team = self.team
        if self.nkey is None:  # a view or a subscription: everything to worker 0
            if team.me == 0:
                self.deliver(port, t, batch)
            else:
                self._send(0, port, t, batch)
            return
        nkey = self.nkey
        if nkey == SPREAD:
            if isinstance(self.reader, Decide):  # a size choice is made on the whole batch
                self.reader.decision.decide(len(batch))
            last, parts = team._spread
            if last is not batch:
                parts = split(batch, owners(batch.cols, len(batch.cols), team.workers),
                              team.workers)
                team._spread = (batch, parts)
        else:
            parts = split(batch, owners(batch.cols, nkey, team.workers), team.workers)
        for w, part in enumerate(parts):
            if part is None:
                continue
            if w == team.me:
                self.deliver(port, t, part)
            else:
                self._send(w, port, t, part)

    def _send(self, w: int, port: int, t: tuple, part) -> None:
        reader = self.reader
        t = reader.input_time(port, t)
        reader.tracker.update(reader.location, t, 1)  # in flight: counted by its sender
        self.team.outgoing[w].append((reader.id, port, t, part))


def accept_remote(reader, port: int, t: tuple, batch) -> None:
    """Queue a part another worker sent: this worker's own work until a run takes it.  Its
    pointstamp was counted by the sender, whose announcement comes with it, so the count the
    queueing adds here is taken back (the two changes cancel in the outbox too)."""
    reader.accept(port, t, batch)
    reader.tracker.update(reader.location, t, -1)
