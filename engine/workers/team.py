"""Data-parallel workers: forked processes, one replica of the dataflow each, agreeing on
progress through announced count changes.

Why processes: the engine's operator runs are Python (the kernels release the GIL, the glue
around them does not), so threads ran at most 1.16x on two cores; processes run Python in
parallel, and forking them when the flow first steps gives each a replica of the operators,
user functions included, with nothing pickled (``python -m benchmarks ipc`` measured the costs:
``benchmarks/NOTES.md``).  Worker 0 is the notebook's own process: it holds the inputs and the
views; workers 1..N-1 are its children.

The protocol (timely dataflow, CACM section 2.4; the Naiad report, section 5): every worker
keeps a view of the occurrence counts of every pointstamp (its :class:`ScopeTracker` per scope),
changes it at once when it makes a change, and keeps the change in an outbox.  A worker runs
whatever its view says is complete.  As soon as an operator run has made batches for other
workers, the worker sends them together with its outbox (the batches' own counts are in it), and
between runs it takes in what the others sent; when it can do nothing more it says so (*idle*)
and waits.  A view lags the truth only by changes that result from pointstamps it still counts
(a worker counts what a run made before it releases what the run took, and its messages
arrive in order), so no worker runs a time another worker could still send it.

Sending at once, rather than at a barrier when every worker is stuck, matters: a worker that
finished its part of a join must not sit on the result while it runs the next operator, or
the others wait for it in turn, one at a time (measured: two workers then alternate, each idle
while the other runs).

Worker 0 relays the children's messages (a star, not all-to-all): with the few workers of one
machine that is one hop, and it keeps the end of an epoch in one place: the epoch is done when
worker 0 has nothing to do and every child has said it is idle after reading every message
worker 0 sent it (and nothing is on its way: a child's messages are read before its idle).
"""
from __future__ import annotations

import atexit
import gc
import os
import warnings
import weakref
from time import perf_counter

from ..errors import DataflowError
from ..interrupts import held
from ..runtime.contract import WholeBatch
from .child import rebuild_error, serve
from .replica import Replica, scopes_of, view_rows
from .shards import WholeTrace
from .transport import Children

__all__ = ["WorkerTeam", "hold_interrupts", "release_interrupts", "resolve_workers",
           "scopes_of", "stop_all", "view_rows"]

#: seconds worker 0 waits for a child to roll an epoch back before it gives the team up (a
#: child answers between two operator runs; one run longer than this is taken for a hang)
ABORT_SECONDS = 60.0


def resolve_workers(workers) -> int:
    """The worker count asked for (``None``: ``DDLAB_WORKERS``, else 1), checked; on a
    platform without ``fork`` one worker, said in one line."""
    where = "workers="
    if workers is None:
        text = os.environ.get("DDLAB_WORKERS", "").strip()
        if not text:
            return 1
        where = "DDLAB_WORKERS="
        try:
            workers = int(text)
        except ValueError:
            raise DataflowError(f"DDLAB_WORKERS={text!r} is not a whole number of workers "
                                f"(e.g. DDLAB_WORKERS=2)") from None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise DataflowError(f"{where}{workers!r}: the number of workers is a whole number, "
                            f"at least 1")
    if workers > 1 and not hasattr(os, "fork"):
        warnings.warn(f"ddlab: {workers} workers need os.fork, which this platform does not "
                      f"have; running one worker.", RuntimeWarning, stacklevel=3)
        return 1
    return workers


def hold_interrupts():
    """Make Ctrl-C wait (until :func:`release_interrupts` with what this returns): while the
    workers start, an interrupt would leave a team half made, which no rollback can undo."""
    guard = held()
    guard.__enter__()
    return guard


def release_interrupts(guard) -> None:
    """Let Ctrl-C through again; one that came meanwhile is raised now."""
    if guard is not None:
        guard.__exit__(None, None, None)


#: the teams whose processes run (weakly: a team is gone with its flow)
_LIVE: weakref.WeakSet = weakref.WeakSet()


