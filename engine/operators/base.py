"""The operator base class: input queues per time, emission, statistics."""
from __future__ import annotations

from operator import le
from time import perf_counter

from .. import tuning
from ..batch import Batch, concat_batches
from ..budget import charge
from ..errors import DataflowError
from ..memory import release_free_memory


class Operator:
    """A node of the dataflow graph living in one scope.

    Upstream operators :meth:`enqueue` batches at a time: each time with input queued is a
    pointstamp the scope's tracker counts (at :attr:`location`).  The scope calls
    :meth:`step` when the operator holds pointstamps; it runs, in one go, every queued time
    its input frontier has passed (:meth:`run_at` per time, in a linear extension of their
    order; an operator that ``takes_times`` gets the times complete together in one
    :meth:`run_times`).  :meth:`process` turns the inputs at one time into output batches sent with
    :meth:`emit` (consolidated, so loops can quiesce).
    """

    kind = "operator"
    #: (explanations) whether each output update is an input update unchanged but for its
    #: time (:meth:`upstream_time` maps it back): a record is explained by itself upstream
    passes_records = False
    #: (explanations) whether the output is the input's whole collection unchanged (its times
    #: padded at most): explanations look through it to what it presents
    presents_input = False
    #: (explanations) whether its steps are shown in a derivation (``Explanation.nodes()``):
    #: operators that compute something; the rest (arrangements, loop edges) is plumbing
    shown_in_derivations = False
    #: (explanations) an algorithm's own short reason for the records of its result, set on
    #: the operator producing it (:class:`~ddlab.engine.why.witness.Witness`), else ``None``
    witness = None
    #: operators fused into this one (see :mod:`~ddlab.engine.fusion`), upstream first: each
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
    #: whether it may be fused into its only reader: it processes a time's input into output
    #: at that same time, keeping no state a reader could see out of step (linear operators,
    #: arrangements)
    fusable = False
    #: whether its output at a time is a sum over its input batches at that time, so that it
    #: may take a time's input in several runs, as it arrives, rather than waiting until the
    #: time is complete (linear operators, a loop's edges); :attr:`runs_eagerly` turns that
    #: on, with several workers, where waiting would hold every worker at every operator
    #: until the slowest has passed it
    eager = False
    runs_eagerly = False
    #: whether it takes several complete times in one run (:meth:`run_times`, a
    #: :meth:`process_times` of its own) rather than one run per time: a reduce, which then
    #: reads each key's history once for all of them; a join, which matches all their deltas
    #: at once (its fused arrangements have put every time's delta in the traces by then)
    takes_times = False
    #: the step attempt whose rows ``budget_rows`` counts, and that count (kept by budget.py)
    budget_serial = -1
    budget_rows = 0

    def __init__(self, scope, inputs=(), name: str | None = None):
        for up in inputs:
            up.check_can_feed_new_operator()
        self.scope = scope
        self.flow = scope.flow
        self.inputs = list(inputs)
        self.carried = False  # has this operator sent any update yet?
        self.outputs: list[tuple[Operator, int]] = []
        self.queues: list[dict] = [dict() for _ in self.inputs]
        self.tracker = scope.tracker
        #: where this operator's pointstamps are counted in its scope's tracker: its own
        #: index, or its group's when fused into a reader (see :mod:`~ddlab.engine.fusion`);
        #: set with the topological order, before each step that follows a graph change
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
        #: time sent, else its ``enqueue`` (set with :attr:`location`)
        self.targets: list = []
        self.name = name or self.kind
        self.id = self.flow.register_operator(self)
        self.index = scope.add(self)
        for port, up in enumerate(self.inputs):
            up.outputs.append((self, port))
        self._emitted = 0
        #: arrangements of this operator's output, by key width (built once, shared)
        self.arrangements: dict[int, Operator] = {}
        #: this operator's output entered into nested scopes, by scope (built once, shared)
        self.entered: dict[int, Operator] = {}

    @property
    def queued(self) -> set:
        """The times with input queued on any port (each batch one pointstamp at
        :attr:`location`)."""
        return {t for queue in self.queues for t in queue}

    @property
    def label(self) -> str:
        return f"{self.name}#{self.id}"

    def check_can_feed_new_operator(self) -> None:
        """An operator added downstream of one that already sent updates would never see
        them (operators hold no replayable history): refuse, before anything is registered."""
        if self.carried:
            raise DataflowError(
                f"{self.label} has already sent updates ({self.flow.epoch} epochs ran); an "
                f"operator added after it now would miss them and read wrong results. Build "
                f"every operator before the first step, or build a new Dataflow and insert the "
                f"inputs' current contents (view().to_pandas()) into it.")

    def add_input(self, up: "Operator") -> int:
        up.check_can_feed_new_operator()
        self.inputs.append(up)
        self.queues.append({})
        up.outputs.append((self, len(self.inputs) - 1))
        self.flow.mark_graph_changed()
        return len(self.inputs) - 1

    # -- data movement -----------------------------------------------------------------
    def input_time(self, port: int, t: tuple) -> tuple:
        """The time in this operator's scope at which an update sent at ``t`` is processed."""
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

    def process_times(self, items: list) -> list:
        """:meth:`process` for ``[(t, inputs)]``, complete times in a linear extension of
        their order; ``[(time, rows emitted)]`` for every time processed.  By default one
        :meth:`process` per time; an operator that ``takes_times`` does better."""
        done = []
        for t, inputs in items:
            self._emitted = 0
            self.process(t, inputs)
            done.append((t, self._emitted))
        return done

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

    def idle_without_input(self, t: tuple) -> bool:
        """Whether a run at ``t`` with no input has nothing to do (a reduce with interesting
        times scheduled there does)."""
        return True

    def process(self, t: tuple, inputs: list) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

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

    # -- state for rollback and introspection --------------------------------------------
    def snapshot(self):
        return None

    def restore(self, state) -> None:
        pass

    def clear_queues(self) -> None:
        for q in self.queues:
            q.clear()
        self.local.clear()
        self._free.clear()
        self.running = None

    def traces(self) -> list:
        """Traces this operator owns (for retained-state accounting and compaction)."""
        return []

    # -- hooks of the analyses (engine/why): how this operator is explained, read, copied --
    # An operator that overrides none is still run, stepped, checkpointed and costed; it is
    # explained when it ``passes_records`` (or defines the two ``explain_*`` hooks), read
    # from its nearest trace upstream when it has one input (else :meth:`derive_history`),
    # and replayed once it defines :meth:`copy_into`.
    def kept_trace(self):
        """The trace holding this operator's whole output collection, if it keeps one."""
        return None

    def history_trace(self):
        """The trace explanations read this operator's history from (``None``: derived
        from its inputs by :meth:`derive_history`)."""
        return self.kept_trace()

    def known_kinds(self, kinds_of):
        """The kinds of the output fields when the graph tells them without running anything
        (``kinds_of(op)`` asks an upstream operator), else ``None``.  By default those of the
        input of an operator passing or presenting its records unchanged."""
        if self.inputs and (self.passes_records or self.presents_input):
            return kinds_of(self.inputs[0])
        return None

    def upstream_time(self, t: tuple) -> tuple:
        """The time at the input an output update at ``t`` comes from (an explanation walks
        back through it)."""
        return t

    def explain_present(self, tracer, step, rec, t, sign) -> list:
        """Why ``rec`` has a multiplicity of sign ``sign`` at inner time ``t`` here: the
        demands on the inputs that derive it once, ``[("P", input, record, time, sign)]``
        (:mod:`~ddlab.engine.why.lineage`; ``step.note`` says how, for the reader)."""
        if self.passes_records:
            return [("P", self.inputs[0], rec, self.upstream_time(t), sign)]
        raise LookupError(f"explanations do not know operator kind {self.kind!r}")

    def explain_exact(self, tracer, step, pattern, t, content) -> list:
        """The demands ``[("E", input, pattern, time)]`` that give this operator's
        collection restricted to ``pattern`` at ``t`` (which is ``content``) exactly."""
        if self.passes_records:
            return [("E", up, pattern, self.upstream_time(t)) for up in self.inputs]
        raise LookupError(f"explanations do not know operator kind {self.kind!r}")

    def derive_history(self, hist, pattern) -> dict:
        """``{(record, inner time): diff}`` of this operator's output for the records
        matching ``pattern``, from its inputs' (``hist.updates(input, pattern)``), when it
        keeps no trace.  By default its only input's: right for operators that pass records
        through unchanged."""
        if len(self.inputs) == 1:
            return hist.updates(self.inputs[0], pattern)
        raise NotImplementedError(f"explanations do not know operator kind {self.kind!r}")

    def copy_into(self, scope, inputs: list) -> "Operator":
        """A copy of this operator in ``scope`` (of another flow), reading ``inputs`` (the
        copies of its inputs built so far; later ones, a loop's feedback, are added with
        :meth:`add_input`): how a replay rebuilds the program (:mod:`~ddlab.engine.why.replay`)."""
        raise DataflowError(f"cannot replay operator {self.label} (kind {self.kind!r})")

    def __repr__(self) -> str:
        return f"<{self.label} in {self.scope.path}>"
