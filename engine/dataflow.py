"""The Dataflow: inputs, epochs, rollback, statistics.

Its checkpoint methods (``save``, ``load``) are installed by :mod:`.checkpoint`, and its why
methods (``why``, ``why_loop``, ``why_cost``) by :mod:`.why`, both imported with
``ddlab.engine``: the Dataflow knows nothing of either."""
from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter

import pandas as pd

from . import tuning
from .batch import concat_batches
from .collection import Collection
from .columns import Interner, decode_column
from .budget import DEFAULT_MAX_ROWS_PER_EPOCH
from .errors import DataflowError, StepInProgress
from .interrupts import DeferredInterrupts
from .input import InputCollection
from .loops import DEFAULT_MAX_ITERATIONS, Loop
from .memory import release_free_memory
from .operators.base import Operator
from .operators.io import Input, deliver_to_subscribers
from .runtime.contract import edge_kind
from .runtime.scope import Scope
from .runtime.wiring import wire
from .statistics import Statistics
from .work import Work
from .workers import WorkerTeam, hold_interrupts, release_interrupts, resolve_workers, view_rows


@dataclass
class StepReport:
    """What one :meth:`Dataflow.step` did."""

    epoch: int
    seconds: float
    input_updates: int
    operator_runs: int
    updates_processed: int
    retained_updates: int

    def __str__(self) -> str:
        return (f"epoch {self.epoch}: {self.input_updates} input updates, "
                f"{self.updates_processed} updates through {self.operator_runs} operator runs "
                f"in {self.seconds * 1000:.1f} ms; {self.retained_updates} updates retained")


