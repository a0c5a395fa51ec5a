"""Reduce: every grouped operator (count, sum, min, max, distinct, top-k, union, intersect,
except, user reduce and cogroup) on one mechanism.

For the keys whose input changed at time ``t`` (or that were scheduled for ``t``), the output
at ``t`` is ``logic(input accumulated at t) - output accumulated at t``.  The output may also
need fresh values at later *interesting* times: the lubs of ``t`` with the times in the key's
input and output histories that are not ``<= t``.  Those ``(key, time)`` pairs are scheduled and
evaluated when the scope reaches them; evaluating one schedules further lubs, which closes the
set under lub (needed for three or more coordinates: doubly nested loops).  Forgetting this
makes results wrong only from the second epoch inside a loop on, which the tests cover.

The work is vectorised over all keys touched at one time: histories are gathered from the
traces with ``searchsorted``, filtered with ``times <= t``, consolidated by sort, and handed
to a *logic* that computes the new output for all those keys at once (see ``aggregates``).
Only user-supplied functions loop per key in Python.

A single change touches a few keys with short histories, for which those numpy calls (about
eighty of a microsecond or two each) cost more than the rows: then the same steps run in
Python on the traces' cached histories (:meth:`Reduce._process_small`), for the built-in
logics that have a ``small`` form and integer records.  Both paths are tested equal.
"""
from __future__ import annotations

import heapq
import operator

import numpy as np

from .. import kernels, tuning
from ..batch import Batch, consolidate, sort_order
from ..columns import INT, key_code
from ..lattice import leq, leq_rows, lub_rows
from ..trace import Trace
from ..trace.lookup import expand_ranges
from ..trace.rows import Rows
from .base import Operator


def unique_codes(codes: np.ndarray) -> np.ndarray:
    """Sorted distinct codes; batches usually arrive sorted by key, so skip the sort then."""
    if len(codes) > 1 and not (tuning.FAST_PATHS and (codes[1:] >= codes[:-1]).all()):
        codes = np.sort(codes)
    if len(codes) > 1:
        keep = np.empty(len(codes), dtype=bool)
        keep[0] = True
        np.not_equal(codes[1:], codes[:-1], out=keep[1:])
        codes = codes[keep]
    return codes


class Accumulation:
    """A collection's content at one time for a set of keys: consolidated columns + weights,
    sorted by record, so the rows of one key are contiguous."""

    __slots__ = ("cols", "kinds", "weights")

    def __init__(self, cols, kinds, weights):
        self.cols, self.kinds, self.weights = list(cols), tuple(kinds), weights

    def __len__(self):
        return len(self.weights)


#: the compiled kernel path (:mod:`~ddlab.engine.kernels.reduce`), loaded when a reduce first
#: takes it (it imports numba; ``import ddlab`` does not)
_kernel_reduce = None


def _kernels():
    global _kernel_reduce
    if _kernel_reduce is None:
        from ..kernels import reduce as module

        _kernel_reduce = module
    return _kernel_reduce


#: the kernel path's ``process`` (a module variable: tests replace it)
_kernel_process = None


def kernel_process(op, t, inputs, pending) -> bool:
    """``Reduce.process`` on the compiled kernels; ``False`` when they decline."""
    global _kernel_process
    if _kernel_process is None:
        _kernel_process = _kernels().process
    return _kernel_process(op, t, inputs, pending)


