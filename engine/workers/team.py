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

import gc
import mmap
import multiprocessing
import os
import pickle
import queue
import select
import signal
import socket
import struct
import threading
import traceback
import warnings
import weakref
from contextlib import contextmanager
from multiprocessing.connection import wait
from time import perf_counter

from ..errors import DataflowError
from ..runtime.contract import WholeBatch
from ..runtime.wiring import wire
from .exchange import Exchanges, accept_remote
from .shards import WholeTrace, read_shard


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


#: where large messages' arrays go (a RAM file system), or ``None`` (all through the pipe)
_SHM_DIR = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
#: arrays of a message from this many bytes on travel through a file in :data:`_SHM_DIR`
_SHM_BYTES = 1 << 20
_ALIGN = 64
_shm_serial = [0]


def _pack(msg) -> bytes:
    """``msg`` as bytes for the pipe.  The arrays of a large message are written to a file in
    shared memory and only its name travels (measured by ``python -m benchmarks ipc``: a
    million rows 136 ms pickled through a pipe, 5 ms through shared memory); the receiver maps
    the file and reads the arrays where they are."""
    if _SHM_DIR is None or _bytes_of(msg) < _SHM_BYTES:
        return pickle.dumps(msg, protocol=4)  # (in band; protocol 4 reads back fastest)
    buffers: list = []
    meta = pickle.dumps(msg, protocol=5, buffer_callback=buffers.append)
    views = [b.raw() for b in buffers]
    _shm_serial[0] += 1
    path = os.path.join(_SHM_DIR, f"ddlab-{os.getpid()}-{_shm_serial[0]}")
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    offsets, at = [], 0
    try:
        for view in views:
            offsets.append(at)
            done = 0
            while done < view.nbytes:
                done += os.pwrite(fd, view[done:], at + done)
            at += -(-view.nbytes // _ALIGN) * _ALIGN  # (each array aligned for its type)
        os.ftruncate(fd, max(at, 1))
    finally:
        os.close(fd)
    return pickle.dumps(("shm", path, at, [(o, v.nbytes) for o, v in zip(offsets, views)],
                         meta), protocol=5)


def _bytes_of(msg) -> int:
    """About how many bytes of arrays ``msg`` carries (its batches' rows)."""
    if msg[0] != "m":
        return 0
    parts = msg[2]
    groups = parts.values() if isinstance(parts, dict) else (parts,)
    return sum(len(batch) * (len(batch.cols) + 1) * 8
               for group in groups for *_, batch in group)


def _unpack(msg):
    """A received message; if it came through shared memory, its arrays are views of the
    file's pages, mapped copy-on-write (the file's name is removed at once: the pages live as
    long as an array looks at them)."""
    if msg[0] != "shm":
        return msg
    _, path, size, places, meta = msg
    fd = os.open(path, os.O_RDONLY)
    try:
        pages = mmap.mmap(fd, size, flags=mmap.MAP_PRIVATE,
                          prot=mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)
        os.unlink(path)
    whole = memoryview(pages)
    return pickle.loads(meta, buffers=[whole[o:o + n] for o, n in places])


class _Writer:
    """Messages to one peer.  A message is written at once when the channel has room (the
    usual case: large arrays travel through shared memory, so messages are small); when it
    has not, it is handed to a thread of its own, which waits for room.  Two workers may send
    to each other at once, and a worker that waited for room in its own thread while the other
    did too would wait for ever; and a thread that wrote every message would cost a hand-over
    of the interpreter lock per message (measured: milliseconds per message under load)."""

    def __init__(self, conn):
        self.conn = conn
        self.sock = socket.socket(fileno=os.dup(conn.fileno()))
        for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, option, 1 << 20)
            except OSError:  # pragma: no cover - a kernel refusing the size keeps its own
                pass
        self.lock = threading.Lock()
        self.waiting = 0  # messages handed to the thread and not yet written
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._write, name="ddlab worker channel",
                                       daemon=True)
        self.thread.start()

    def send(self, msg) -> None:
        if self.error is not None:
            raise self.error
        buf = _pack(msg)
        frame = struct.pack("!i", len(buf)) + buf  # (the framing Connection.recv reads)
        with self.lock:
            if not self.waiting:
                try:
                    sent = self.sock.send(frame, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    sent = 0
                if sent == len(frame):
                    return
                frame = frame[sent:]
            self.waiting += 1
            self.queue.put(frame)

    def _write(self) -> None:
        while True:
            frame = self.queue.get()
            if frame is None:
                return
            try:
                self.sock.sendall(frame)
            except BaseException as err:  # noqa: BLE001 - the peer is gone: said at next send
                self.error = err if isinstance(err, (OSError, EOFError)) else OSError(str(err))
                return
            with self.lock:
                self.waiting -= 1

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join(timeout=2.0)
        self.sock.close()


@contextmanager
def _no_interrupts():
    """Ctrl-C waits while a message is read or written whole (half a message would leave the
    channel unreadable); it is raised right after."""
    if hasattr(signal, "pthread_sigmask"):
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
    else:  # pragma: no cover - platforms without fork do not get here
        yield


def hold_interrupts():
    """Make Ctrl-C wait (until :func:`release_interrupts` with what this returns): while the
    workers start, an interrupt would leave a team half made, which no rollback can undo."""
    if hasattr(signal, "pthread_sigmask"):
        return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    return None  # pragma: no cover - platforms without fork do not start workers


def release_interrupts(held) -> None:
    """Let Ctrl-C through again; one that came meanwhile is raised now."""
    if held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _error_payload(me: int, err: BaseException):
    text = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    try:
        blob = pickle.dumps(err)
        pickle.loads(blob)
    except Exception:  # noqa: BLE001 - an exception that does not survive pickling
        blob = None
    return ("error", me, blob, f"{type(err).__name__}: {err}", text)


def _rebuild_error(reply) -> BaseException:
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


#: the teams whose processes run (weakly: a team is gone with its flow)
_LIVE: weakref.WeakSet = weakref.WeakSet()


class WorkerTeam:
    """Worker 0's side: the children, the messages of an epoch, rollback and statistics."""

    def __init__(self, flow, workers: int, epoch: int):
        if _LIVE:  # flows no longer used stop their workers once collected: collect now,
            gc.collect()  # rather than fork beside processes nobody will talk to again
        _LIVE.add(self)
        self.flow, self.workers = flow, workers
        for scope in scopes_of(flow):
            scope.clear()
        from .. import kernels

        kernels.active()  # loaded once here, before the fork, rather than once per worker
        ctx = multiprocessing.get_context("fork")
        self.conns, self.procs = [], []
        # the children's replicas start from the same counts: every input's capability
        for inp in flow.inputs.values():
            inp.op.capability = (epoch,)
            inp.op.tracker.apply(inp.op.index, (epoch,), workers)
        for w in range(1, workers):
            ours, theirs = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(flow, w, workers, theirs,
                                                    self.conns + [ours]),
                               name=f"ddlab worker {w}", daemon=True)
            proc.start()
            theirs.close()
            self.conns.append(ours)
            self.procs.append(proc)
        self.writers = [_Writer(conn) for conn in self.conns]
        self._poller = select.poll()
        self._fds = {}
        for i, conn in enumerate(self.conns):
            self._poller.register(conn.fileno(), select.POLLIN)
            self._fds[conn.fileno()] = i
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
        #: (op id, epoch) -> :class:`WholeTrace` read by explanations this epoch
        self._whole: dict = {}
        self._finalizer = weakref.finalize(self, _stop, list(self.writers), list(self.procs))

    # -- messages ------------------------------------------------------------------------
    def _send(self, w: int, msg) -> None:
        try:
            self.writers[w - 1].send(msg)
        except (OSError, EOFError) as err:
            self._lost(w, err)

    def _recv(self, w: int):
        conn = self.conns[w - 1]
        try:
            wait([conn])  # (an interrupt here loses nothing)
            with _no_interrupts():
                return _unpack(conn.recv())
        except (OSError, EOFError) as err:
            self._lost(w, err)

    def _ask_all(self, msg) -> dict:
        """Send ``msg`` to every child and read each one's answer (between epochs)."""
        for w in range(1, self.workers):
            self._send(w, msg)
        replies, failure = {}, None
        for w in range(1, self.workers):
            reply = self._recv(w)
            if reply[0] == "error":
                failure = failure or reply
            replies[w] = reply
        if failure is not None:
            raise _rebuild_error(failure)
        return replies

    def _lost(self, w: int, err) -> None:
        proc = self.procs[w - 1]
        proc.join(timeout=1.0)
        self.broken = (f"worker {w} stopped (exit code {proc.exitcode}, {type(err).__name__}"
                       f"); this flow's workers are gone: build it again")
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
        conns = self.conns
        got = False
        while conns:
            if block and not got:
                ready = wait(conns)  # (an interrupt while waiting loses nothing)
            else:  # a look without waiting, once per operator run: one poll, no set-up
                ready = [conns[self._fds[fd]] for fd, _ in self._poller.poll(0)]
            if not ready:
                return got
            for conn in ready:
                w = conns.index(conn) + 1
                try:
                    with _no_interrupts():
                        msg = _unpack(conn.recv())
                except (OSError, EOFError) as err:
                    self._lost(w, err)
                got = True
                self._take(w, msg)
        return got

    def _take(self, w: int, msg) -> None:
        if msg[0] == "error":
            self._said[w] = None
            raise _rebuild_error(msg)
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
        the counts again (the restored capabilities of the reduces)."""
        if self.broken:
            return
        try:
            for w in range(1, self.workers):
                self._send(w, ("abort", epoch))
            announced = {}
            for w in range(1, self.workers):
                while True:  # (messages of the epoch still on their way are dropped)
                    reply = self._recv(w)
                    if reply[0] == "rolled back":
                        announced[w] = reply[1]
                        break
            replica = self.replica
            replica.exchanges.take()
            replica.reset_inputs(epoch)
            announced[0] = replica.outbox()
            for w in range(1, self.workers):
                self._send(w, ("sync", [d for v, ds in announced.items() if v != w
                                        for d in ds]))
            replica.receive([d for v, ds in announced.items() if v != 0 for d in ds], [])
            for w in range(1, self.workers):
                self._recv(w)
        except DataflowError:
            raise
        except BaseException as err:  # noqa: BLE001 - the workers can no longer agree
            self.broken = f"the rollback was interrupted ({type(err).__name__})"
            raise

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

    def stop(self) -> None:
        self._finalizer()
        _LIVE.discard(self)


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


def _stop(writers, procs) -> None:
    """Tell the children to leave, and make sure they did."""
    for writer in writers:
        try:
            writer.send(("stop",))
        except (OSError, EOFError, ValueError):
            pass
        writer.close()
        writer.conn.close()
    for proc in procs:
        proc.join(timeout=2.0)
        if proc.is_alive():
            proc.terminate()
            proc.join(timeout=2.0)


# -- the children ------------------------------------------------------------------------
class _Aborted(Exception):
    """Worker 0 rolled the epoch back while this child was running it."""


class _Child:
    """A child's side of an epoch: run, send at once, take in, say when idle."""

    def __init__(self, flow, me: int, workers: int, conn):
        self.flow, self.me, self.conn = flow, me, conn
        self.writer = _Writer(conn)
        self.replica = Replica(flow, me, workers)
        self.processed = 0
        self.seconds = 0.0
        #: the counters copied by the fork (worker 0's, and the process's kernel calls):
        #: this worker reports only its own
        self.forked_work = flow.work_done()

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
        self.writer.send(("m", deltas, parts, self.processed, idle, self.replica.busy(),
                          self.seconds))
        self.seconds = 0.0
        return True

    def _drain(self, block: bool) -> bool:
        got = False
        conn = self.conn
        while (block and not got) or conn.poll():
            msg = _unpack(conn.recv())
            got = True
            kind = msg[0]
            if kind == "m":
                _, deltas, parts, decisions = msg
                _decide(self.flow, decisions)
                self.replica.receive(deltas, parts)
                self.processed += 1
            elif kind == "abort":
                self.replica.roll_back(msg[1])
                raise _Aborted(("rolled back", self.replica.outbox()))
            elif kind == "commit":
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


