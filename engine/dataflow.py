"""The Dataflow: inputs, epochs, rollback, statistics."""
from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter

import pandas as pd

from .collection import Collection
from .columns import Interner
from .config import DEFAULT_MAX_ITERATIONS
from .errors import DataflowError
from .input import InputCollection
from .loops import Loop
from .operators.io import Input
from .scope import Scope


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
    """

    def __init__(self, name: str = "dataflow", max_iterations: int = DEFAULT_MAX_ITERATIONS,
                 stats_epochs: int | None = 10_000):
        self.name = name
        self.max_iterations = max_iterations
        self.stats_epochs = stats_epochs
        self._stats_starts: list[int] = []  # index in _stats where each kept epoch begins
        self.interner = Interner()
        self.epoch = 0
        self._ops: list = []
        self._inputs: dict[str, InputCollection] = {}
        self._views: list = []
        self._subscribers: list = []
        self._stats: list[tuple] = []
        self._graph_changed = True
        self.root = Scope(self, None, "root")

    # -- building ----------------------------------------------------------------------
    def register_operator(self, op) -> int:
        """Add ``op`` to this flow (called by every operator's constructor); returns its id."""
        self._ops.append(op)
        self._graph_changed = True
        return len(self._ops) - 1

    def input(self, name: str, columns: list[str] | None = None) -> InputCollection:
        """A new input collection; ``columns`` names (and fixes the number of) its fields."""
        if name in self._inputs:
            raise DataflowError(f"input {name!r} already exists in {self.name!r}")
        inp = InputCollection(Input(self.root, name), columns)
        self._inputs[name] = inp
        return inp

    @property
    def inputs(self) -> dict:
        return dict(self._inputs)

    def loop(self, name: str = "loop", max_iterations: int | None = None,
             prioritized: bool = False) -> Loop:
        """A loop scope for mutual recursion: see :class:`~ddlab.engine.collection.Loop`."""
        return Loop(self, self.root, name, max_iterations, prioritized)

    def iterate(self, seeds, body, max_iterations: int | None = None, name: str = "iterate"):
        """Mutual recursion: ``body(*variables)`` returns one result per seed; returns the
        fixed points (outside the loop) in the same order."""
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
    def step(self) -> StepReport:
        """Close the open epoch and run it to quiescence."""
        if self._graph_changed:
            self.root.toposort()
            self._graph_changed = False
        epoch = self.epoch
        snapshots = [(op, op.snapshot(), op.carried) for op in self._ops]
        self._trim_stats()
        n_stats = len(self._stats)
        n_inputs = sum(sum(len(b) for b in i.op.pending) for i in self._inputs.values())
        start = perf_counter()
        try:
            for inp in self._inputs.values():
                inp.op.flush(epoch)
            self.root.run(())
            for view in self._views:
                view.commit(epoch)
        except BaseException as err:
            for op, state, carried in snapshots:
                op.restore(state)
                op.carried = carried
                op.clear_queues()
            self.root.clear()
            del self._stats[n_stats:]
            lost = {}
            for name, inp in self._inputs.items():
                lost[name] = inp._decode_pending()
                inp.op.pending = []
            err.discarded_updates = lost
            if hasattr(err, "add_note"):
                err.add_note(f"ddlab: epoch {epoch} was rolled back; every collection reads as "
                             f"before it. Its {n_inputs} input updates were not applied (they "
                             f"are in this exception's .discarded_updates).")
            raise
        seconds = perf_counter() - start
        self._stats_starts.append(n_stats)
        self.epoch = epoch + 1
        runs = self._stats[n_stats:]
        for sub in self._subscribers:
            sub.deliver(epoch)
        return StepReport(epoch, seconds, n_inputs, len(runs), sum(r[2] for r in runs),
                          self.retained_updates())

    # -- introspection -----------------------------------------------------------------
    def _trim_stats(self) -> None:
        """Drop the statistics of epochs older than the last ``stats_epochs``."""
        limit = self.stats_epochs
        if limit is None or len(self._stats_starts) < 2 * limit:
            return  # trim in chunks, so the cost per step stays constant on average
        cut = self._stats_starts[-limit]
        del self._stats[:cut]
        self._stats_starts = [i - cut for i in self._stats_starts[-limit:]]

    def record_run(self, op, t, n_in, n_out, seconds) -> None:
        """Log one operator run at time ``t`` (updates in and out, seconds): the row behind
        :meth:`stats`, the graph's edge counts and the widgets' plots."""
        self._stats.append((op.id, t, n_in, n_out, seconds))

    def stats(self, epoch: int | None = None) -> pd.DataFrame:
        """Per operator and time: updates in, updates out, seconds (the live plots' data),
        for the last ``stats_epochs`` epochs (or one ``epoch``)."""
        rows = self._stats if epoch is None else [r for r in self._stats if r[1][0] == epoch]
        ops = self._ops
        records = []
        for op_id, t, n_in, n_out, secs in rows:
            op = ops[op_id]
            shown = op.scope.describe_time(t)
            iteration = None
            if len(t) > 1:
                inner = shown[-1]
                iteration = inner[1] if isinstance(inner, tuple) else inner
            records.append((op.label, op.kind, op.scope.path, shown, t[0], iteration,
                            n_in, n_out, secs))
        return pd.DataFrame(records, columns=["operator", "kind", "scope", "time", "epoch",
                                              "iteration", "in", "out", "seconds"])

    def retained_updates(self) -> int:
        """Updates held in all traces (arrangements, reduce outputs, views)."""
        return sum(len(tr) for op in self._ops for tr in op.traces())

    def compact(self) -> None:
        """Merge every trace into one batch compacted to the current frontier."""
        for op in self._ops:
            for tr in op.traces():
                tr.compact()

    @property
    def operators(self) -> list:
        return list(self._ops)

    def graph(self, epoch: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The dataflow graph: ``(operators, edges)`` frames.

        ``operators``: id, label, kind, scope (path), depth, scope_kind (``epoch`` at the
        top, ``iteration`` in a loop, ``priority`` in a prioritized loop).  ``edges``: source and target
        operator ids and how many updates the source emitted along it in ``epoch`` (default:
        the last completed epoch) - the Naiad report's Figure 9, from live statistics.
        """
        if epoch is None:
            epoch = self.epoch - 1
        sent: dict[int, int] = {}
        for op_id, t, _, n_out, _ in self._stats:
            if t[0] == epoch:
                sent[op_id] = sent.get(op_id, 0) + n_out
        ops = pd.DataFrame([(op.id, op.label, op.kind, op.scope.path, op.scope.depth,
                             op.scope.kind) for op in self._ops],
                           columns=["id", "label", "kind", "scope", "depth", "scope_kind"])
        edges = pd.DataFrame([(up.id, op.id, sent.get(up.id, 0))
                              for op in self._ops for up in op.inputs],
                             columns=["source", "target", "updates"])
        return ops, edges

    def __repr__(self) -> str:
        return (f"<Dataflow {self.name!r}: {len(self._inputs)} inputs, {len(self._ops)} "
                f"operators, {self.epoch} epochs done>")