class Reduce(Operator):
    kind = "reduce"
    shown_in_derivations = True
    takes_times = True
    #: the compiled kernels' plan for this operator (see :mod:`~ddlab.engine.kernels.reduce`)
    kernel_plan = None
    #: (during a batch of times on the kernels) the input rows of the batch's keys, read
    #: once, which each time's scan reads instead of the input trace
    history_source = None

    def __init__(self, scope, inputs, logic, nkey: int = 1, name=None):
        super().__init__(scope, inputs, name or logic.name)
        self.logic = logic
        self.nkey = nkey
        self.in_traces = [up.trace for up in inputs]
        self.out_trace = Trace(nkey, scope.depth, self.flow, name=f"{self.label} output")
        self.obligations: dict[tuple, list] = {}
        #: the compiled kernels' code for a built-in logic (None: no kernel path)
        self.logic_code = getattr(logic, "kernel_code", None)

    # -- the capabilities it holds ------------------------------------------------------
    def idle_without_input(self, t: tuple) -> bool:
        return t not in self.obligations

    def hold(self, u: tuple, codes) -> None:
        """Schedule the key codes ``codes`` for evaluation at ``u``: a capability at ``u``
        (the reduce may emit there later) until it runs."""
        found = self.obligations.get(u)
        if found is None:
            self.obligations[u] = [codes]
            self.tracker.update(self.index, u, 1)
            if self.own_work:
                self.add_work(u, 1)
            if self._fresh is not None:
                self._fresh.append(u)
        else:
            found.append(codes)

    def run_at(self, t: tuple) -> None:
        """:meth:`Operator.run_at`; the capability held for ``t`` goes once the run is done
        (its output's pointstamps are counted by then)."""
        held = t in self.obligations
        super().run_at(t)
        if held:
            self.tracker.update(self.index, t, -1)
            if self.own_work:
                self.add_work(t, -1)

    #: (during :meth:`run_times`) the times whose scheduled keys the run took: their
    #: capabilities go when it is done (a time's may have been taken by the run at an
    #: earlier time of the batch, which scheduled it)
    _taken = None
    #: (during :meth:`_each_time`) the times :meth:`hold` scheduled anew
    _fresh = None

    def run_times(self, ts: list) -> None:
        """:meth:`Operator.run_times`; the capabilities of the times it evaluated go once it
        is done."""
        self._taken = taken = []
        try:
            super().run_times(ts)
        finally:
            self._taken = None
        for t in taken:
            self.tracker.update(self.index, t, -1)
            if self.own_work:
                self.add_work(t, -1)

    def _take_scheduled(self, t: tuple):
        """The key codes scheduled at ``t`` (``None``: none), taken out."""
        pending = self.obligations.pop(t, None)
        if pending is not None and self._taken is not None:
            self._taken.append(t)
        return pending

    def process_times(self, items: list) -> list:
        """Several complete times in one run: each key's history is read from the traces
        once for all of them (the Rust reduce's batch of times), then the keys of each time
        are evaluated at it, smallest time first, the output written at one time joining the
        history the later ones see.  A later interesting time found on the way that is
        complete too (at or before a time of the batch) is evaluated in the same run, in its
        place in the order, rather than scheduled: a batch time after it must see its output.
        Returns ``[(time, rows emitted)]`` for every time evaluated."""
        order = [t for t, _ in items]
        keys = {}
        for t, inputs in items:
            codes = [key_code(b.cols, b.kinds, self.nkey) for b in inputs
                     if b is not None and len(b)]
            pending = self.obligations.get(t)
            if pending:
                codes.extend(np.asarray(p, dtype=np.int64) for p in pending)
            keys[t] = codes
        everything = [c for codes in keys.values() for c in codes]
        union = unique_codes(np.concatenate(everything)) if everything else everything
        if len(union) > tuning.REDUCE_CHUNK_KEYS or not tuning.FAST_PATHS:
            # many keys (a load): each time on its own, chunk by chunk, on the kernels
            return self._each_time(items)
        if self.logic_code is not None and len(self.in_traces) == 1 and kernels.active() \
                and _kernels().batch_ready(self):
            # the compiled logics: each time on the kernels, reading the input rows of the
            # batch's keys, gathered once, instead of the trace
            trace = self.in_traces[0]
            rows = trace.gather(union)
            self.flow.work.history_rows += len(rows)
            self.history_source = _kernels().Gathered(rows, trace.depth)
            try:
                return self._each_time(items)
            finally:
                self.history_source = None
        for t in order:
            self._take_scheduled(t)
        if not len(union):
            return [(t, 0) for t in order]
        work = self.flow.work
        histories = []
        for trace in self.in_traces:
            if trace.kinds is None:
                histories.append(None)
                continue
            rows = trace.gather(union)
            work.history_rows += len(rows)
            histories.append(_ByKey(rows))
        out = _History(self.out_trace, union, self.nkey)
        work.history_rows += out.read
        heap = list(order)  # (sorted: a heap already)
        done = []
        while heap:
            t = heapq.heappop(heap)
            codes = keys.pop(t)
            self._emitted = 0
            if codes:
                codes = unique_codes(np.concatenate(codes) if len(codes) > 1 else codes[0])
                later_keys, later_times = [], []
                accs = [None if rows is None else
                        _accumulate_rows(rows, codes, t, self.in_traces[j].kinds, later_keys,
                                         later_times)
                        for j, rows in enumerate(histories)]
                old = out.accumulate(codes, t, later_keys, later_times)
                delta = self._delta(accs, old)
                if delta is not None:
                    self.out_trace.insert(t, delta)
                    self.emit(t, delta)
                    out.add(t, delta)
                if later_keys:
                    self._schedule_or_join(np.concatenate(later_keys),
                                           np.concatenate(later_times), t, order, keys, heap)
            done.append((t, self._emitted))
        return done

    def _schedule_or_join(self, codes, times, t, batch, keys, heap) -> None:
        """:meth:`_schedule` for the later interesting times of a batch's evaluation at
        ``t``; those at or before a time of the ``batch`` (complete) join the run's worklist
        (``keys`` by time, ``heap`` of times) instead."""
        for u, found in _by_time(codes, lub_rows(times, t)):
            have = keys.get(u)
            if have is None:
                if not any(leq(u, b) for b in batch):
                    self.hold(u, found)
                    continue
                have = keys[u] = []
                heapq.heappush(heap, u)
            have.append(np.asarray(found, dtype=np.int64))

    def _each_time(self, items: list) -> list:
        """:meth:`process_times` one :meth:`process` per time (the kernels' and the chunked
        paths), with the same worklist: an interesting time a run schedules that is at or
        before a time of the batch is run in its place in the order."""
        inputs_at = dict(items)
        order = [t for t, _ in items]
        heap = list(order)
        # every time the worklist has held: a batch time not yet run that a run schedules
        # (its capability is new, so :meth:`hold` reports it) is already on the heap, and
        # pushing it again would evaluate it twice
        queued = set(order)
        done = []
        none = [None] * len(self.inputs)
        self._fresh = fresh = []
        try:
            while heap:
                t = heapq.heappop(heap)
                self._emitted = 0
                self.process(t, inputs_at.get(t, none))
                done.append((t, self._emitted))
                for u in fresh:
                    if u not in queued and any(leq(u, b) for b in order):
                        queued.add(u)
                        heapq.heappush(heap, u)
                fresh.clear()
        finally:
            self._fresh = None
        return done

    def process(self, t, inputs):
        pending = self.obligations.pop(t, None)  # (_take_scheduled, inlined: the hot path)
        if pending is not None and self._taken is not None:
            self._taken.append(t)
        if tuning.FAST_PATHS and self.logic_code is not None and kernels.active() and \
                kernel_process(self, t, inputs, pending):
            return
        if tuning.FAST_PATHS and getattr(self.logic, "small", None) is not None:
            keys = self._small_keys(inputs, pending)
            if keys is not None and self._process_small(t, keys):
                return
        codes = [key_code(b.cols, b.kinds, self.nkey) for b in inputs if b is not None and len(b)]
        if pending:  # arrays, or lists from the Python path
            codes.extend(np.asarray(p, dtype=np.int64) for p in pending)
        if not codes:
            return
        codes = unique_codes(np.concatenate(codes) if len(codes) > 1 else codes[0])
        later_keys, later_times = [], []
        step = tuning.REDUCE_CHUNK_KEYS if tuning.FAST_PATHS else len(codes)
        for lo in range(0, len(codes), max(step, 1)):
            # key by key, so a chunk of keys at a time gives the same updates; the chunks'
            # batches hold disjoint keys (a from-scratch run's temporaries stay chunk-sized)
            self._evaluate(t, codes[lo:lo + step], later_keys, later_times)
        if later_keys:
            self._schedule(np.concatenate(later_keys), np.concatenate(later_times), t)

    def _evaluate(self, t, codes, later_keys, later_times):
        """The output changes at ``t`` of the keys ``codes`` (sorted key codes): inserted
        into the output trace and emitted; the keys' later interesting times collected."""
        accs = []
        for trace in self.in_traces:
            accs.append(self._accumulate(trace, codes, t, later_keys, later_times))
        old = self._accumulate(self.out_trace, codes, t, later_keys, later_times)
        delta = self._delta(accs, old)
        if delta is not None:
            self.out_trace.insert(t, delta)
            self.emit(t, delta)

    def _delta(self, accs, old) -> Batch | None:
        """The logic's output for the accumulated inputs ``accs`` less the accumulated
        output ``old``: the output's change, or ``None``."""
        new_cols, new_kinds, new_weights = self.logic.evaluate(accs, self)
        if old is not None and len(old):
            cols = [np.concatenate([n, o]) for n, o in zip(new_cols, old.cols)] \
                if len(new_weights) else old.cols
            kinds = new_kinds if len(new_weights) else old.kinds
            weights = np.concatenate([new_weights, -old.weights])
        else:
            cols, kinds, weights = new_cols, new_kinds, new_weights
        if len(weights):
            cols, weights = consolidate(cols, weights, runs=True)
            delta = Batch(cols, kinds, weights, consolidated=True)
            if len(delta):
                return delta
        return None

    # -- the Python path for a few keys ------------------------------------------------------
    def _small_keys(self, inputs, pending) -> list | None:
        """The sorted key codes to evaluate, if few and every trace holds integer records."""
        for trace in self.in_traces + [self.out_trace]:
            if trace.kinds is not None and any(k != INT for k in trace.kinds):
                return None
        keys = set()
        for b in inputs:
            if b is not None and len(b):
                if len(b) > tuning.SMALL_KEYS or any(k != INT for k in b.kinds):
                    return None
                keys.update(key_code(b.cols, b.kinds, self.nkey).tolist())
        for codes in pending or ():
            keys.update(codes.tolist() if isinstance(codes, np.ndarray) else codes)
        if not keys or len(keys) > tuning.SMALL_KEYS:
            return None
        return sorted(keys)

    def _process_small(self, t, keys) -> bool:
        """:meth:`process` for a few keys in Python; ``False`` (nothing done) when their
        histories are too long or the logic declines, and the general path runs."""
        later: set = set()
        accs = []
        for trace in self.in_traces:
            if trace.kinds is None:
                accs.append({})
                continue
            found = trace.histories(keys, tuning.SMALL_HISTORY)
            if found is None:
                return False
            self.flow.work.history_rows += sum(map(len, found.values()))
            accs.append(_accumulate_small(found, len(trace.kinds), trace.row_depth, t, later))
        old = {}
        if self.out_trace.kinds is not None:
            found = self.out_trace.histories(keys, tuning.SMALL_HISTORY)
            if found is None:
                return False
            self.flow.work.history_rows += sum(map(len, found.values()))
            old = _accumulate_small(found, len(self.out_trace.kinds), self.out_trace.row_depth,
                                    t, later)
        new = self.logic.small(accs, self.nkey)
        if new is None:
            return False
        delta = new
        for rec, w in old.items():
            v = delta.get(rec, 0) - w
            if v:
                delta[rec] = v
            elif rec in delta:
                del delta[rec]
        if delta:
            records = sorted(delta)
            diffs = [delta[r] for r in records]
            arity = len(records[0])
            kinds = (INT,) * arity
            batch = Batch(np.array(list(zip(*records)), dtype=np.int64).reshape(arity, -1),
                          kinds, np.array(diffs, dtype=np.int64), consolidated=True)
            self.out_trace.insert(t, batch)
            self.emit(t, batch)
        if later:
            self._schedule_small(later, t)
        return True

    def _schedule_small(self, later, t):
        """:meth:`_schedule` for a few ``(key code, time)`` pairs in Python (a row's time may
        lack trailing zero coordinates: its lub with ``t`` takes ``t``'s)."""
        by_time: dict = {}
        for code, time in later:
            found = by_time.get(time)
            if found is None:
                by_time[time] = [code]
            else:
                found.append(code)
        groups: dict = {}
        n = len(t)
        for time, codes in by_time.items():
            u = tuple(a if a >= b else b for a, b in zip(time, t))
            if len(u) < n:
                u += t[len(u):]
            found = groups.get(u)
            if found is None:
                groups[u] = set(codes)
            else:
                found.update(codes)
        hold = self.hold
        for u, codes in groups.items():
            hold(u, sorted(codes))

    def _accumulate(self, trace, codes, t, later_keys, later_times):
        if trace.kinds is None:
            return None
        if len(codes) >= tuning.LARGE_KEYS and tuning.FAST_PATHS:
            # many keys: only columns and diffs, filtered by time batch by batch, packed
            cols, weights, codes_later, times_later = trace.accumulate_until(codes, t)
            self.flow.work.history_rows += len(weights) + sum(map(len, codes_later))
            later_keys.extend(codes_later)
            later_times.extend(times_later)
            return Accumulation(cols, trace.kinds, weights)
        rows = trace.gather(codes)
        self.flow.work.history_rows += len(rows)
        return _accumulate_rows(rows, codes, t, trace.kinds, later_keys, later_times)

    def _schedule(self, keys, times, t):
        """Hold the key codes ``keys`` at the lubs of ``times`` with ``t``."""
        hold = self.hold
        for u, codes in _by_time(keys, lub_rows(times, t)):
            hold(u, codes)

    # -- state ---------------------------------------------------------------------------
    def snapshot(self):
        return (self.out_trace.snapshot(), {k: list(v) for k, v in self.obligations.items()})

    def restore(self, state):
        """Back to a snapshot (a rolled-back step: the trackers were cleared, so the
        capabilities of the restored obligations are taken again)."""
        self.out_trace.restore(state[0])
        self.obligations = {k: list(v) for k, v in state[1].items()}
        for u in self.obligations:
            self.tracker.update(self.index, u, 1)
            if self.own_work:
                self.add_work(u, 1)

    def traces(self):
        return [self.out_trace]

    # -- hooks of the analyses (see Operator) -------------------------------------------------
    def kept_trace(self):
        return self.out_trace

    def known_kinds(self, kinds_of):
        return None

    def explain_present(self, tracer, step, rec, t, sign):
        """By the logic's own rule (its ``explain_present``: a min by its winner, a union by
        one side...) where it has one, else by the record's whole group."""
        rule = None if tracer.exact_only else getattr(self.logic, "explain_present", None)
        found = rule(tracer, step, self, rec, t, sign) if rule is not None else None
        return found if found is not None else tracer.exact_groups(step, self, [rec], t)

    def explain_exact(self, tracer, step, pattern, t, content):
        width = self.nkey or len(next(iter(content)))
        keys = {r[:width] for r in content}
        kp = tracer.hist.key_pattern(keys, width)
        step.note = f"{len(keys)} whole group(s)"
        return [("E", up, kp, t) for up in self.inputs]

    def copy_into(self, scope, inputs):
        return Reduce(scope, inputs, self.logic, self.nkey, self.name)


