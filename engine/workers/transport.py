"""The workers' transport: framed messages between worker 0 and each child, the children's
processes, and nothing of the dataflow.

Laid out as timely's ``communication`` crate lays it out (its allocators own the processes and
the channels, its networking module the framing), behind one small interface:
:class:`Channel` (``send(msg, rid)``, ``recv() -> (rid, msg)``, ``ready()``) and
:class:`Children` (``fork``, ``wait_any``, ``lost``, ``stop``).  The coordinator, the replica
and the child loop (:mod:`.team`) use only these.

- **Framing.**  A frame is a header (flags, request id, number of buffers, pickle length), a
  table of the buffers' lengths, the pickle (protocol 5), then the buffers (numpy arrays'
  memory, pickled out of band).  The request id lets a reader drop the replies of a request it
  stopped waiting for (a Ctrl-C while worker 0 waited) instead of taking them for the next
  one's.
- **Shared memory.**  A message whose buffers add up to :data:`SHARED_FROM` bytes or more
  sends them in an anonymous shared file (``memfd_create``; where there is none, a file in
  ``/dev/shm`` unlinked at once) whose descriptor travels with the frame (``SCM_RIGHTS``).
  No name ever stays behind: the pages live as long as the receiver's arrays look at them, and
  a process that dies, sender or receiver, takes its references with it.  A file that cannot
  be filled (``ENOSPC``: Docker's and Binder's 64 MB ``/dev/shm``, or no memory) is given up
  and the message goes through the socket instead: a full disk is not a lost worker.
- **Ctrl-C.**  A frame is read and written whole under :class:`~ddlab.engine.interrupts.held`
  (a Python handler that notes the signal, whichever thread the kernel delivered it to); the
  waits before a frame starts stay interruptible.
- **Processes.**  Children are forked (each gets a replica of the flow with nothing pickled),
  die with their parent (``PR_SET_PDEATHSIG`` and a watch on the parent's pid), let go of the
  sockets they inherited (another team's channels, a Jupyter kernel's ZMQ sockets), ignore
  SIGINT (worker 0 tells them), and are killed if they do not leave within
  :data:`STOP_SECONDS` of being told to.
"""
from __future__ import annotations

import ctypes
import mmap
import multiprocessing
import multiprocessing.connection
import os
import pickle
import queue
import select
import signal
import socket
import stat
import struct
import sys
import threading
import time
from dataclasses import dataclass, field

from ..interrupts import held

#: a message whose out-of-band buffers add up to this many bytes travels in shared memory
#: (``python -m benchmarks ipc``: a million rows 136 ms pickled through a pipe, 5 ms through
#: shared memory)
SHARED_FROM = 1 << 20
#: seconds a told-to-stop child gets before it is killed
STOP_SECONDS = 2.0
#: seconds between two looks at the children's liveness while waiting for a message
LIVENESS_SECONDS = 1.0
#: the flags of a frame
_SHARED = 1
_HEADER = struct.Struct("!BxxxIIQ")  # flags, request id, buffers, pickle bytes
_ALIGN = 64
_FD_SPACE = socket.CMSG_SPACE(struct.calcsize("i"))


@dataclass
class Counters:
    """What this process's transport did (for tests and ``benchmarks``)."""
    frames: int = 0
    shared: int = 0
    #: messages meant for shared memory that went through the socket (the file could not
    #: be filled), with the last reason
    fell_back: int = 0
    last_fallback: str = ""
    extra: dict = field(default_factory=dict)


counters = Counters()


