"""A child worker's life (workers 1..N-1): answer worker 0's requests until told to stop or
worker 0 is gone.  Every message it sends carries the id of the request it answers, so worker
0 can tell a late answer to a request it gave up on from the answer it waits for."""
from __future__ import annotations

import pickle
import traceback
from time import perf_counter

from ..errors import DataflowError
from . import shards
from .replica import Replica, view_rows


class _Aborted(Exception):
    """Worker 0 rolled the epoch back (or committed it) while this child was running it."""


class Child:
    """A child's side of an epoch: run, send at once, take in, say when idle."""

    def __init__(self, flow, me: int, workers: int, channel):
        self.flow, self.me, self.channel = flow, me, channel
        self.replica = Replica(flow, me, workers)
        self.processed = 0
        self.seconds = 0.0
        #: the request being answered (every message sent carries it)
        self.rid = 0
        #: the counters copied by the fork (worker 0's, and the process's kernel calls):
        #: this worker reports only its own
        self.forked_work = flow.work_done()

    def send(self, msg) -> None:
        self.channel.send(msg, self.rid)

    def epoch(self, epoch: int) -> tuple:
        """Run an epoch until worker 0 commits or aborts it; the answer to that."""
        flow, replica, root = self.flow, self.replica, self.flow.root
        self.processed = 0
        self.seconds = 0.0
        flow.run_hook = self._between_runs
        said_idle = False
        try:
            replica.begin(epoch)
            while True:
                got = self._drain(block=False)
                start = perf_counter()
                ran = root.run()
                self.seconds += perf_counter() - start
                replica.check_interner()
                sent = self._flush(idle=False)
                if ran or got or sent:
                    said_idle = False
                    continue
                if not said_idle:
                    self._flush(idle=True)
                    said_idle = True
                if self._drain(block=True):
                    said_idle = False  # (what came may change nothing: say idle again)
        except _Aborted as stop:
            return stop.args[0]
        finally:
            flow.run_hook = None

    def _between_runs(self) -> None:
        if self.replica.exchanges.pending():
            self._flush(idle=False)
        self._drain(block=False)

    def _flush(self, idle: bool) -> bool:
        deltas = self.replica.outbox()
        parts = self.replica.exchanges.take()
        if not idle and not deltas and not parts:
            return False
        self.send(("m", deltas, parts, self.processed, idle, self.replica.busy(), self.seconds))
        self.seconds = 0.0
        return True

    def _drain(self, block: bool) -> bool:
        got = False
        channel = self.channel
        while (block and not got) or channel.ready():
            rid, msg = channel.recv()
            got = True
            kind = msg[0]
            if kind == "m":
                _, deltas, parts, decisions = msg
                decide(self.flow, decisions)
                self.replica.receive(deltas, parts)
                self.processed += 1
            elif kind == "abort":
                self.rid = rid
                self.replica.roll_back(msg[1])
                raise _Aborted(("rolled back", self.replica.outbox()))
            elif kind == "commit":
                self.rid = rid
                raise _Aborted(self.commit())
            else:  # pragma: no cover - a message this version does not send in an epoch
                raise DataflowError(f"worker {self.me}: unexpected {kind!r} in an epoch")
        return got

    def commit(self) -> tuple:
        flow = self.flow
        stats = flow.statistics
        runs = [(op.id, t, n_in, n_out, secs, start) for (op, t, n_in, n_out, secs), start
                in zip(stats.running, stats.starts) if op.kind != "input"]
        stats.discard()
        kept = {op.id: n for op in flow.operators
                if (n := sum(len(tr) for tr in op.traces()))}
        work = {k: n - self.forked_work.get(k, 0) for k, n in flow.work_done().items()}
        return ("committed", runs, kept, work)


def serve(channel, flow, me: int, workers: int) -> None:
    """A child's loop (run in the forked process by :mod:`.transport`)."""
    for inp in flow.inputs.values():
        inp.op.pending = []  # (worker 0's, copied by the fork: its updates enter there)
    child = Child(flow, me, workers, channel)
    replica = child.replica
    while True:
        try:
            child.rid, msg = channel.recv()
        except (EOFError, OSError):
            break
        kind = msg[0]
        if kind == "stop":
            break
        try:
            reply = _answer(child, flow, msg)
        except BaseException as err:  # noqa: BLE001 - reported to worker 0, which raises it
            try:
                child.send(error_payload(me, err))
            except (OSError, EOFError):
                break
            if kind != "begin":
                continue  # (a read, a progress request: answered; nothing else to undo)
            # an error in an epoch: wait for worker 0's abort, dropping the epoch's messages
            while True:
                try:
                    rid, msg = channel.recv()
                except (EOFError, OSError):
                    return
                if msg[0] == "abort":
                    child.rid = rid
                    replica.roll_back(msg[1])
                    reply = ("rolled back", replica.outbox())
                    break
                if msg[0] == "stop":
                    return
        try:
            child.send(reply)
        except (OSError, EOFError):
            break
        except Exception as err:  # noqa: BLE001 - a reply that cannot be pickled
            child.send(error_payload(me, DataflowError(
                f"worker {me} could not send its reply to {kind!r}: {err}")))
    channel.close()


def _answer(child: Child, flow, msg):
    """The reply to one request of worker 0 (an epoch's runs until its end, for ``begin``)."""
    kind, replica, me = msg[0], child.replica, child.me
    if kind == "begin":
        _, epoch, serial, tail, decisions = msg
        flow._step_serial = serial
        if tail:
            flow.interner.intern_unique(tail)
        replica.synced = len(flow.interner)
        decide(flow, decisions)
        return child.epoch(epoch)
    if kind == "abort":  # (after the epoch's commit failed on worker 0)
        replica.roll_back(msg[1])
        return ("rolled back", replica.outbox())
    if kind == "sync":
        replica.receive(msg[1], [])
        return ("synced",)
    if kind == "progress":
        return ("progress", view_rows(flow))
    if kind == "read":  # an explanation at worker 0 reads this shard of a trace
        return ("read", shards.read_shard(flow, *msg[1:]))
    raise DataflowError(f"worker {me}: unknown message {kind!r}")  # pragma: no cover


def decide(flow, decisions) -> None:
    """Size choices taken on worker 0 (where the inputs are), taken here too."""
    if decisions:
        ops = flow.operators
        for op_id, state in decisions.items():
            ops[op_id].restore(state)


def error_payload(me: int, err: BaseException):
    """An exception raised on worker ``me``, as a message (pickled if it survives that)."""
    text = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    try:
        blob = pickle.dumps(err)
        pickle.loads(blob)
    except Exception:  # noqa: BLE001 - an exception that does not survive pickling
        blob = None
    return ("error", me, blob, f"{type(err).__name__}: {err}", text)


def rebuild_error(reply) -> BaseException:
    """The exception of an ``error`` message, with a note naming the worker it came from."""
    _, me, blob, short, text = reply
    err = None
    if blob is not None:
        try:
            err = pickle.loads(blob)
        except Exception:  # noqa: BLE001
            err = None
    if err is None:
        err = DataflowError(f"worker {me} raised {short}")
    if hasattr(err, "add_note"):
        err.add_note(f"ddlab: raised on worker {me} of the flow's workers; its traceback:\n"
                     + text.rstrip())
    return err