class Dataflow:
    """A differential dataflow program: declare inputs, build operators, then ``step()``.

    Each ``step()`` closes the open epoch: the updates given to the inputs since the last
    step take effect together at time ``(epoch,)``, every operator runs to quiescence (loops to
    their fixed points), views and subscribers see the epoch's output.  If anything fails (a
    user function raises, a loop exceeds ``max_iterations``), the epoch is rolled back and
    every collection reads as before it.

    ``stats_epochs`` bounds how many recent epochs :meth:`stats` keeps (one row per operator
    run), so a long-running slider does not grow memory without end; ``None`` keeps all.
    ``max_rows_per_epoch`` caps the rows one operator may produce in one epoch (a runaway
    join raises :class:`~ddlab.engine.budget.BudgetExceeded` and rolls back instead of
    exhausting memory); ``None`` lifts it.  A ``KeyboardInterrupt`` (Jupyter's stop button)
    at any point of an epoch rolls it back like any error.

    ``workers=N`` runs the flow on N processes (worker 0 is this one), each holding the
    records of a shard of the keys of every arrangement, reduce and join; records move to the
    worker owning their key, and the workers agree on progress by announcing count changes
    (:mod:`~ddlab.engine.workers`).  The workers start at the first step, so the whole
    program is built before it; ``DDLAB_WORKERS`` sets the default for a process.
    """

    def __init__(self, name: str = "dataflow", max_iterations: int = DEFAULT_MAX_ITERATIONS,
                 stats_epochs: int | None = 1_000,
                 max_rows_per_epoch: int | None = DEFAULT_MAX_ROWS_PER_EPOCH,
                 retain_inputs: bool = True, workers: int | None = None):
        self.name = name
        #: data-parallel workers (processes; worker 0 is this one): ``workers=`` or
        #: ``DDLAB_WORKERS``, default 1 (see :mod:`~ddlab.engine.workers`)
        self.workers = resolve_workers(workers)
        self._team = None
        #: called after every operator run when set (by the workers: see workers/team.py)
        self.run_hook = None
        self.max_iterations = max_iterations
        #: rows one operator may produce per epoch before BudgetExceeded (budget.py)
        self.max_rows_per_epoch = max_rows_per_epoch
        self._step_serial = 0  # step attempts so far (see step_serial)
        self._stepping = False
        #: keep each input's accumulated contents (what save() writes); costs one trace each
        self.retain_inputs = retain_inputs
        #: the checkpoint's metadata after Dataflow.load; what build() returned
        self.metadata: dict = {}
        self.built = None
        self.interner = Interner()
        self.epoch = 0
        #: epochs closed by :meth:`advance` and not yet run (the next step runs them with
        #: the open one)
        self.in_flight = 0
        self._ops: list = []
        #: the operators that keep state, and ``(id, traces)`` of those holding traces: listed
        #: by :meth:`_place` for every step to read
        self._stateful: list = []
        self._traced: list = []
        self._inputs: dict[str, InputCollection] = {}
        self._views: list = []
        self._subscribers: list = []
        self.statistics = Statistics(self, stats_epochs)
        self.work = Work()
        self._graph_changed = True
        self.root = Scope(self, None, "root")

    # -- building (the hooks operators and collections call) -----------------------------
    def register_operator(self, op) -> int:
        """Add ``op`` to this flow (called by every operator's constructor); returns its id."""
        self.check_can_build(f"operator {op.name!r}")
        self._ops.append(op)
        self._graph_changed = True
        return len(self._ops) - 1

    def check_can_build(self, what: str) -> None:
        """Refuse to add ``what`` once the workers run: each holds a replica of the program
        as it was at the first step."""
        if self._team is not None:
            raise DataflowError(
                f"{self.name!r} runs on {self.workers} workers, which started at its first "
                f"step with a copy of the program; {what} cannot be added now. Build the whole "
                f"program before the first step (or a new Dataflow for the new part).")

    def mark_graph_changed(self) -> None:
        """An edge or a scope was added: the next step re-sorts the operators."""
        self._graph_changed = True

    def add_view(self, sink) -> None:
        """Register a view's sink: it takes each epoch's changes when the epoch commits."""
        self._views.append(sink)

    def add_subscriber(self, sink) -> None:
        """Register a subscriber's sink: it is handed each committed epoch's updates."""
        self._subscribers.append(sink)

    @property
    def step_serial(self) -> int:
        """How many step attempts have started (rolled-back ones included): the running
        attempt's number, which restarts every operator's row budget (``budget.py``)."""
        return self._step_serial

    def input(self, name: str, columns: list[str] | None = None, *,
              distinct: bool = False) -> InputCollection:
        """A new input collection; ``columns`` names (and fixes the number of) its fields.

        ``distinct=True`` makes it a set: a step that would give a record a multiplicity
        other than 0 or 1 is refused (:class:`InputError` naming the record; the epoch rolls
        back).  Consumers that need a set (``ddlab.rules``) then skip their own ``distinct``
        of it; a simple graph's window feed is a set.

        >>> flow = Dataflow()
        >>> edges = flow.input("edges", columns=["src", "dst"])
        >>> edges.columns, list(flow.inputs)
        (['src', 'dst'], ['edges'])
        """
        if name in self._inputs:
            raise DataflowError(f"input {name!r} already exists in {self.name!r}")
        inp = InputCollection(Input(self.root, name, distinct=distinct), columns)
        self._inputs[name] = inp
        return inp

    @property
    def inputs(self) -> dict:
        return dict(self._inputs)

    def loop(self, name: str = "loop", max_iterations: int | None = None,
             prioritized: bool = False, *, within=None) -> Loop:
        """A loop scope for mutual recursion: see :class:`~ddlab.engine.loops.Loop`;
        ``within``: a collection (or loop) whose scope the loop nests in (default: the top).

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> loop = flow.loop("reach"); x = loop.variable(xs)
        >>> loop.scope.path, x.scope.path, flow.loop("inner", within=x).scope.path
        ('root/reach', 'root/reach', 'root/reach/inner')
        """
        scope = self.root if within is None else within.scope
        if scope.flow is not self:
            raise DataflowError(f"{within!r} belongs to another Dataflow")
        return Loop(self, scope, name, max_iterations, prioritized)

    def iterate(self, seeds, body, max_iterations: int | None = None, name: str = "iterate"):
        """Mutual recursion: ``body(*variables)`` returns one result per seed; returns the
        fixed points (outside the loop) in the same order.

        >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"])
        >>> seeds = flow.input("seeds")
        >>> hop = lambda xs: xs.map(lambda x: (x, 0)).join(edges, select=(2,))
        >>> body = lambda e, o: (e.concat(hop(o)).distinct(), o.concat(hop(e)).distinct())
        >>> even, odd = flow.iterate([seeds, seeds.filter(lambda x: False)], body)
        >>> ev, od = even.view(), odd.view()
        >>> edges.insert([(1, 2), (2, 3)]); seeds.insert([1]); _ = flow.step()
        >>> sorted(ev.to_dict()), sorted(od.to_dict())
        ([1, 3], [2])
        """
        seeds = list(seeds)
        scope = max((s.scope for s in seeds), key=lambda s: s.depth)
        loop = Loop(self, scope, name, max_iterations)
        variables = [loop.variable(s) for s in seeds]
        results = body(*variables)
        if isinstance(results, Collection):
            results = [results]
        if len(results) != len(variables):
            raise DataflowError(f"iterate body returned {len(results)} collections for "
                                f"{len(variables)} variables")
        outs = []
        for var, res in zip(variables, results):
            res = var.set(res)
            outs.append(loop.leave(res))
        return tuple(outs)

    # -- running -----------------------------------------------------------------------
    def advance(self) -> int:
        """Close the open epoch without running it, and return the number of the epoch that
        opens.  The next :meth:`step` runs every closed epoch and the open one together:
        *epochs in flight* (the Naiad papers' pipelined epochs, timely's ``advance_to``
        without a step between).  Each epoch keeps its own time ``(epoch,)``, so the results
        are those of stepping them one by one (views, traces, one subscriber call per epoch,
        one :meth:`epoch_log` row each); what changes is the work: an operator finds the
        epochs' times complete together and takes them in one run (a reduce reads a key's
        history once for all of them).  The step is one unit: if it fails, every epoch in
        it is rolled back, and its row budget (``max_rows_per_epoch``) counts all of them.

        >>> flow = Dataflow(); xs = flow.input("xs"); n = xs.count(); v = n.view()
        >>> xs.insert([1]); flow.advance()
        1
        >>> xs.insert([1]); report = flow.step()
        >>> report.epoch, flow.epoch, v.to_dict(), list(flow.epoch_log()["input_updates"])
        (1, 2, {(1, 2): 1}, [1, 1])
        """
        if self._stepping:
            raise StepInProgress(
                f"{self.name!r}: advance() was called while epoch {self.epoch} is running "
                f"(from a callback?). Nothing was changed; advance after the step returns.")
        if self.workers > 1:
            raise DataflowError(
                f"{self.name!r} runs on {self.workers} workers, and epochs in flight "
                f"(advance) run on one: step() each epoch instead. Nothing was changed.")
        for inp in self._inputs.values():
            inp.op.closed.append(inp.op.pending)
            inp.op.pending = []
        self.in_flight += 1
        return self.epoch + self.in_flight

    def step(self) -> StepReport:
        """Close the open epoch and run it (with any epochs closed by :meth:`advance`) to
        quiescence; the report of the last epoch it ran.

        Refused (:class:`StepInProgress`) while a step of this flow runs, e.g. from a widget
        or subscriber callback: a nested epoch would interleave with the running one.

        >>> flow = Dataflow(); xs = flow.input("xs"); v = xs.view()
        >>> xs.insert([1, 2]); report = flow.step()
        >>> report.epoch, report.input_updates, flow.epoch, v.to_dict()
        (0, 2, 1, {1: 1, 2: 1})
        """
        if self._stepping:
            raise StepInProgress(
                f"{self.name!r}: step() was called while epoch {self.epoch} is still running "
                f"(from a callback: a widget, a subscriber or a user function?). Nothing was "
                f"changed; stage the updates and step after the running step returns.")
        self._stepping = True
        self._step_serial += 1  # restarts every operator's row budget (budget.py)
        try:
            return self._step()
        finally:
            self._stepping = False

    def _place(self) -> None:
        """After a change of the graph: the operators' topological order, fusion and places
        in the trackers (the counts restart: nothing is held between steps but the inputs'
        capabilities, taken again by the next step)."""
        if self._graph_changed:
            self.root.toposort()
            wire(self)
            for inp in self._inputs.values():
                inp.op.capability = None
            # what every step reads of the operators, listed once per graph: those that keep
            # state to snapshot for a rollback, and the traces whose sizes it files
            self._stateful = [op for op in self._ops if _keeps_state(op)]
            self._traced = [(op.id, op.traces()) for op in self._ops if op.traces()]
            self._graph_changed = False

    def _step(self) -> StepReport:
        self._place()
        epoch = self.epoch
        epochs = list(range(epoch, epoch + self.in_flight + 1))
        team, held = self._team, None
        if team is None and self.workers > 1:
            held = hold_interrupts()  # (a Ctrl-C meanwhile is raised where the epoch rolls back)
            try:
                team = self._team = WorkerTeam(self, self.workers, epoch)
            except BaseException:
                release_interrupts(held)
                raise
        elif team is not None:
            team.check_alive()
        try:
            snapshots = ([(op, op.snapshot()) for op in self._stateful],
                         [op.carried for op in self._ops])
            stats = self.statistics
            stats.discard()
            given = {name: i.op.epoch_batches() for name, i in self._inputs.items()}
            n_inputs, changes = [], []
            for k in range(len(epochs)):
                batches = {name: b[k] for name, b in given.items() if b[k]}
                n_inputs.append(sum([len(b) for bs in batches.values() for b in bs]))
                changes.append({name: list(bs) for name, bs in batches.items()})
            start = perf_counter()
            guard = DeferredInterrupts()  # Ctrl-C waits while the epoch commits or rolls back
        except BaseException:
            release_interrupts(held)  # (held only while the workers started)
            raise
        try:
            release_interrupts(held)
            for inp in self._inputs.values():
                inp.op.hold_epoch(epoch)  # (again after a re-sort, which restarts the counts)
            for k, e in enumerate(epochs):
                for name, inp in self._inputs.items():
                    inp.op.pending = given[name][k]
                    inp.op.flush(e)  # its updates at (e,); its capability moves past it
            for inp in self._inputs.values():
                inp.op.closed = []
            if team is None:
                self.root.run()
                _check_quiescent(self.root, epochs[-1])  # (several workers: team.run checks)
            else:
                team.run(epoch)
            guard.start()
            # the frontier has passed every (e,): the views take each epoch's output
            for e in epochs:
                for view in self._views:
                    view.commit(e)
            seconds = perf_counter() - start
            retained = self._retained_sizes()
            if team is not None:
                others, kept = team.gather_commit(epoch)
                stats.add_workers(others)
                for i, n in kept.items():
                    retained[i] = retained.get(i, 0) + n
            retained = {i: n for i, n in retained.items() if n}
            processed = 0
            for k, (e, (runs, share)) in enumerate(zip(epochs, _by_epoch(stats, epochs, seconds))):
                stats.running = runs
                n = sum([r[2] for r in runs])
                processed += n
                report = StepReport(e, share, n_inputs[k], len(runs), n, sum(retained.values()))
                stats.commit(e, report, retained=retained, inputs=changes[k])
        except BaseException as err:
            guard.start()
            try:
                self._roll_back(epochs, snapshots, err, sum(n_inputs))
            finally:
                guard.stop()  # an interrupt noted during the rollback: we are stopping anyway
            raise
        self.epoch = epochs[-1] + 1
        self.in_flight = 0
        if processed >= tuning.RELEASE_AFTER_ROWS:
            release_free_memory()  # what the epoch's temporaries left resident (memory.py)
        # the epochs have committed: every subscriber is served, a failing one raises after;
        # the guard is released whatever happens there
        deliver_to_subscribers(self._subscribers, epochs, report, guard)
        return report

    def _retained_sizes(self) -> dict:
        """``{operator id: updates its traces hold}`` of the operators holding traces."""
        return {i: sum(map(len, traces)) for i, traces in self._traced}

    def _roll_back(self, epochs: list, snapshots, err: BaseException, n_inputs: int) -> None:
        """Every operator back to its snapshot, every pointstamp forgotten, the epochs' input
        updates handed back on ``err`` (its ``discarded_updates``)."""
        self.root.clear()
        states, carried = snapshots
        for op, was in zip(self._ops, carried):
            op.clear_queues()
            op.carried = was
        for op, state in states:
            op.restore(state)
        for e in epochs:
            self.statistics.discard_epoch(e)
        lost = {}
        for name, inp in self._inputs.items():
            lost[name] = inp.pending_updates()
            inp.op.pending = []
            inp.op.closed = []
            inp.op.capability = None  # taken again at the next step
        self.in_flight = 0
        err.discarded_updates = lost
        if self._team is not None:  # every worker back, its capabilities agreed again
            try:
                self._team.abort(epochs[0])
            except BaseException as failed:  # (the updates are handed back on it too)
                failed.discarded_updates = lost
                raise
        if hasattr(err, "add_note"):
            which = f"epoch {epochs[0]} was rolled back; every collection reads as before it" \
                if len(epochs) == 1 else (f"epochs {epochs[0]}-{epochs[-1]} (in flight "
                                          f"together) were rolled back; every collection reads "
                                          f"as before them")
            err.add_note(f"ddlab: {which}. "
                         f"Its {n_inputs} input updates were not applied (they are in this "
                         f"exception's .discarded_updates).")

    def close(self) -> None:
        """Stop this flow's worker processes (with ``workers`` > 1; with one, nothing to do).
        Its views stay readable; a later :meth:`step` is refused.  A flow that is garbage
        collected, or a process that exits, stops them too; ``close`` does it now.

        >>> flow = Dataflow(workers=1); flow.close()
        """
        if self._team is not None:
            self._team.stop("the flow was closed (Dataflow.close)")

    def __enter__(self) -> "Dataflow":
        """``with Dataflow(workers=2) as flow:`` -- the workers stop when the block ends."""
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- introspection -----------------------------------------------------------------
    @property
    def stats_epochs(self) -> int | None:
        """How many recent epochs :meth:`stats` keeps (``None``: all)."""
        return self.statistics.keep_epochs

    def record_run(self, op, t, n_in, n_out, seconds) -> None:
        """Log one operator run at time ``t`` (updates in and out, seconds): the row behind
        :meth:`stats`, the graph's edge counts and the widgets' plots."""
        stats = self.statistics
        stats.running.append((op, t, n_in, n_out, seconds))
        if stats.starts is not None:
            stats.starts.append(perf_counter() - seconds)
        self.work.activations += 1

    def history_trace(self, op):
        """The trace of ``op``'s output as explanations read it (``None``: it keeps none):
        with several workers, every worker's shard of it, read between steps
        (:mod:`~ddlab.engine.workers.shards`)."""
        trace = op.history_trace()
        if trace is None or self._team is None:
            return trace
        if self._stepping:
            raise DataflowError(f"{self.name!r} runs on {self.workers} workers, busy with a "
                                f"step: explain a record between steps")
        return self._team.whole_trace(op, trace)

    def work_done(self) -> dict:
        """Machine-independent counters of the work done since the flow was built (see
        :mod:`~ddlab.engine.work`): operator runs, (operator, time) activations, history rows
        read, join pairs, trace inserts, and the process's compiled kernel calls.

        >>> flow = Dataflow(); xs = flow.input("xs"); _ = xs.distinct().view()
        >>> xs.insert([1, 2]); _ = flow.step(); w = flow.work_done()
        >>> w["activations"] >= w["runs"] > 0
        True
        """
        out = self.work.as_dict()
        if self._team is not None:  # the other workers' counters, as of their last epoch
            for work in self._team.child_work.values():
                for name, n in work.items():
                    out[name] += n
        return out

    def stats(self, epoch: int | None = None) -> pd.DataFrame:
        """Per operator and time: updates in, updates out, seconds (the live plots' data),
        for the last ``stats_epochs`` epochs (or one ``epoch``).

        >>> flow = Dataflow(); nums = flow.input("nums"); _ = nums.count().view()
        >>> nums.insert([1, 1, 2]); _ = flow.step()
        >>> print(flow.stats()[["operator", "in", "out"]].to_string(index=False))
               operator  in  out
                 nums#0   3    2
              arrange#1   2    2
                count#2   2    2
        view of count#3   2    0
        """
        return self.statistics.frame(None if epoch is None else [epoch])

    def epoch_log(self, last: int | None = None) -> pd.DataFrame:
        """One row per kept epoch (the ``last`` ones): engine seconds, input updates, operator
        runs, updates processed, updates retained after it (see :class:`StepReport`).

        >>> flow = Dataflow(); xs = flow.input("xs"); _ = xs.distinct().view()
        >>> xs.insert([1, 1]); _ = flow.step(); xs.insert([2]); _ = flow.step()
        >>> flow.epoch_log()[["epoch", "input_updates"]].to_dict("list")
        {'epoch': [0, 1], 'input_updates': [2, 1]}
        """
        return self.statistics.epoch_log(last)

    def lattice(self, loop: str, epochs=None, *, by_operator: bool = False,
                by_worker: bool = False) -> pd.DataFrame:
        """Updates emitted inside ``loop`` (a scope path such as ``"root/scc"``, see
        :meth:`graph`) per epoch and iteration: the lattice trace (Naiad report, Figures
        14-15); columns ``epoch, iteration[, operator][, worker], updates``.

        >>> from ddlab.algorithms import connected_components
        >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"])
        >>> _ = connected_components(edges).view()
        >>> edges.insert([(1, 2), (2, 3)]); _ = flow.step()
        >>> edges.insert([(3, 4)]); _ = flow.step()
        >>> cells = flow.lattice("root/cc")
        >>> list(cells.columns), cells.groupby("epoch")["iteration"].max().to_dict()
        (['epoch', 'iteration', 'updates'], {0: 2, 1: 3})
        """
        return self.statistics.lattice(loop, epochs, by_operator=by_operator, by_worker=by_worker)

    def busy_seconds(self, epoch: int | None = None) -> list[float]:
        """Seconds each worker spent running operators in ``epoch`` (default: the last
        completed one); the rest of the step it waited for the others or for messages.

        >>> flow = Dataflow(); xs = flow.input("xs"); _ = xs.distinct().view()
        >>> xs.insert([1, 2]); _ = flow.step(); len(flow.busy_seconds())
        1
        """
        return self.statistics.busy_seconds(self.epoch - 1 if epoch is None else epoch, self.workers)

    def loop_differences(self, epoch: int, loop: str, with_empty: bool = True) -> pd.DataFrame:
        """Records in difference per iteration of ``loop`` in ``epoch`` (what its feedback
        carried): the per-iteration curve of the CIDR paper's Figure 1.  Every iteration up to
        the last busy one is listed, the empty ones with 0 (the paper's "completely empty"
        iterations of a differential update), with the loop's own coordinate in a ``time``
        column; ``with_empty=False`` lists only the busy ones, by position.

        >>> from ddlab.algorithms import connected_components
        >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"])
        >>> _ = connected_components(edges).view()
        >>> edges.insert([(1, 2), (2, 3), (3, 4)]); _ = flow.step()
        >>> flow.loop_differences(0, "root/cc")["records"].tolist()
        [4, 4, 2]
        >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"])
        >>> _ = connected_components(edges, prioritized=False).view()
        >>> edges.insert([(1, 4), (2, 4), (3, 2)]); _ = flow.step()
        >>> edges.remove([(3, 2)]); _ = flow.step()          # iteration 1 has nothing to do
        >>> flow.loop_differences(1, "root/cc")[["time", "records"]].values.tolist()
        [[0, 1], [1, 0], [2, 2]]
        >>> flow.loop_differences(1, "root/cc", with_empty=False)["records"].tolist()
        [1, 2]
        """
        return self.statistics.loop_differences(epoch, loop, with_empty)

    def input_changes(self, epoch: int | None = None) -> dict[str, pd.DataFrame]:
        """The updates each input received in ``epoch`` (default: the last completed), one
        frame per input with its fields and ``diff`` (consolidated), for the last two
        epochs only (what explanations of a move need: its causes and the move before).

        >>> flow = Dataflow(); xs = flow.input("xs", columns=["x"])
        >>> xs.insert([1, 2]); _ = flow.step(); xs.remove([1]); _ = flow.step()
        >>> print(flow.input_changes()["xs"].to_string(index=False))
         x  diff
         1    -1
        """
        if epoch is None:
            epoch = self.epoch - 1
        out = {}
        for name, batches in self.statistics.inputs(epoch).items():
            batch = concat_batches(batches, name).consolidate()
            cols = self._inputs[name].columns
            names = list(cols) if cols and len(cols) == batch.arity else [
                f"c{j}" for j in range(batch.arity)]
            data = {n: decode_column(c, k, self.interner)
                    for n, c, k in zip(names, batch.cols, batch.kinds)}
            data["diff"] = batch.diffs
            out[name] = pd.DataFrame(data)
        return out

    def retained_by_operator(self, epoch: int | None = None) -> dict[int, int]:
        """Updates held in each operator's traces (by operator id, operators holding none
        left out) after ``epoch`` (default: the last completed), for the kept epochs; their
        sum is that epoch's ``retained_updates`` in :meth:`epoch_log`.

        >>> flow = Dataflow(); xs = flow.input("xs"); _ = xs.distinct().view()
        >>> xs.insert([1, 2]); _ = flow.step()
        >>> sum(flow.retained_by_operator().values()) == int(flow.epoch_log()["retained_updates"][0])
        True
        """
        return dict(self.statistics.retained(self.epoch - 1 if epoch is None else epoch))

    def loops(self) -> list[str]:
        """Scope paths of every loop, outermost first (``"root/scc"``, ``"root/scc/reach"``).

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> _ = xs.iterate(lambda x: x.iterate(lambda y: y.distinct(), name="inner"), name="outer")
        >>> flow.loops()
        ['root/outer', 'root/outer/inner']
        """
        out, todo = [], list(self.root.children)
        while todo:
            scope = todo.pop(0)
            out.append(scope.path)
            todo.extend(scope.children)
        return out

    def upstream(self, collection) -> set[int]:
        """Ids of the operators ``collection`` depends on (itself included), loops too.

        >>> flow = Dataflow(); a = flow.input("a"); b = flow.input("b")
        >>> total = a.map(lambda x: x + 1).concat(b); _ = b.distinct()
        >>> ops, _ = flow.graph()
        >>> sorted(ops[ops["id"].isin(flow.upstream(total))]["label"])
        ['a#0', 'b#1', 'concat#3', 'map#2']
        """
        seen, todo = set(), [collection.op if hasattr(collection, "op") else collection]
        while todo:
            op = todo.pop()
            if op.id in seen:
                continue
            seen.add(op.id)
            todo.extend(op.inputs)
        return seen

    def retained_updates(self, by_operator: bool = False):
        """Updates held in all traces (arrangements, reduce outputs, views); with
        ``by_operator=True`` a frame of where they are held: one row per operator that keeps
        a trace (``operator, kind, scope, updates``), e.g. to compare what a loop keeps for
        its labels over all iterations with the number of labels (CIDR 2013, Section 2).

        >>> flow = Dataflow(); xs = flow.input("xs"); _ = xs.distinct().view()
        >>> xs.insert([1, 2, 2]); _ = flow.step()
        >>> flow.retained_updates() > 0
        True
        >>> print(flow.retained_updates(by_operator=True).to_string(index=False))
                  operator    kind scope  updates
                      xs#0   input  root        2
                 arrange#1 arrange  root        2
                distinct#2  reduce  root        2
        view of distinct#3    view  root        2
        """
        if self._team is not None:  # every worker's, as of the last epoch
            kept = self.statistics.retained(self.epoch - 1)
            held = {op.id: kept.get(op.id, 0) for op in self._ops}
        else:
            held = {op.id: sum(len(tr) for tr in op.traces()) for op in self._ops}
        if not by_operator:
            return sum(held.values())
        rows = [(op.label, op.kind, op.scope.path, held[op.id])
                for op in self._ops if op.traces()]
        return pd.DataFrame(rows, columns=["operator", "kind", "scope", "updates"])

    def compact(self) -> None:
        """Merge every trace into one batch compacted to the current frontier.

        >>> flow = Dataflow(); xs = flow.input("xs"); v = xs.distinct().view()
        >>> xs.insert([1, 2]); _ = flow.step(); xs.remove([1]); _ = flow.step()
        >>> before = flow.retained_updates(); flow.compact()
        >>> flow.retained_updates() <= before, v.to_dict()
        (True, {2: 1})

        Then the merges' freed temporaries go back to the system (:mod:`.memory`): the
        3.4M-edge CC after its load went 829 -> 883 MB without that, 829 -> 789 MB with it.
        """
        for op in self._ops:
            for tr in op.traces():
                tr.compact()
        release_free_memory()

    @property
    def operators(self) -> list:
        """Every operator, in the order they were built (ids are positions).

        >>> flow = Dataflow(); xs = flow.input("xs"); _ = xs.map(lambda x: x).view()
        >>> [op.label for op in flow.operators]
        ['xs#0', 'map#1', 'view of map#2']
        """
        return list(self._ops)

    def graph(self, epoch: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The dataflow graph: ``(operators, edges)`` frames.

        ``operators``: id, label, kind, scope (path), depth, scope_kind (``epoch`` at the
        top, ``iteration`` in a loop, ``priority`` in a prioritized loop).  ``edges``: source and target
        operator ids and how many updates the source emitted along it in ``epoch`` (default:
        the last completed epoch) - the Naiad report's Figure 9, from live statistics.

        >>> flow = Dataflow(); xs = flow.input("xs"); _ = xs.map(lambda x: -x).view()
        >>> xs.insert([1, 2]); _ = flow.step()
        >>> ops, edges = flow.graph()
        >>> print(ops[["id", "label", "kind"]].to_string(index=False))
         id         label  kind
          0          xs#0 input
          1         map#1   map
          2 view of map#2  view
        >>> print(edges.to_string(index=False))
         source  target  updates
              0       1        2
              1       2        2

        With several workers, edges have two more columns: ``exchange``, how the edge moves
        records between workers (``"by key"`` into an arrangement, ``"spread"`` out of an
        input, ``"gather"`` to worker 0 for a view; ``""``: it stays on its worker), and
        ``by_worker``, the updates each worker's replica of the source emitted along it.
        """
        if epoch is None:
            epoch = self.epoch - 1
        sent = self.statistics.sent(epoch)
        ops = pd.DataFrame([(op.id, op.label, op.kind, op.scope.path, op.scope.depth,
                             op.scope.kind) for op in self._ops],
                           columns=["id", "label", "kind", "scope", "depth", "scope_kind"])
        pairs = [(up, op, port) for op in self._ops for port, up in enumerate(op.inputs)]
        edges = pd.DataFrame([(up.id, op.id, sent.get(up.id, 0)) for up, op, _ in pairs],
                             columns=["source", "target", "updates"])
        if self.workers > 1:
            nothing = [0] * self.workers
            by_worker = self.statistics.sent_by_worker(epoch, self.workers)
            edges["exchange"] = [edge_kind(up, op, port) or "" for up, op, port in pairs]
            edges["by_worker"] = [by_worker.get(up.id, nothing) for up, _, _ in pairs]
        return ops, edges

    def progress(self) -> pd.DataFrame:
        """The progress tracker's view now: one row per operator the scheduler visits (an
        operator fused into its reader counts there; loops show as their operators), with
        ``worker`` (one worker: 0), ``id``, ``label``, ``scope``, ``holds`` (the positive
        occurrence counts of its pointstamps: ``{time: count}``, one per queued batch and per
        capability) and ``frontier`` (its input frontier: the minimal times at which input
        could still reach it; a time no element of it is ``<=`` is complete there).  Called
        from a callback during a step (``inspect``, a subscriber) it shows the counts of that
        moment; between steps only the inputs hold their open epoch (an input's own frontier is
        empty: nothing reaches it from upstream).

        >>> flow = Dataflow(); xs = flow.input("xs"); _ = xs.distinct().view()
        >>> xs.insert([1, 2]); _ = flow.step()
        >>> print(flow.progress()[["label", "holds", "frontier"]].to_string(index=False))
                     label     holds frontier
                      xs#0 {(1,): 1}       []
                distinct#2        {}   [(1,)]
        view of distinct#3        {}   [(1,)]
        """
        if not self._stepping:
            self._place()
        rows = [(0,) + row for row in view_rows(self)]
        if self._team is not None and not self._stepping:
            rows += self._team.progress()
        ops = self._ops
        return pd.DataFrame([(w, i, ops[i].label, ops[i].scope.path, holds, frontier)
                             for w, i, holds, frontier in rows],
                            columns=["worker", "id", "label", "scope", "holds", "frontier"])

    def __repr__(self) -> str:
        return (f"<Dataflow {self.name!r}: {len(self._inputs)} inputs, {len(self._ops)} "
                f"operators, {self.epoch} epochs done>")


def _by_epoch(stats, epochs: list, seconds: float) -> list:
    """The running step's run records split by epoch (the first coordinate of their times),
    each with its share of the step's ``seconds``: its runs' own seconds and an equal part of
    the rest (with one epoch, all of them)."""
    runs = stats.running
    if len(epochs) == 1:
        return [(runs, seconds)]
    split = {e: [] for e in epochs}
    for r in runs:
        split[r[1][0]].append(r)
    own = {e: sum(r[4] for r in rs) for e, rs in split.items()}
    rest = max(seconds - sum(own.values()), 0.0) / len(epochs)
    return [(split[e], own[e] + rest) for e in epochs]


def _check_quiescent(root: Scope, last: int) -> None:
    """Refuse to commit epochs up to ``last`` that the one worker's scheduler stopped short
    of: a pointstamp still held at or before ``last`` (a runtime bug) would otherwise hand
    the views an incomplete epoch silently."""
    tracker = root.tracker
    held = tracker.least()
    if held is None or held[0] > last:
        return
    where = sorted({f"{root.ops[i].label} at {u}" for i in tracker.active
                    for u in tracker.times(i) if u[0] <= last})
    raise DataflowError(
        f"ddlab: epoch {held[0]} stalled with work left and nothing able to run (held: "
        f"{', '.join(where[:5])}; a runtime bug: please report it with flow.progress()). "
        f"The epoch was rolled back.")


def _keeps_state(op) -> bool:
    """Whether ``op``'s class snapshots or restores anything (the base class does neither)."""
    cls = type(op)
    return cls.snapshot is not Operator.snapshot or cls.restore is not Operator.restore