# -- shared memory ------------------------------------------------------------------------
def _shm_dir() -> str | None:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _anonymous_file() -> int:
    """A descriptor of a new shared file that has no name (or whose name is already gone)."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("ddlab-message", os.MFD_CLOEXEC)
    where = _shm_dir()
    if where is None:
        raise OSError("no shared memory on this platform")
    path = os.path.join(where, f"ddlab-{os.getpid()}-{time.monotonic_ns()}")
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    os.unlink(path)
    return fd


def _shared_copy(views) -> int:
    """The buffers written into a new shared file, each at an offset aligned for its type;
    its descriptor.  Raises ``OSError`` (the file given up) when it cannot be filled."""
    fd = _anonymous_file()
    try:
        at = 0
        for view in views:
            done = 0
            while done < view.nbytes:
                done += os.pwrite(fd, view[done:], at + done)
            at += -(-view.nbytes // _ALIGN) * _ALIGN
        os.ftruncate(fd, max(at, 1))  # (the last array's padding: the size the reader maps)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _map_shared(fd: int, lengths) -> list:
    """The buffers of a shared file, as views of its pages mapped copy-on-write."""
    size = sum(-(-n // _ALIGN) * _ALIGN for n in lengths)
    try:
        pages = mmap.mmap(fd, max(size, 1), flags=mmap.MAP_PRIVATE,
                          prot=mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)
    whole, out, at = memoryview(pages), [], 0
    for n in lengths:
        out.append(whole[at:at + n])
        at += -(-n // _ALIGN) * _ALIGN
    return out


def encode(msg, rid: int) -> tuple[list, int | None]:
    """``msg`` as a frame's parts (to be joined) and the descriptor to send with it (or
    ``None``)."""
    buffers: list = []
    meta = pickle.dumps(msg, protocol=5, buffer_callback=buffers.append)
    views = [b.raw() for b in buffers]
    lengths = [v.nbytes for v in views]
    fd = None
    if views and sum(lengths) >= SHARED_FROM:
        try:
            fd = _shared_copy(views)
        except OSError as err:
            counters.fell_back += 1
            counters.last_fallback = f"{type(err).__name__}: {err}"
    head = _HEADER.pack(_SHARED if fd is not None else 0, rid, len(views), len(meta))
    parts = [head, struct.pack(f"!{len(views)}Q", *lengths), meta]
    if fd is None:
        parts.extend(views)
    else:
        counters.shared += 1
    counters.frames += 1
    return parts, fd


# -- a channel ----------------------------------------------------------------------------
class Channel:
    """One end of a worker-0-to-child socket pair: framed messages, each with a request id.

    A frame is sent at once when the socket has room (the usual case: large arrays travel in
    shared memory, so frames are small); when it has not, it is handed to a thread of its own,
    which waits for room.  Two workers may send to each other at once, and a worker that
    waited for room while the other did too would wait for ever; a thread writing every frame
    would cost a hand-over of the interpreter lock per message (measured: milliseconds under
    load)."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
            try:
                sock.setsockopt(socket.SOL_SOCKET, option, 1 << 20)
            except OSError:  # pragma: no cover - a kernel refusing the size keeps its own
                pass
        self._poll = select.poll()
        self._poll.register(sock.fileno(), select.POLLIN)
        self.lock = threading.Lock()
        self.waiting = 0  # frames handed to the thread and not yet written
        self.queue: queue.SimpleQueue | None = None
        self.thread: threading.Thread | None = None
        self.error: BaseException | None = None

    def fileno(self) -> int:
        return self.sock.fileno()

    # sending
    def send(self, msg, rid: int = 0) -> None:
        """Send ``msg`` (raises ``OSError`` when the peer is gone)."""
        if self.error is not None:
            raise self.error
        with held():  # a frame goes out whole, or not at all
            parts, fd = encode(msg, rid)
            try:
                self._send_frame(b"".join(parts), fd)
            finally:
                if fd is not None:
                    os.close(fd)  # (the kernel holds the file for the receiver meanwhile)

    def _send_frame(self, frame: bytes, fd: int | None) -> None:
        with self.lock:
            if not self.waiting:
                try:
                    if fd is None:
                        sent = self.sock.send(frame, socket.MSG_DONTWAIT)
                    else:
                        sent = socket.send_fds(self.sock, [frame], [fd], socket.MSG_DONTWAIT)
                        fd = None  # (sent with the frame's first bytes)
                except BlockingIOError:
                    sent = 0
                if sent == len(frame):
                    return
                frame = frame[sent:]
            self.waiting += 1
            if self.thread is None:
                self.queue = queue.SimpleQueue()
                self.thread = threading.Thread(target=self._write, name="ddlab worker channel",
                                               daemon=True)
                self.thread.start()
            self.queue.put((frame, None if fd is None else os.dup(fd)))

    def _write(self) -> None:
        while True:
            item = self.queue.get()
            if item is None:
                return
            frame, fd = item
            try:
                if fd is not None:
                    sent = socket.send_fds(self.sock, [frame], [fd])
                    os.close(fd)
                    frame = frame[sent:]
                self.sock.sendall(frame)
            except BaseException as err:  # noqa: BLE001 - the peer is gone: said at next send
                self.error = err if isinstance(err, (OSError, EOFError)) else OSError(str(err))
                return
            with self.lock:
                self.waiting -= 1

    # receiving
    def ready(self) -> bool:
        """Whether a frame has started to arrive (or the peer is gone)."""
        return bool(self._poll.poll(0))

    def recv(self):
        """The next frame: ``(request id, message)``.  Waits for its start interruptibly;
        reads it whole with Ctrl-C held.  Raises ``EOFError`` when the peer is gone."""
        while not self._poll.poll(None):
            pass
        with held():
            head, fds = self._read_head()
            flags, rid, n, meta_len = _HEADER.unpack(head)
            try:
                lengths = struct.unpack(f"!{n}Q", self._read(8 * n)) if n else ()
                meta = self._read(meta_len)
                if flags & _SHARED:
                    if not fds:
                        raise EOFError("a shared-memory frame came without its file")
                    buffers = _map_shared(fds.pop(0), lengths)
                else:
                    buffers = [self._read(k) for k in lengths]
            finally:
                for fd in fds:
                    os.close(fd)
        return rid, pickle.loads(meta, buffers=buffers)

    def _read_head(self):
        fds: list = []
        data = bytearray()
        while len(data) < _HEADER.size:
            chunk, anc, _, _ = self.sock.recvmsg(_HEADER.size - len(data), _FD_SPACE)
            for level, kind, payload in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    usable = len(payload) - len(payload) % 4
                    fds.extend(struct.unpack(f"{usable // 4}i", payload[:usable]))
            if not chunk:
                for fd in fds:
                    os.close(fd)
                raise EOFError("the peer closed the channel")
            data += chunk
        return bytes(data), fds

    def _read(self, n: int) -> bytearray:
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            k = self.sock.recv_into(view[got:])
            if not k:
                raise EOFError("the peer closed the channel in the middle of a message")
            got += k
        return buf

    def close(self) -> None:
        """Close the channel; a writer thread blocked on a peer that does not read is woken."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self.thread is not None:
            self.queue.put(None)
            self.thread.join(timeout=STOP_SECONDS)
        self.sock.close()


# -- the children -------------------------------------------------------------------------
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int, forked_on_main: bool) -> None:
    """This child is killed when its parent dies: ``PR_SET_PDEATHSIG`` on Linux (it fires
    when the *thread* that forked ends, so only when that was the main thread), and a thread
    watching the parent's pid everywhere (a kernel killed by ``kill -9`` leaves nothing)."""
    if forked_on_main and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the watch remains
            pass
    if os.getppid() != parent:  # died before the call above
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(LIVENESS_SECONDS)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="ddlab parent watch", daemon=True).start()