def stop_all() -> int:
    """Stop every team's processes in this process (``%dd reset``, the kernel's exit);
    returns how many teams were stopped.  Their flows refuse to step afterwards."""
    n = 0
    for team in list(_LIVE):
        if not team.children.stopped:
            team.stop("the workers were stopped (ddlab.engine.workers.stop_all)")
            n += 1
    return n


atexit.register(stop_all)


class WorkerTeam:
    """Worker 0's side: the children, the messages of an epoch, rollback and statistics.

    Every request worker 0 makes gets a new id (``begin``, ``commit``, ``abort``, ``sync``,
    ``read``, ``progress``); a child tags what it sends with the request it answers, and worker
    0 drops anything tagged otherwise: the late answers of a request it stopped waiting for
    (Ctrl-C) never pass for the answers of the next."""

    def __init__(self, flow, workers: int, epoch: int):
        if _LIVE:  # flows no longer used stop their workers once collected: collect now,
            gc.collect()  # rather than fork beside processes nobody will talk to again
        self.flow, self.workers = flow, workers
        for scope in scopes_of(flow):
            scope.clear()
        from .. import kernels

        kernels.active()  # loaded once here, before the fork, rather than once per worker
        # the children's replicas start from the same counts: every input's capability
        for inp in flow.inputs.values():
            inp.op.capability = (epoch,)
            inp.op.tracker.apply(inp.op.index, (epoch,), workers)
        self.children = Children(workers - 1, serve, lambda w: (flow, w, workers))
        self.channels = self.children.channels
        _LIVE.add(self)
        self.replica = Replica(flow, 0, workers)
        self.broken: str | None = None
        self.decisions: dict = {}
        #: the last epoch's messages sent by worker 0, and each worker's seconds running
        #: operators in it (the rest of its time it waited): for the benchmarks and %dd status
        self.messages = 0
        self.busy_seconds = [0.0] * workers
        self.child_work: dict[int, dict] = {}
        # per epoch: messages sent to each child, and each child's last word
        self._sent = [0] * workers
        self._said: dict[int, tuple] = {}
        #: the id of the request under way (what the children's messages must carry)
        self._rid = 0
        #: (op id, epoch) -> :class:`WholeTrace` read by explanations this epoch
        self._whole: dict = {}
        self._finalizer = weakref.finalize(self, self.children.stop, ("stop",))

    # -- messages ------------------------------------------------------------------------
    def _request(self) -> int:
        self._rid = (self._rid + 1) & 0xFFFFFFFF
        return self._rid

    def _send(self, w: int, msg) -> None:
        try:
            self.channels[w - 1].send(msg, self._rid)
        except (OSError, EOFError) as err:
            self._lost(w, err)

    def _recv(self, w: int, deadline: float | None = None):
        """Child ``w``'s next message answering the request under way (others are dropped);
        waits interruptibly, and no longer than ``deadline`` (``perf_counter`` time; then
        ``TimeoutError``)."""
        channel = self.channels[w - 1]
        while True:
            try:
                while not self.children.wait_any(only=w):
                    pass
                if deadline is not None and perf_counter() > deadline:
                    raise TimeoutError
                if not channel.ready():  # its process ended and its channel says nothing
                    raise EOFError("the worker's process ended")
                rid, msg = channel.recv()
            except (OSError, EOFError) as err:
                self._lost(w, err)
            if rid == self._rid:
                return msg

    def _ask_all(self, msg) -> dict:
        """Send ``msg`` to every child and read each one's answer (between epochs)."""
        self.check_alive()
        self._request()
        for w in range(1, self.workers):
            self._send(w, msg)
        replies, failure = {}, None
        for w in range(1, self.workers):
            reply = self._recv(w)
            if reply[0] == "error":
                failure = failure or reply
            replies[w] = reply
        if failure is not None:
            raise rebuild_error(failure)
        return replies

    def _lost(self, w: int, err) -> None:
        """Child ``w`` is gone: the team cannot go on (its state was partly there).  Every
        other child is stopped now, so nothing is left running for nobody."""
        how = self.children.exit_of(w)
        self.broken = (f"worker {w} stopped ({how}; {type(err).__name__}); this flow's "
                       f"workers are gone: build it again")
        self.stop()
        raise DataflowError(f"ddlab: {self.broken}")

    def check_alive(self) -> None:
        if self.broken:
            raise DataflowError(f"ddlab: {self.broken}. Nothing was run.")

    def _decisions(self) -> dict:
        """The states of the operators that see each whole batch at worker 0 (a size choice:
        their pact is ``WHOLE_BATCH``) changed since the last message, for the replicas."""
        changed = {}
        for op in self.flow.operators:
            if any(isinstance(op.pact(p), WholeBatch) for p in range(len(op.inputs))):
                state = op.snapshot()
                if state[0] is not None and self.decisions.get(op.id) != state:
                    changed[op.id] = self.decisions[op.id] = state
        return changed

    # -- an epoch ------------------------------------------------------------------------
    def run(self, epoch: int) -> None:
        """Run the open epoch (worker 0's inputs already flushed) to quiescence on every
        worker."""
        flow, replica = self.flow, self.replica
        tail = flow.interner.values_from(replica.synced)
        replica.synced = len(flow.interner)
        self._sent = [0] * self.workers
        self._said = {}
        self._whole.clear()
        self.messages = 0
        self.busy_seconds = [0.0] * self.workers
        self._request()
        for w in range(1, self.workers):
            self._send(w, ("begin", epoch, flow.step_serial, tail, self._decisions()))
        flow.run_hook = self._between_runs
        try:
            self._flush()  # every worker's share of the inputs, before worker 0 starts on its own
            for inp in flow.inputs.values():
                inp.op.write_log()
            while True:
                got = self._pump(block=False)
                start = perf_counter()
                ran = flow.root.run()
                self.busy_seconds[0] += perf_counter() - start
                replica.check_interner()
                self._flush()
                if ran or got:
                    continue
                if self._quiescent():
                    break
                self._pump(block=True)
        finally:
            flow.run_hook = None
        if replica.busy() or any(said[2] for said in self._said.values()):
            raise DataflowError(
                f"ddlab: epoch {epoch} stalled with work left on a worker and nothing in "
                f"flight (a runtime bug: please report it with flow.progress()). The epoch "
                f"was rolled back.")

    def _between_runs(self) -> None:
        """After each operator run on worker 0: send what it made for the others, take in
        what they sent."""
        if self.replica.exchanges.pending():
            self._flush()
        self._pump(block=False)

    def _flush(self) -> None:
        """Worker 0's changes and batches to the children (its changes to each)."""
        mine = self.replica.outbox()
        parts = self.replica.exchanges.take()
        decisions = self._decisions()
        if not mine and not parts and not decisions:
            return
        for w in range(1, self.workers):
            self._send(w, ("m", mine, parts.get(w, []), decisions))
            self._sent[w] += 1
            self.messages += 1

    def _pump(self, block: bool) -> bool:
        """Read the children's messages (waiting for one if ``block``): apply each to worker
        0's view and queues, relay it to the other children.  Returns whether any came."""
        children, channels = self.children, self.channels
        got = False
        while channels:
            # (an interrupt while waiting loses nothing; a look without waiting is one poll)
            ready = children.wait_any(block=block and not got)
            if not ready:
                return got
            for w in ready:
                channel = channels[w - 1]
                try:
                    if not channel.ready():  # its process ended and its channel says nothing
                        raise EOFError("the worker's process ended")
                    rid, msg = channel.recv()
                except (OSError, EOFError) as err:
                    self._lost(w, err)
                if rid != self._rid:
                    continue  # (the late answer of a request given up on)
                got = True
                self._take(w, msg)
        return got

    def _take(self, w: int, msg) -> None:
        if msg[0] == "error":
            self._said[w] = None
            raise rebuild_error(msg)
        _, deltas, parts, processed, idle, busy, seconds = msg
        self.busy_seconds[w] += seconds
        self._said[w] = (processed, idle, busy)
        if deltas or parts:
            self.replica.receive(deltas, parts.get(0, ()))
            for d in range(1, self.workers):
                if d != w:
                    self._send(d, ("m", deltas, parts.get(d, []), {}))
                    self._sent[d] += 1
                    self.messages += 1

    def _quiescent(self) -> bool:
        """Every child idle after reading all worker 0 sent it (worker 0 is idle too)."""
        for w in range(1, self.workers):
            said = self._said.get(w)
            if said is None or not said[1] or said[0] != self._sent[w]:
                return False
        return True

    def gather_commit(self, epoch: int):
        """The children's operator-run records of the epoch ``[(worker, op id, time, in,
        out, seconds, start)]`` and retained updates per operator id."""
        rows, retained = [], {}
        for w, (_, runs, kept, work) in sorted(self._ask_all(("commit", epoch)).items()):
            rows.extend((w,) + r for r in runs)
            for i, n in kept.items():
                retained[i] = retained.get(i, 0) + n
            self.child_work[w] = work
        return rows, retained

    def abort(self, epoch: int) -> None:
        """Roll the epoch back on every child (worker 0 rolled back already), then agree on
        the counts again (the restored capabilities of the reduces).  A child that does not
        answer within :data:`ABORT_SECONDS`, or fails to roll back, ends the team (said in
        one line; the flow then refuses to step)."""
        if self.broken:
            return
        deadline = perf_counter() + ABORT_SECONDS
        try:
            self._request()  # (messages of the epoch still on their way are dropped)
            for w in range(1, self.workers):
                self._send(w, ("abort", epoch))
            announced = {}
            for w in range(1, self.workers):
                announced[w] = self._expect(w, "rolled back", deadline)[1]
            replica = self.replica
            replica.exchanges.take()
            replica.reset_inputs(epoch)
            announced[0] = replica.outbox()
            self._request()
            for w in range(1, self.workers):
                self._send(w, ("sync", [d for v, ds in announced.items() if v != w
                                        for d in ds]))
            replica.receive([d for v, ds in announced.items() if v != 0 for d in ds], [])
            for w in range(1, self.workers):
                self._expect(w, "synced", deadline)
        except DataflowError:
            raise
        except BaseException as err:  # noqa: BLE001 - the workers can no longer agree
            self.broken = f"the rollback was interrupted ({type(err).__name__})"
            self.stop()
            raise

    def _expect(self, w: int, kind: str, deadline: float):
        """Child ``w``'s answer ``kind`` to the request under way; any other ends the team."""
        try:
            reply = self._recv(w, deadline)
        except TimeoutError:
            reply = None
        if reply is None or reply[0] != kind:
            why = (f"did not roll back within {ABORT_SECONDS:.0f} s" if reply is None else
                   f"failed to roll back ({reply[3]})" if reply[0] == "error" else
                   f"answered {reply[0]!r} to a rollback")
            self.broken = f"worker {w} {why}; this flow's workers were stopped: build it again"
            self.stop()
            raise DataflowError(f"ddlab: {self.broken}")
        return reply

    def read_shards(self, op_id: int, method: str, args) -> list:
        """Every child's answer to one read of operator ``op_id``'s trace, by worker
        (:mod:`.shards`)."""
        replies = self._ask_all(("read", op_id, method, args))
        return [replies[w][1] for w in sorted(replies)]

    def whole_trace(self, op, local) -> WholeTrace:
        """``op``'s history trace with every worker's shard, the same object for the whole
        epoch (explanations index a trace they read often by its identity)."""
        key = (op.id, self.flow.epoch)
        whole = self._whole.get(key)
        if whole is None:
            if self._whole and next(iter(self._whole))[1] != self.flow.epoch:
                self._whole.clear()
            whole = self._whole[key] = WholeTrace(self, op, local)
        return whole

    def progress(self) -> list:
        """Each child's view: ``[(worker, op id, holds, frontier)]``."""
        rows = []
        for w, reply in sorted(self._ask_all(("progress",)).items()):
            rows.extend((w,) + r for r in reply[1])
        return rows

    def stop(self, reason: str | None = None) -> None:
        """Stop the children (told to, then killed after a bounded wait); with ``reason``,
        the flow refuses to step from now on, saying it."""
        if reason is not None and not self.broken:
            self.broken = reason
        self._finalizer()
        _LIVE.discard(self)
