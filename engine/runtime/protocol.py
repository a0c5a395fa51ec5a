"""The operator run protocol: how a scheduled operator takes its input, runs, and releases
its pointstamps.

Every operator is a :class:`RunProtocol`; what it computes is its own (``process``,
``process_times``), and what it needs of the runtime it declares (:mod:`.contract`).  The
protocol, in the order a step meets it:

1. An upstream run delivers a batch (:meth:`RunProtocol.accept`): it is queued at its time and
   counted as a pointstamp at the operator's *location* (its own index, or its fused group's)
   until the run that takes it ends.  A batch handed on inside a group's run at the same time
   needs no count of its own: the group's input holds the time.
2. A sweep of the scope (:meth:`~.scope.Scope.run`) calls :meth:`RunProtocol.step` on every
   operator with work: it runs, in one go, every queued time its input frontier has passed,
   smallest first (a linear extension of the partial order); an operator that ``takes_times``
   gets the times complete together in one :meth:`RunProtocol.run_times`.
3. A run (:meth:`RunProtocol.run_at`) first runs the operators fused into it at the same time,
   upstream first, then ``process``; what it sends (:meth:`RunProtocol.emit`) is consolidated,
   charged to the row budget and delivered (1.) before the run's own pointstamps go
   (:meth:`RunProtocol._released`), so no time ever looks complete too early.

The fields this reads (``location``, ``host``, ``fused``, ``targets``, ``local``, ``own_work``,
``runs_eagerly``) are set by :mod:`.wiring` alone.
"""
from __future__ import annotations

from operator import le
from time import perf_counter

from .. import tuning
from ..batch import Batch, concat_batches
from ..budget import charge
from ..memory import release_free_memory