def _serve(flow, me: int, workers: int, conn, inherited) -> None:
    """A child's life: answer worker 0's messages until told to stop (or it is gone)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is worker 0's; it tells us
    for other in inherited:
        other.close()
    for inp in flow.inputs.values():
        inp.op.pending = []  # (worker 0's, copied by the fork: its updates enter there)
    child = _Child(flow, me, workers, conn)
    replica = child.replica
    while True:
        try:
            msg = _unpack(conn.recv())
        except (EOFError, OSError):
            break
        kind = msg[0]
        if kind == "stop":
            break
        try:
            if kind == "begin":
                _, epoch, serial, tail, decisions = msg
                flow._step_serial = serial
                if tail:
                    flow.interner.intern_unique(tail)
                replica.synced = len(flow.interner)
                _decide(flow, decisions)
                reply = child.epoch(epoch)
            elif kind == "abort":  # (after the epoch's commit failed on worker 0)
                replica.roll_back(msg[1])
                reply = ("rolled back", replica.outbox())
            elif kind == "sync":
                replica.receive(msg[1], [])
                reply = ("synced",)
            elif kind == "progress":
                reply = ("progress", view_rows(flow))
            elif kind == "read":  # an explanation at worker 0 reads this shard of a trace
                reply = ("read", read_shard(flow, *msg[1:]))
            else:  # pragma: no cover - a message this version does not send
                raise DataflowError(f"worker {me}: unknown message {kind!r}")
        except BaseException as err:  # noqa: BLE001 - reported to worker 0, which raises it
            reply = _error_payload(me, err)
            try:
                child.writer.send(reply)
            except (OSError, EOFError):
                break
            # an error in an epoch: wait for worker 0's abort, dropping its messages
            while True:
                try:
                    msg = _unpack(conn.recv())
                except (EOFError, OSError):
                    return
                if msg[0] == "abort":
                    replica.roll_back(msg[1])
                    reply = ("rolled back", replica.outbox())
                    break
                if msg[0] == "stop":
                    return
        try:
            child.writer.send(reply)
        except (OSError, EOFError):
            break
        except Exception as err:  # noqa: BLE001 - a reply that cannot be pickled
            child.writer.send(_error_payload(me, DataflowError(
                f"worker {me} could not send its reply to {kind!r}: {err}")))
    child.writer.close()


def _decide(flow, decisions) -> None:
    if decisions:
        ops = flow.operators
        for op_id, state in decisions.items():
            ops[op_id].restore(state)