def _by_time(keys, times) -> list:
    """``[(time, sorted distinct key codes)]`` for each distinct row of ``times``, in time
    order (``keys[i]`` goes with ``times[i]``)."""
    if len(keys) <= tuning.REDUCE_GROUP_TIMES_ROWS and tuning.FAST_PATHS:
        # a few (key, time) pairs: group them by time in Python
        groups: dict = {}
        for k, row in zip(keys.tolist(), map(tuple, times.tolist())):
            groups.setdefault(row, set()).add(k)
        return [(u, np.array(sorted(groups[u]), dtype=np.int64)) for u in sorted(groups)]
    # one sort by (time, key), then drop repeats
    order = sort_order(list(times.T) + [keys]) if tuning.FAST_PATHS else \
        np.lexsort([keys] + list(times.T[::-1]))
    times, keys = times.take(order, axis=0), keys.take(order)
    new_time = np.ones(len(keys), dtype=bool)
    new_time[1:] = np.any(times[1:] != times[:-1], axis=1)
    fresh = new_time.copy()
    fresh[1:] |= keys[1:] != keys[:-1]
    times, keys, new_time = times[fresh], keys[fresh], new_time[fresh]
    starts = np.flatnonzero(new_time)
    ends = np.append(starts[1:], len(keys))
    return [(tuple(times[s].tolist()), keys[s:e]) for s, e in zip(starts.tolist(), ends.tolist())]