class RunProtocol:
    """The runtime's side of an operator (see the module's docstring)."""

    #: operators fused into this one (see :mod:`.wiring`), upstream first: each
    #: runs at the start of this operator's run at the same time, instead of being scheduled
    fused: tuple = ()
    #: the reader this operator is fused into (``None``: scheduled on its own)
    fused_into = None
    #: the last blocked time and the pointstamp in its way (see :meth:`_still_blocked`)
    _blocker = None
    #: (on a host) the time of the group run under way, and the counted batches its fused
    #: operators took (released with the host's own when the run ends)
    running = None
    _release = 0
    #: whether this operator's work is counted apart from its tracker's counts
    #: (:attr:`local`): with several workers, where the tracker counts every worker's
    #: pointstamps; with one, ``local`` is the tracker's count of its location itself
    own_work = False
    #: whether it takes a time's input as it arrives (its declared ``eager``, with several
    #: workers: set by the wiring)
    runs_eagerly = False

    def _init_runtime(self) -> None:
        """The protocol's per-instance state (called by the operator's constructor)."""
        #: ``{time: [batch]}`` queued per input port
        self.queues: list[dict] = [dict() for _ in self.inputs]
        self.tracker = self.scope.tracker
        #: where this operator's pointstamps are counted in its scope's tracker: its own
        #: index, or its group's when fused into a reader; set by the wiring
        self.location = None
        #: the operator whose runs run this one: itself, or its group's reader when fused
        self.host = self
        #: (on a host) ``{time: items}`` of work here and in the operators fused into it:
        #: queued batches and capabilities to use (this worker's alone, where the tracker
        #: counts every worker's)
        self.local: dict = {}
        #: ``{time: batches}`` queued here inside a group's run, never counted (see accept)
        self._free: dict = {}
        #: ``(deliver, port)`` per output: the reader's ``accept`` where it reads at the
        #: time sent, else its ``enqueue``, or an exchange channel (set by the wiring)
        self.targets: list = []
        self._emitted = 0

    @property
    def queued(self) -> set:
        """The times with input queued on any port (each batch one pointstamp at
        :attr:`location`)."""
        return {t for queue in self.queues for t in queue}

    def input_time(self, port: int, t: tuple) -> tuple:
        """The time in this operator's scope at which an update sent at ``t`` is processed
        (declared by overriding: a loop's enter, feedback, leave; such an operator is neither
        fused nor fused into, :func:`~.contract.reads_at_time_sent`)."""
        return t

    def enqueue(self, port: int, t: tuple, batch: Batch) -> None:
        self.accept(port, self.input_time(port, t), batch)

    def accept(self, port: int, t: tuple, batch: Batch) -> None:
        """Queue ``batch`` for port ``port`` at (this operator's) time ``t``: a pointstamp
        (one per batch, a message in flight) until the run that takes it has finished."""
        queue = self.queues[port]
        pending = queue.get(t)
        if pending is None:
            queue[t] = [batch]
        else:
            pending.append(batch)
        host = self.host
        if host.running == t:
            # handed on inside a group's run at t: the group's input holds t until the run
            # ends, so this batch needs no pointstamp of its own
            self._free[t] = self._free.get(t, 0) + 1
            return
        self.tracker.update(self.location, t, 1)
        if self.own_work:
            host.add_work(t, 1)

    def add_work(self, t: tuple, n: int) -> None:
        """(On a host) ``n`` more (or, negative, fewer) items of work at ``t``."""
        local = self.local
        had = local.get(t, 0)
        left = had + n
        if left:
            local[t] = left
            if not had and len(local) == 1:
                self.scope.mark_busy(self.index)
        else:
            del local[t]
            if not local:
                self.scope.mark_idle(self.index)

    def step(self) -> bool:
        """The scheduler's call: run the queued times that are complete (no more input can
        arrive at or before them), smallest first in lexicographic order (a linear extension
        of the partial order: an earlier time's output exists before a later time reads it);
        a time still blocked waits, and the times after it that do not depend on it go on.
        So every operator meets each of its times once, with all of its input there.
        Returns whether anything ran."""
        times = self.local
        if self.runs_eagerly:
            return self._step_eagerly()
        tracker = self.tracker
        ran = False
        while times:
            if len(times) == 1:
                t = next(iter(times))
                # (``ready_time``: complete without asking, the sweep's least time)
                if times[t] < 0 or t != tracker.ready_time and self._still_blocked(tracker, t):
                    return ran  # (negative: a worker's batch taken here before its count came)
                self.run_at(t)
                ran = True
                continue
            held = []  # times found blocked: every time in advance of one is blocked too
            ready = []
            batches = self.takes_times
            for t in sorted(times):
                if times[t] < 0:
                    continue
                if held:
                    for b in held:
                        if all(map(le, b, t)):  # (b <= t in the product order, in C)
                            break
                    else:
                        b = None
                    if b is not None:
                        continue
                if t != tracker.ready_time and self._still_blocked(tracker, t):
                    held.append(t)
                    continue
                ready.append(t)
                if not batches:
                    break
                if self.index in tracker.reach.sources[self.index]:
                    # on a loop: its own pointstamp at t reaches it again one iteration on,
                    # so every time in advance of that is blocked (not asked of the tracker)
                    held.append(t[:-1] + (t[-1] + 1,))
            if not ready:
                return ran
            if len(ready) == 1:
                self.run_at(ready[0])
            else:
                # complete together: none can receive input from the run at another (an
                # earlier one reaches a later one only around a feedback edge, which would
                # have left the later one blocked by the earlier one's pointstamp)
                self.run_times(ready)
            ran = True
        return ran

    def _step_eagerly(self) -> bool:
        """:meth:`step` for an operator that :attr:`runs_eagerly`: every time with work of
        its own, whether complete or not, smallest first."""
        times = self.local
        ran = False
        while times:
            ready = [t for t in times if times[t] > 0]
            if not ready:
                break
            self.run_at(min(ready))
            ran = True
        return ran

    def _still_blocked(self, tracker, t: tuple) -> bool:
        """Whether ``t`` is not complete here (the caller has found that it is not the
        tracker's ``ready_time``); the pointstamp found in the way is kept, and while it
        holds the next sweep need not look again (an operator waiting for later iterations
        is visited by every sweep of its loop)."""
        memo = self._blocker
        if memo is not None and memo[0] == t and tracker.holds(memo[1]):
            return True
        found = tracker.blocker(self.index, t)
        self._blocker = None if found is None else (t, found)
        return found is not None

    def run_at(self, t: tuple) -> None:
        """Process the input queued at ``t`` (after the operators fused into this one took
        theirs) and record the run.  (The hot path of every operator run: written for few
        Python operations.)"""
        if self.fused:
            self._run_fused(t)
        queues = self.queues
        if len(queues) == 1:
            pending = queues[0].pop(t, None)
            if pending is None:
                inputs = [None]
                n_in = taken = 0
            elif len(pending) == 1:
                inputs = pending
                n_in = len(pending[0].diffs)
                taken = 1
            else:
                batch = concat_batches(pending, self.label)
                inputs = [batch]
                n_in = 0 if batch is None else len(batch.diffs)
                taken = len(pending)
        else:
            inputs, n_in, taken = self._take(t)
        if taken:
            if self._free:
                taken -= self._free.pop(t, 0)  # (those were never counted)
        elif self.idle_without_input(t):
            # only the operators fused into it had input at t, and they sent nothing
            self._released(t, 0)
            return
        self._emitted = 0
        start = perf_counter()
        self.process(t, inputs)
        seconds = perf_counter() - start
        self._released(t, taken)
        flow = self.flow
        stats = flow.statistics
        stats.running.append((self, t, n_in, self._emitted, seconds))
        if stats.starts is not None:  # several workers: when it ran, to compare across them
            stats.starts.append(start)
        flow.work.activations += 1
        if n_in + self._emitted >= tuning.RELEASE_AFTER_ROWS:
            # its temporaries are freed by now; its input batches go with these names
            inputs = pending = batch = None
            release_free_memory()

    def _run_fused(self, t: tuple) -> None:
        """The operators fused into this one take their input at ``t`` (upstream first),
        handing their output on inside the group's run at ``t``."""
        self.running = t  # (see accept)
        self._release = 0
        for op in self.fused:
            for queue in op.queues:
                if t in queue:
                    op.run_at(t)
                    break

    def _take(self, t: tuple):
        """``(inputs, rows in, batches taken)``: the input queued at ``t`` on every port, one
        batch (or ``None``) per port."""
        inputs = []
        n_in = taken = 0
        for queue in self.queues:
            pending = queue.pop(t, None)
            if pending is None:
                inputs.append(None)
                continue
            taken += len(pending)
            batch = pending[0] if len(pending) == 1 else concat_batches(pending, self.label)
            inputs.append(batch)
            if batch is not None:
                n_in += len(batch.diffs)
        return inputs, n_in, taken

    def run_times(self, ts: list) -> None:
        """:meth:`run_at` for several complete times ``ts`` (in a linear extension of their
        order) in one run: the operators fused into this one take each time's input first,
        then :meth:`process_times` gets every time's input at once.  The input pointstamps go
        after it, and each time keeps its own statistics record (the run's seconds shared)."""
        fused = self.fused
        items, counts = [], []
        for t in ts:
            release = 0
            if fused:
                self._run_fused(t)
                self.running = None
                release = self._release
            inputs, n_in, taken = self._take(t)
            if taken:
                if self._free:
                    taken -= self._free.pop(t, 0)  # (those were never counted)
            elif self.idle_without_input(t):
                counts.append((t, release))  # only the fused operators had input at t
                continue
            items.append((t, inputs, n_in))
            counts.append((t, taken + release))
        start = perf_counter()
        done = self.process_times([(t, inputs) for t, inputs, _ in items]) if items else []
        seconds = perf_counter() - start
        self._release = 0
        for t, taken in counts:
            self._released(t, taken)
        flow = self.flow
        stats = flow.statistics
        share = seconds / max(len(done), 1)
        n_in = {t: n for t, _, n in items}
        for t, n_out in done:
            stats.running.append((self, t, n_in.get(t, 0), n_out, share))
            if stats.starts is not None:
                stats.starts.append(start)
        flow.work.activations += 1
        if sum(n_in.values()) + sum(n for _, n in done) >= tuning.RELEASE_AFTER_ROWS:
            items = None
            release_free_memory()

    def _released(self, t: tuple, taken: int) -> None:
        """A run at ``t`` took ``taken`` counted batches.  Their pointstamps go only now that
        what the run caused is counted (a worker announcing its changes mid-run never shows
        the time as done too early); in a group, all of the group's at once when its host's
        run ends."""
        host = self.host
        if host is not self:
            host._release += taken
            return
        if self.fused:
            taken += self._release
            self.running = None
        if taken:
            self.tracker.update(self.location, t, -taken)
            if self.own_work:
                self.add_work(t, -taken)

    def emit(self, t: tuple, batch: Batch | None) -> None:
        batch = self.sent(batch)
        if batch is not None:
            for deliver, port in self.targets:
                deliver(port, t, batch)

    def sent(self, batch: Batch | None) -> Batch | None:
        """``batch`` consolidated and counted as sent (budget, statistics), or ``None`` when
        there is nothing to send."""
        if batch is None:
            return None
        n = len(batch.diffs)  # (not len(batch): one Python call less on every emit)
        if not n:
            return None
        if not batch.consolidated:
            batch = batch.consolidate()
            n = len(batch.diffs)
            if not n:
                return None
        if self.flow.max_rows_per_epoch is not None:
            charge(self, n)
        self._emitted += n
        self.carried = True
        return batch

    def clear_queues(self) -> None:
        for q in self.queues:
            q.clear()
        self.local.clear()
        self._free.clear()
        self.running = None
