"""The engine's always-on instrumentation: one record per operator run, kept per epoch.

Why a module of its own: these records are the data behind ``flow.stats()``, the graph's
per-edge counts, ``%dd stats``/``%dd trace`` and every live plot of the widgets (records in
difference per iteration, the epoch x iteration lattice, latency and retained state per epoch).
They are kept per epoch so that a query about one epoch costs what that epoch logged, not
a scan of the whole history, and bounded (``keep_epochs``) so a long slider session does not
grow memory.  A rolled-back epoch leaves no record.
"""
from __future__ import annotations

from collections import OrderedDict

import pandas as pd

from .lattice import display_time, iteration_of

#: Columns of :meth:`Statistics.frame` (``Dataflow.stats()``).
STATS_COLUMNS = ["operator", "kind", "scope", "time", "epoch", "iteration", "in", "out",
                 "seconds"]
#: How many committed epochs' input batches are kept (``Dataflow.input_changes``): the last
#: move and the one before, what explanations of a move compare.
INPUT_EPOCHS = 2
#: Columns of :meth:`Statistics.epoch_log` (``Dataflow.epoch_log()``).
EPOCH_COLUMNS = ["epoch", "seconds", "input_updates", "operator_runs", "updates_processed",
                 "retained_updates"]


class Statistics:
    """Per-epoch operator-run records ``(op, time, in, out, seconds)`` and step reports.

    The running epoch's records accumulate in :attr:`running` (``Dataflow.record_run``
    appends to it directly: it runs once per operator run, the hot path); :meth:`commit` files them under
    the epoch (with its step report), :meth:`discard` drops them (rollback).
    """

    def __init__(self, flow, keep_epochs: int | None = 1_000):
        self.flow = flow
        self.keep_epochs = keep_epochs
        self.running: list[tuple] = []
        #: with several workers: the worker of each record of :attr:`running` (``None``:
        #: one worker, every record worker 0's)
        self.running_workers: list[int] | None = None
        self._workers: dict[int, list[int]] = {}
        #: with several workers: when each record of :attr:`running` started
        #: (``perf_counter``, the machine's monotonic clock, the same in every worker's
        #: process), so a run that waited for another worker shows where it waited;
        #: ``None``: one worker, not kept
        self.starts: list[float] | None = None
        self._starts: dict[int, list[float]] = {}
        self._epochs: OrderedDict[int, list[tuple]] = OrderedDict()
        self._reports: OrderedDict[int, object] = OrderedDict()
        self._retained: OrderedDict[int, dict] = OrderedDict()
        #: the input batches of the last :data:`INPUT_EPOCHS` committed epochs
        self._inputs: OrderedDict[int, dict] = OrderedDict()

    # -- recording ---------------------------------------------------------------------
    def commit(self, epoch: int, report, retained: dict | None = None,
               inputs: dict | None = None) -> None:
        """File the running records under ``epoch`` (with the updates each operator retains
        after it and the input batches it applied); forget the oldest beyond
        ``keep_epochs`` (input batches beyond :data:`INPUT_EPOCHS`)."""
        self._epochs[epoch] = self.running
        if self.running_workers is not None:
            self._workers[epoch] = self.running_workers
            self.running_workers = None
        if self.starts is not None:
            self._starts[epoch] = self.starts
            self.starts = []
        self._reports[epoch] = report
        self._retained[epoch] = retained or {}
        self._inputs[epoch] = inputs or {}
        self.running = []
        while len(self._inputs) > INPUT_EPOCHS:
            self._inputs.popitem(last=False)
        if self.keep_epochs is not None:
            while len(self._epochs) > self.keep_epochs:
                old, _ = self._epochs.popitem(last=False)
                self._workers.pop(old, None)
                self._starts.pop(old, None)
                self._reports.popitem(last=False)
                self._retained.popitem(last=False)

    def add_workers(self, rows) -> None:
        """The other workers' records of the running epoch, ``(worker, op id, time, in, out,
        seconds, start)``, after this worker's own (worker 0)."""
        ops = self.flow.operators
        workers = [0] * len(self.running)
        for w, op_id, t, n_in, n_out, secs, start in rows:
            self.running.append((ops[op_id], t, n_in, n_out, secs))
            self.starts.append(start)
            workers.append(w)
        self.running_workers = workers

    def discard(self) -> None:
        """Forget the running epoch's records (it was rolled back)."""
        self.running = []
        self.running_workers = None
        if self.starts is not None:
            self.starts = []

    def discard_epoch(self, epoch: int) -> None:
        """Forget everything recorded of ``epoch`` (rolled back, possibly after its records
        were filed)."""
        self.running = []
        self.running_workers = None
        if self.starts is not None:
            self.starts = []
        for store in (self._epochs, self._reports, self._retained, self._inputs, self._workers,
                      self._starts):
            store.pop(epoch, None)

    # -- queries -----------------------------------------------------------------------
    @property
    def epochs(self) -> list[int]:
        """The completed epochs whose records are kept, oldest first."""
        return list(self._epochs)

    def report(self, epoch: int):
        """The :class:`~ddlab.engine.dataflow.StepReport` of a kept epoch, or ``None``."""
        return self._reports.get(epoch)

    def retained(self, epoch: int) -> dict:
        """``{operator id: updates held in its traces}`` after a kept epoch (``{}`` if not
        kept)."""
        return self._retained.get(epoch, {})

    def inputs(self, epoch: int) -> dict:
        """``{input name: [batches]}`` applied in ``epoch`` (the last two epochs only)."""
        return self._inputs.get(epoch, {})

    def runs(self, epochs=None) -> list[tuple]:
        """Raw records ``(op, time, in, out, seconds)`` of the kept epochs (or the given ones)."""
        if epochs is None:
            return [r for rows in self._epochs.values() for r in rows]
        return [r for e in epochs for r in self._epochs.get(e, ())]

    def frame(self, epochs=None) -> pd.DataFrame:
        """One row per operator run: operator label, kind, scope path, time as users read it,
        epoch, innermost loop iteration (None outside loops), updates in and out, seconds."""
        records = []
        for op, t, n_in, n_out, secs in self.runs(epochs):
            scope = op.scope
            iteration = (iteration_of(t[-1], scope.coordinate_kinds[-1]) if len(t) > 1
                         else None)
            records.append((op.label, op.kind, scope.path, scope.describe_time(t), t[0],
                            iteration, n_in, n_out, secs))
        frame = pd.DataFrame(records, columns=STATS_COLUMNS)
        if getattr(self.flow, "workers", 1) > 1:  # which worker made each run, and when
            chosen = list(self._epochs) if epochs is None else list(epochs)
            frame["worker"] = self.workers_of(chosen)
            starts_ms = []   # from each epoch's first run
            for e in chosen:
                starts = self._starts.get(e) or [0.0] * len(self._epochs.get(e, ()))
                first = min(starts, default=0.0)
                starts_ms += [round((s - first) * 1000, 3) for s in starts]
            frame["start_ms"] = starts_ms
        return frame

    def sent(self, epoch: int) -> dict[int, int]:
        """Updates each operator (by id) emitted in ``epoch``: the graph's edge counts."""
        out: dict[int, int] = {}
        for op, _, _, n_out, _ in self._epochs.get(epoch, ()):
            out[op.id] = out.get(op.id, 0) + n_out
        return out

    def sent_by_worker(self, epoch: int, workers: int) -> dict[int, list[int]]:
        """:meth:`sent` per worker: ``{op id: [updates worker 0 emitted, worker 1, ...]}``."""
        runs = self._epochs.get(epoch, ())
        made_by = self.workers_of([epoch])
        out: dict[int, list[int]] = {}
        for (op, _, _, n_out, _), w in zip(runs, made_by):
            counts = out.get(op.id)
            if counts is None:
                counts = out[op.id] = [0] * workers
            counts[w] += n_out
        return out

    def epoch_log(self, last: int | None = None) -> pd.DataFrame:
        """One row per kept epoch: engine seconds, input updates, operator runs, updates
        processed and updates retained after it (so compaction shows as a falling line)."""
        reports = list(self._reports.values())
        if last is not None:
            reports = reports[-last:] if last > 0 else []
        return pd.DataFrame([(r.epoch, r.seconds, r.input_updates, r.operator_runs,
                              r.updates_processed, r.retained_updates) for r in reports],
                            columns=EPOCH_COLUMNS)

    def lattice(self, loop: str, epochs=None, *, by_operator: bool = False,
                by_worker: bool = False) -> pd.DataFrame:
        """Updates emitted inside the loop whose scope path is ``loop`` (and in loops nested
        in it) per ``(epoch, iteration)`` of that loop's own coordinate: the lattice trace of
        the Naiad report's Figures 14-15.  Columns ``epoch, iteration, updates`` (plus
        ``operator`` with ``by_operator``), sorted; a prioritized loop's iteration is the
        iteration part of its ``(priority, iteration)`` coordinate."""
        cells = self.lattice_cells(loop, epochs, by_operator=by_operator, by_worker=by_worker)
        columns = (["epoch", "iteration"] + (["operator"] if by_operator else [])
                   + (["worker"] if by_worker else []) + ["updates"])
        # sorted here, not with DataFrame.sort_values: the explorer asks for one epoch's few
        # cells on every move, where pandas' sort cost 1.6 ms (a fifth of the move's widgets)
        return pd.DataFrame([k + (v,) for k, v in sorted(cells.items())], columns=columns)

    def lattice_cells(self, loop: str, epochs=None, *, by_operator: bool = False,
                      by_worker: bool = False) -> dict:
        """:meth:`lattice` as a dict ``{(epoch, iteration[, operator][, worker]): updates}``
        (unsorted): what a live plot reads on every move without building a DataFrame;
        ``by_worker`` splits each cell by the worker that emitted its updates."""
        depth = loop.count("/")  # "root/cc" -> the loop's coordinate is time[1]
        prefix = loop + "/"
        cells: dict[tuple, int] = {}
        kind = None
        inside: dict = {}   # scope -> whether it is the loop or nested in it
        runs = self.runs(epochs)
        made_by = self.workers_of(epochs) if by_worker else ()
        for i, (op, t, _, n_out, _) in enumerate(runs):
            scope = op.scope
            hit = inside.get(scope)
            if hit is None:
                hit = inside[scope] = scope.path == loop or scope.path.startswith(prefix)
            if not hit:
                continue
            if kind is None:
                kind = op.scope.coordinate_kinds[depth]
            key = (t[0], iteration_of(t[depth], kind))
            if by_operator:
                key += (op.label,)
            if by_worker:
                key += (made_by[i],)
            cells[key] = cells.get(key, 0) + n_out
        return cells

    def workers_of(self, epochs=None) -> list[int]:
        """The worker of each record of :meth:`runs` (all 0 with one worker)."""
        chosen = list(self._epochs) if epochs is None else list(epochs)
        return [w for e in chosen for w in self._workers.get(e, [0] * len(self._epochs.get(e, ())))]

    def busy_seconds(self, epoch: int, workers: int) -> list[float]:
        """Seconds each worker spent running operators in ``epoch`` (the rest of the epoch's
        time it waited or exchanged messages)."""
        busy = [0.0] * workers
        for (_, _, _, _, secs), w in zip(self._epochs.get(epoch, ()), self.workers_of([epoch])):
            busy[w] += secs
        return busy

    def loop_differences(self, epoch: int, loop: str, with_empty: bool = True) -> pd.DataFrame:
        """Records in difference per iteration of ``loop`` in ``epoch``: what its feedback
        edges carried back (the loop variables' changes), in the loop's time order; the
        per-iteration curve of the CIDR paper's Figure 1.  Columns ``iteration`` (position in
        the loop's time order, from 0) and ``records``.  A nested loop's counts are summed
        over the outer loops' coordinates.

        By default (``with_empty``) every iteration from 0 to the last busy one is listed (per
        priority class of a prioritized loop), the empty ones with 0 records, with a ``time``
        column: the loop's own coordinate (an iteration number, or a ``(priority, iteration)``
        pair); for a plain loop ``iteration`` equals that coordinate.  ``with_empty=False``
        lists only the iterations whose feedback carried something, by position (an empty
        iteration between two busy ones then closes up and later ones shift)."""
        coords, per_time, kind = self._loop_times(epoch, loop, with_empty)
        if not with_empty:
            return pd.DataFrame({"iteration": range(len(coords)),
                                 "records": [per_time[c] for c in coords]})
        return pd.DataFrame({"iteration": range(len(coords)),
                             "time": [display_time((c,), (kind,))[0] for c in coords],
                             "records": [per_time.get(c, 0) for c in coords]})

    def loop_difference_records(self, epoch: int, loop: str) -> list[int]:
        """:meth:`loop_differences`' ``records`` column as a list (empty iterations
        included), without a DataFrame: the explorer's plot reads it on every move."""
        coords, per_time, _ = self._loop_times(epoch, loop, True)
        return [per_time.get(c, 0) for c in coords]

    def _loop_times(self, epoch: int, loop: str, with_empty: bool):
        """``(the loop coordinates listed, records per coordinate, the coordinate kind)``."""
        depth = loop.count("/")
        per_time: dict[int, int] = {}
        kind = None
        for op, t, _, n_out, _ in self._epochs.get(epoch, ()):
            if op.kind == "feedback" and op.scope.path == loop:
                per_time[t[depth]] = per_time.get(t[depth], 0) + n_out
                kind = op.scope.coordinate_kinds[depth]
        if not with_empty:
            return sorted(per_time), per_time, kind
        last: dict[int, int] = {}  # priority class (its packed iteration 0) -> last busy coordinate
        for c in per_time:
            start = c - iteration_of(c, kind)
            last[start] = max(last.get(start, c), c)
        coords = [c for start in sorted(last) for c in range(start, last[start] + 1)]
        return coords, per_time, kind
