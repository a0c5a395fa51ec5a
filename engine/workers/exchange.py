"""Exchange: records move to the worker that owns their key before they are arranged.

Each worker runs a replica of the whole dataflow and holds a shard of every keyed operator's
state.  Which edges move records is the readers' declared pacts'
(:mod:`~ddlab.engine.runtime.contract`), and the runtime's wiring asks :meth:`Exchanges.channel`
for each such edge's delivery.  An edge into an operator declaring ``Exchange(k)`` (an
arrangement, any operator keeping state per key) is split by the owner of each record's key
(:mod:`.partition`); this worker's part is delivered as before, the others' parts go into
:attr:`Exchanges.outgoing` for their owners.  An edge into a view or a subscription gathers
everything at worker 0 (the notebook's process), where the views are read; an input's records
are spread over the workers.

A part sent to another worker is a pointstamp at its reader (the timely dataflow paper's
message in flight): the sender counts it in its own view of the reader's location (so nothing
downstream of the reader runs past it here) and announces that count with its other changes;
the receiver queues the part without counting it again (:func:`accept_remote`) and releases
it, as any batch, when the run that takes it ends.
"""
from __future__ import annotations

from ..runtime.contract import BY_KEY, GATHER_EDGE, SPREAD_EDGE, Exchange, WholeBatch
from .partition import owners, split


class Exchanges:
    """The exchange edges of one worker's replica and the parts waiting to be sent."""

    def __init__(self, me: int, workers: int):
        self.me, self.workers = me, workers
        #: destination worker -> ``[(reader id, port, time, batch)]`` not yet sent
        self.outgoing: dict[int, list] = {w: [] for w in range(workers) if w != me}
        #: the last batch an input spread and its parts: an input sends one batch to each
        #: of its readers, split once
        self._spread = (None, None)

    def channel(self, kind: str, reader, port: int, deliver) -> "_Exchange":
        """The delivery of an edge into ``reader``'s input ``port`` that moves records between
        workers as ``kind`` says (:func:`~ddlab.engine.runtime.contract.edge_kind`);
        ``deliver`` takes this worker's part (called by the runtime's wiring)."""
        if kind == GATHER_EDGE:
            return _Exchange(self, reader, port, deliver, None, False)
        if kind == BY_KEY:
            pact = reader.pact(port)
            assert isinstance(pact, Exchange)
            return _Exchange(self, reader, port, deliver, pact.key_columns, False)
        if kind == SPREAD_EDGE:
            return _Exchange(self, reader, port, deliver, SPREAD,
                             isinstance(reader.pact(port), WholeBatch))
        raise ValueError(f"no exchange channel of kind {kind!r}")

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

    __slots__ = ("team", "reader", "port", "deliver", "nkey", "whole")

    def __init__(self, team: Exchanges, reader, port: int, deliver, nkey: int | None,
                 whole: bool):
        #: ``whole``: the reader sees each whole batch before it is spread (its pact is
        #: :class:`~ddlab.engine.runtime.contract.WholeBatch`)
        self.team, self.reader, self.port, self.deliver, self.nkey, self.whole = (
            team, reader, port, deliver, nkey, whole)

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
            if self.whole:  # (a size choice is made on the whole batch)
                self.reader.see_whole(batch)
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