def _let_go_of_inherited_sockets(keep: int) -> None:
    """Every socket this child inherited except its own channel now refers to ``/dev/null``
    (the socket is released, and the descriptor's number stays taken, so an object in the
    copied memory that closes it later closes nothing of ours)."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:  # pragma: no cover - no /proc: the fork's copies stay open
        return
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for name in names:
            fd = int(name)
            if fd in (keep, null) or fd < 3:
                continue
            try:
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.dup2(null, fd)
            except OSError:
                continue
    finally:
        os.close(null)


def _child_main(target, args, sock, parent: int, forked_on_main: bool) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is worker 0's; it tells us
    _die_with_parent(parent, forked_on_main)
    _let_go_of_inherited_sockets(sock.fileno())
    target(Channel(sock), *args)


def describe_exit(code) -> str:
    """A child's exit code in words."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class Children:
    """Worker 0's children: forked, watched, stopped.  ``channels[i]`` talks to child
    ``i + 1``."""

    def __init__(self, n: int, target, args_of):
        """Fork ``n`` children, child ``w`` running ``target(channel, *args_of(w))``."""
        ctx = multiprocessing.get_context("fork")
        parent, on_main = os.getpid(), threading.current_thread() is threading.main_thread()
        self.channels: list[Channel] = []
        self.procs: list = []
        self.stopped = False
        try:
            for w in range(1, n + 1):
                ours, theirs = socket.socketpair()
                proc = ctx.Process(target=_child_main,
                                   args=(target, args_of(w), theirs, parent, on_main),
                                   name=f"ddlab worker {w}", daemon=True)
                proc.start()
                theirs.close()
                self.channels.append(Channel(ours))
                self.procs.append(proc)
        except BaseException:
            self.stop()
            raise
        self._poll = select.poll()
        self._which: dict[int, int] = {}
        for i, (channel, proc) in enumerate(zip(self.channels, self.procs)):
            self._poll.register(channel.fileno(), select.POLLIN)
            self._poll.register(proc.sentinel, select.POLLIN)
            self._which[channel.fileno()] = i
            self._which[proc.sentinel] = i

    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def wait_any(self, only: int | None = None, block: bool = True) -> list[int]:
        """The children (1-based) with a frame arriving, or gone; with ``block``, waits for
        one (interruptibly).  ``only``: that child alone."""
        if only is not None:
            channel, proc = self.channels[only - 1], self.procs[only - 1]
            if channel.ready():
                return [only]
            while block:
                ready = multiprocessing.connection.wait([channel.sock, proc.sentinel],
                                                        timeout=LIVENESS_SECONDS)
                if ready:
                    return [only]
            return []
        while True:
            events = self._poll.poll(LIVENESS_SECONDS * 1000 if block else 0)
            if events or not block:
                return sorted({self._which[fd] + 1 for fd, _ in events})

    def exit_of(self, w: int, wait: float = 1.0) -> str:
        proc = self.procs[w - 1]
        proc.join(timeout=wait)
        return describe_exit(proc.exitcode)

    def stop(self, message=None) -> None:
        """Tell every child to leave (``message``, best effort), close the channels, wait
        :data:`STOP_SECONDS` in all, then kill the children still there."""
        if self.stopped:
            return
        self.stopped = True
        for channel in self.channels:
            if message is not None:
                try:
                    parts, fd = encode(message, 0)
                    if fd is None:
                        channel.sock.send(b"".join(parts), socket.MSG_DONTWAIT)
                    else:  # pragma: no cover - a stop message is small
                        os.close(fd)
                except OSError:
                    pass
            channel.close()
        deadline = time.monotonic() + STOP_SECONDS
        for proc in self.procs:
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=STOP_SECONDS)