def _accumulate_small(histories: dict, arity: int, depth: int, t: tuple, later: set) -> dict:
    """``{record: weight}`` (nonzero) of the rows at times ``<= t`` of a few keys'
    histories (packed rows, see :meth:`Trace.histories`); the rows at other times add
    ``(key code, time)`` to ``later``.  ``depth`` is the rows' number of time coordinates (an
    outer trace read inside a loop has fewer; the missing ones are zeros)."""
    acc: dict = {}
    end = 1 + arity
    if depth == 1:
        t0 = t[0]
        for code, rows in histories.items():
            for row in rows:
                if row[end] <= t0:
                    rec = row[1:end]
                    acc[rec] = acc.get(rec, 0) + row[-1]
                else:
                    later.add((code, row[end:end + 1]))
    elif depth == 2:
        t0, t1 = t[0], t[1]
        for code, rows in histories.items():
            for row in rows:
                if row[end] <= t0 and row[end + 1] <= t1:
                    rec = row[1:end]
                    acc[rec] = acc.get(rec, 0) + row[-1]
                else:
                    later.add((code, row[end:end + 2]))
    elif depth == 3:
        t0, t1, t2 = t[0], t[1], t[2]
        for code, rows in histories.items():
            for row in rows:
                if row[end] <= t0 and row[end + 1] <= t1 and row[end + 2] <= t2:
                    rec = row[1:end]
                    acc[rec] = acc.get(rec, 0) + row[-1]
                else:
                    later.add((code, row[end:end + 3]))
    else:
        stop = end + depth
        for code, rows in histories.items():
            for row in rows:
                time = row[end:stop]
                if all(map(operator.le, time, t)):
                    rec = row[1:end]
                    acc[rec] = acc.get(rec, 0) + row[-1]
                else:
                    later.add((code, time))
    return {rec: w for rec, w in acc.items() if w}


class _ByKey:
    """Rows gathered for a batch's keys, sorted by key code once, so that each time's keys
    are picked by binary search rather than by a pass over every row."""

    __slots__ = ("rows", "codes")

    def __init__(self, rows):
        if len(rows) > 1 and not (rows.keycode[1:] >= rows.keycode[:-1]).all():
            rows = rows.take(np.argsort(rows.keycode, kind="stable"))
        self.rows, self.codes = rows, rows.keycode

    def select(self, codes):
        """The rows of the (sorted, distinct) key codes ``codes``."""
        if not len(self.rows):
            return self.rows
        lo = np.searchsorted(self.codes, codes, "left")
        hi = np.searchsorted(self.codes, codes, "right")
        return self.rows.take(expand_ranges(lo, hi - lo))


def _accumulate_rows(rows, codes, t, kinds, later_keys, later_times) -> Accumulation:
    """An :class:`Accumulation` at ``t`` of the keys ``codes`` from rows gathered for a
    superset of them (a :class:`_ByKey`, or rows holding only those keys); the keys' rows
    at times not ``<= t`` go to ``later_*``."""
    mine = rows.select(codes) if isinstance(rows, _ByKey) else rows
    if not len(mine):
        return Accumulation([c[:0] for c in mine.cols], kinds, mine.diffs)
    now = leq_rows(mine.times, t)
    if not now.all():
        later = ~now
        later_keys.append(mine.keycode[later])
        later_times.append(mine.times[later])
        mine = mine.take(now)
    cols, weights = consolidate(mine.cols, mine.diffs, runs=True)
    return Accumulation(cols, kinds, weights)


class _History:
    """A reduce's output history for a batch of times: the keys' rows read from the output
    trace once, and the changes the batch's run writes at each time added as it goes."""

    def __init__(self, trace, codes, nkey: int):
        self.trace, self.nkey = trace, nkey
        rows = None if trace.kinds is None else trace.gather(codes)
        self.read = 0 if rows is None else len(rows)
        self.rows = None if rows is None else _ByKey(rows)
        self.added: list = []

    def add(self, t: tuple, delta: Batch) -> None:
        self.added.append(Rows(key_code(delta.cols, delta.kinds, self.nkey), delta.cols,
                               np.tile(np.asarray(t, dtype=np.int64), (len(delta), 1)),
                               delta.diffs))

    def accumulate(self, codes, t, later_keys, later_times) -> Accumulation | None:
        kinds = self.trace.kinds
        if kinds is None:
            return None
        parts = [] if self.rows is None else [self.rows.select(codes)]
        for rows in self.added:  # (a few rows a time: the run's own output)
            parts.append(rows.take(np.isin(rows.keycode, codes)))
        rows = Rows.concat(parts, len(kinds), len(t))
        return _accumulate_rows(rows, codes, t, kinds, later_keys, later_times)
