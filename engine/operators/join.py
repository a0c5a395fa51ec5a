"""Join: the bilinear differential join over partially ordered times.

Each pair of updates ``(a, ta, da)``, ``(b, tb, db)`` with equal keys contributes
``(select(k, a, b), lub(ta, tb), da * db)``.  At time ``t`` with new batches ``dA`` and ``dB``
and traces that already hold them (arrangements are updated upstream), the new output is
``dA x B + A x dB - dA x dB``: every pair is produced exactly once.  Lookups are
``searchsorted`` over the traces' sorted key codes; no per-record Python unless the selector is
a Python function.

A few changed records whose keys have short histories are joined in Python instead
(:meth:`Join._process_small`), from the traces' cached histories: for a single change that
costs less than the numpy calls would.  Both paths are tested equal."""
from __future__ import annotations

import numpy as np

from .. import kernels, tuning
from ..batch import Batch, concat_batches
from ..budget import check_pending
from ..columns import INT, KIND_NAMES, decode_rows, encode_rows, key_code
from ..errors import SchemaError
from ..lattice import leq, leq_rows, lub, lub_rows
from ..trace import Trace
from .base import Operator
from .linear import call_user


#: the compiled kernel path's ``process`` (:mod:`~ddlab.engine.kernels.join`), loaded when a
#: join first takes it (it imports numba; ``import ddlab`` does not)
_kernel_process = None


def kernel_process(op, t, d_left, d_right) -> bool:
    """``Join.process`` on the compiled kernels; ``False`` when they decline."""
    global _kernel_process
    if _kernel_process is None:
        from ..kernels.join import process

        _kernel_process = process
    return _kernel_process(op, t, d_left, d_right)


def kernel_process_times(op, depth, d_left, left_times, d_right, right_times) -> bool:
    """``Join.process_times`` on the compiled kernels (the times one column per row);
    ``False`` when they decline."""
    from ..kernels.join import process_times

    return process_times(op, depth, d_left, left_times, d_right, right_times)


class Join(Operator):
    kind = "join"
    shown_in_derivations = True
    #: several complete times in one run: their deltas are matched at once, each row at its
    #: own time (:meth:`process_times`)
    takes_times = True

    def __init__(self, scope, left, right, nkey: int = 1, select=None, name=None):
        super().__init__(scope, [left, right], name)
        self.nkey = nkey
        self.select = select
        self.left_trace, self.right_trace = left.trace, right.trace
        self._preselect = False

    def process(self, t, inputs):
        if (self.queues[0] or self.queues[1]) and any(d is not None and len(d) for d in inputs):
            self._queued_pairs(t, inputs)
        self._process(t, inputs)

    def _queued_pairs(self, t, inputs, times=(None, None)) -> None:
        """Emit minus the pairs of this time's deltas with the batches queued here at other
        times (not yet complete).  A shared arrangement inserts a batch into its trace when
        its own time is complete, which may be before this join's is: the delta meets that
        batch in the trace now, and the batch meets this delta again (in the other trace) when
        its time comes.  Fused arrangements insert only the time their reader runs: nothing
        to correct there.  (Nor when a side's trace has never held a row: the batches queued
        for it are not in it yet.)  ``times``: per port, the delta rows' own times (a batch of
        times), else ``None`` (every row at ``t``)."""
        self._preselect = False
        if self.left_trace.kinds is None or self.right_trace.kinds is None:
            return
        kinds = self._out_kinds()
        for port, d in enumerate(inputs):
            queued = self.queues[1 - port]
            if d is None or not len(d) or not queued:
                continue
            others = Trace(self.nkey, self.scope.depth, self.flow)
            for u in sorted(queued):
                batch = concat_batches(queued[u], self.label)
                if batch is not None:
                    others.insert(u, batch)
            if not len(others):
                continue
            if port == 0:
                self._check_keys(d.kinds, others.kinds)
            else:
                self._check_keys(others.kinds, d.kinds)
            cols, at, diffs = self._match(d, others, t, port == 0, times[port])
            if len(diffs):
                self._emit_by_time(t, cols, kinds, at, -diffs)

    def process_times(self, items: list) -> list:
        """Several complete times in one run: each side's deltas, every row at its own time,
        are matched at once, ``dA x B + A x dB - dA x dB`` over the whole batch (the join is
        bilinear, and each pair's time is the lub of its rows' times, so one match over the
        batch gives what one match per time gives).  Each time is credited with the rows
        emitted at times it is the latest batch time at or before."""
        if len(items) == 1:
            return super().process_times(items)
        # (never one process per time: the fused arrangements have put every time's delta
        # into the traces already, so each time would meet the others' deltas there twice)
        depth = len(items[0][0])
        deltas, times = [], []
        for port in (0, 1):
            parts = [(t, inputs[port]) for t, inputs in items
                     if inputs[port] is not None and len(inputs[port])]
            if not parts:
                deltas.append(None)
                times.append(None)
                continue
            deltas.append(concat_batches([b for _, b in parts], self.label))
            times.append(np.concatenate([np.broadcast_to(np.asarray(t, dtype=np.int64),
                                                         (len(b), depth)) for t, b in parts]))
        order = [t for t, _ in items]
        emitted = dict.fromkeys(order, 0)
        credited: dict = {}
        send = Operator.emit.__get__(self)

        def emit(u, batch):  # counts the rows sent at u to the batch time they come from
            before = self._emitted
            send(u, batch)
            owner = credited.get(u)
            if owner is None:
                owner = credited[u] = next((t for t in reversed(order) if leq(t, u)), order[0])
            emitted[owner] += self._emitted - before

        self.emit = emit
        try:
            if (self.queues[0] or self.queues[1]) and any(d is not None for d in deltas):
                self._queued_pairs(order[0], deltas, times)
            self._process(order[0], deltas, times)
        finally:
            del self.emit
        return list(emitted.items())

    def _process(self, t, inputs, times=(None, None)):
        """The new pairs of ``inputs`` (the deltas) with the traces; ``times``: per side,
        each delta row's time (a batch of times), else ``None`` (every row at ``t``)."""
        d_left, d_right = inputs
        batched = times[0] is not None or times[1] is not None
        if batched:
            if tuning.FAST_PATHS and kernels.active() and kernel_process_times(
                    self, len(t), d_left, _columns(times[0]), d_right, _columns(times[1])):
                return
        elif tuning.FAST_PATHS and kernels.active() and \
                kernel_process(self, t, d_left, d_right):
            return
        elif tuning.FAST_PATHS and self._process_small(t, d_left, d_right):
            return
        # large deltas with a column selection: _match builds only the selected columns
        self._preselect = isinstance(self.select, tuple) and tuning.FAST_PATHS and sum(
            len(d) for d in inputs if d is not None) > tuning.JOIN_PRESELECT_ROWS
        parts = []
        if d_left is not None and len(d_left):
            self._check_keys(d_left.kinds, self.right_trace.kinds)
            parts.append(self._match(d_left, self.right_trace, t, True, times[0]))
        if d_right is not None and len(d_right):
            self._check_keys(self.left_trace.kinds, d_right.kinds)
            parts.append(self._match(d_right, self.left_trace, t, False, times[1]))
            if d_left is not None and len(d_left):
                # dA x dB: index the smaller delta (a loop's first time meets the whole
                # entered graph with a handful of seeds)
                if len(d_left) < len(d_right) and len(d_right) > tuning.JOIN_SMALLER_DELTA_ROWS \
                        and tuning.FAST_PATHS:
                    both = self._delta_trace(t, d_left, times[0])
                    cols, at, diffs = self._match(d_right, both, t, False, times[1])
                else:
                    both = self._delta_trace(t, d_right, times[1])
                    cols, at, diffs = self._match(d_left, both, t, True, times[0])
                parts.append((cols, at, -diffs))
        parts = [p for p in parts if len(p[2])]
        if not parts:
            return
        kinds = self._out_kinds()
        if self._preselect:
            # _match built only the selected columns, and ``None`` times when every pair is
            # at ``t``
            kinds = tuple(kinds[j] for j in self.select)
            if all(p[1] is None for p in parts):
                if len(parts) == 1:
                    cols, diffs = parts[0][0], parts[0][2]
                else:
                    cols = [np.concatenate([p[0][j] for p in parts]) for j in range(len(kinds))]
                    diffs = np.concatenate([p[2] for p in parts])
                self.emit(t, Batch(cols, kinds, diffs))
                return
            parts = [p if p[1] is not None else
                     (p[0], np.broadcast_to(np.asarray(t, dtype=np.int64), (len(p[2]), len(t))),
                      p[2]) for p in parts]
            cols = [np.concatenate([p[0][j] for p in parts]) for j in range(len(kinds))]
            times = np.concatenate([p[1] for p in parts])
            diffs = np.concatenate([p[2] for p in parts])
            self._emit_by_time(t, cols, kinds, times, diffs, selected=True)
            return
        cols = [np.concatenate([p[0][j] for p in parts]) for j in range(len(kinds))]
        times = np.concatenate([p[1] for p in parts])
        diffs = np.concatenate([p[2] for p in parts])
        self._emit_by_time(t, cols, kinds, times, diffs)

    def _delta_trace(self, t, delta: Batch, times) -> Trace:
        """A trace of ``delta`` alone, at ``t`` or each row at its own time (``times``)."""
        both = Trace(self.nkey, self.scope.depth, self.flow)
        if times is None:
            both.insert(t, delta)
            return both
        uniq, inverse = np.unique(times, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        for g, u in enumerate(uniq.tolist()):
            both.insert(tuple(u), delta.take(np.flatnonzero(inverse == g)))
        return both

    def _process_small(self, t, d_left, d_right) -> bool:
        """:meth:`process` in Python for a few integer records; ``False`` (nothing done) when
        the batches, the kinds or the histories do not qualify."""
        deltas = [(d, trace, is_left) for d, trace, is_left in
                  ((d_left, self.right_trace, True), (d_right, self.left_trace, False))
                  if d is not None and len(d)]
        for d, trace, _ in deltas:
            if len(d) > tuning.SMALL_DELTA or trace.kinds is None or \
                    any(k != INT for k in d.kinds) or any(k != INT for k in trace.kinds):
                return False
        nkey = self.nkey
        matched = []
        pairs = 0
        for d, trace, is_left in deltas:
            codes = key_code(d.cols, d.kinds, nkey).tolist()
            found = trace.histories(sorted(set(codes)), tuning.SMALL_MATCHES)
            if found is None:
                return False
            pairs += sum(len(found[c]) for c in codes)
            if pairs > tuning.SMALL_PAIRS:
                return False
            rows = list(zip(*[c.tolist() for c in d.cols]))
            matched.append((codes, rows, d.diffs.tolist(), found, len(trace.kinds),
                            trace.row_depth, is_left))
        self.flow.work.matched_pairs += pairs
        out: dict = {}  # time -> {record: diff}
        n = len(t)
        for codes, rows, diffs, found, arity, depth, is_left in matched:
            end = 1 + arity
            for code, rec, d in zip(codes, rows, diffs):
                key = rec[:nkey]
                for row in found[code]:
                    other = row[1:end]
                    if nkey > 1 and other[:nkey] != key:
                        continue  # a key-code collision
                    time = row[end:end + depth]
                    u = tuple(a if a >= b else b for a, b in zip(time, t))
                    if depth < n:
                        u += t[depth:]
                    record = rec + other[nkey:] if is_left else other + rec[nkey:]
                    at = out.get(u)
                    if at is None:
                        out[u] = at = {}
                    at[record] = at.get(record, 0) + d * row[-1]
        if len(matched) == 2:  # both sides changed: dA x dB was counted twice
            right_rows = list(zip(matched[1][0], matched[1][1], matched[1][2]))
            at = out.setdefault(t, {})
            for code, rec, d in zip(matched[0][0], matched[0][1], matched[0][2]):
                for code2, rec2, d2 in right_rows:
                    if code2 == code and rec2[:nkey] == rec[:nkey]:
                        record = rec + rec2[nkey:]
                        at[record] = at.get(record, 0) - d * d2
        kinds = None
        for u in sorted(out):
            records = sorted(r for r, d in out[u].items() if d)
            if not records:
                continue
            if kinds is None:
                kinds = (INT,) * len(records[0])
            cols = np.array(list(zip(*records)), dtype=np.int64).reshape(len(kinds), -1)
            diffs = np.array([out[u][r] for r in records], dtype=np.int64)
            self.emit(u, self._selected(Batch(cols, kinds, diffs, consolidated=True)))
        return True

    def _check_keys(self, left_kinds, right_kinds):
        if left_kinds is None or right_kinds is None:
            return
        for j in range(self.nkey):
            if left_kinds[j] != right_kinds[j]:
                raise SchemaError(
                    f"{self.label}: key column {j} is {KIND_NAMES[left_kinds[j]]} on the left and "
                    f"{KIND_NAMES[right_kinds[j]]} on the right; such keys never match "
                    f"(convert one side, e.g. with map)")

    def _out_kinds(self):
        lk, rk = self.left_trace.kinds, self.right_trace.kinds
        return tuple(lk) + tuple(rk[self.nkey:])

    def _match(self, delta: Batch, trace, t, delta_is_left: bool, dtimes=None):
        """``(cols, times, diffs)`` of every pair of a ``delta`` row and a ``trace`` row with
        equal keys, at the lub of their times: ``t``, or ``dtimes[i]`` (one row per delta row)
        when the delta spans a batch of times."""
        code = key_code(delta.cols, delta.kinds, self.nkey)
        check = None
        if self.flow.max_rows_per_epoch is not None:
            def check(n):
                check_pending(self, n, "join")
        q, rows = trace.gather_matches(code, check)
        self.flow.work.matched_pairs += len(q)
        if self.nkey > 1 and len(q):
            same = np.ones(len(q), dtype=bool)
            for j in range(self.nkey):
                same &= delta.cols[j][q] == rows.cols[j]
            q, rows = q[same], rows.take(same)
        if self._preselect:
            # only the selected columns are built; when every matched time is <= t (the usual
            # case: a trace holds no later time) every pair is at t, said by None times
            if not len(q):  # (an empty trace may not know its arity yet)
                return [], None, delta.diffs[:0]
            if delta_is_left:
                where = [(True, j) for j in range(len(delta.cols))] + \
                    [(False, j) for j in range(self.nkey, len(rows.cols))]
            else:
                where = [(False, j) for j in range(len(rows.cols))] + \
                    [(True, j) for j in range(self.nkey, len(delta.cols))]
            cols = [delta.cols[j].take(q) if from_delta else rows.cols[j]
                    for from_delta, j in (where[k] for k in self.select)]
            if dtimes is not None:
                times = np.maximum(rows.times, dtimes[q])
            else:
                times = None if leq_rows(rows.times, t).all() else lub_rows(rows.times, t)
            return cols, times, delta.diffs.take(q) * rows.diffs
        dcols = [c[q] for c in delta.cols]
        if delta_is_left:
            cols = dcols + list(rows.cols[self.nkey:])
        else:
            cols = list(rows.cols) + dcols[self.nkey:]
        times = lub_rows(rows.times, t) if dtimes is None else np.maximum(rows.times, dtimes[q])
        return cols, times, delta.diffs[q] * rows.diffs

    def _emit_by_time(self, t, cols, kinds, times, diffs, selected=False):
        select = (lambda b: b) if selected else self._selected
        if times.shape[0] and (times == np.asarray(t)).all():
            self.emit(t, select(Batch(cols, kinds, diffs)))
            return
        if len(diffs) <= tuning.JOIN_GROUP_TIMES_ROWS and tuning.FAST_PATHS:
            # a few rows: group them by time in Python (np.unique over rows costs ~30 us)
            groups: dict = {}
            for i, row in enumerate(map(tuple, times.tolist())):
                groups.setdefault(row, []).append(i)
            for u in sorted(groups):
                idx = np.array(groups[u], dtype=np.intp)
                self.emit(u, select(Batch([c[idx] for c in cols], kinds, diffs[idx])))
            return
        uniq, inverse = np.unique(times, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
        for g in range(len(uniq)):
            idx = order[bounds[g]:bounds[g + 1]]
            self.emit(tuple(int(x) for x in uniq[g]),
                      select(Batch([c[idx] for c in cols], kinds, diffs[idx])))

    def _selected(self, batch: Batch) -> Batch:
        sel = self.select
        if sel is None:
            return batch
        if isinstance(sel, tuple):
            return Batch([batch.cols[j] for j in sel], [batch.kinds[j] for j in sel], batch.diffs)
        nkey = self.nkey
        nleft = len(self.left_trace.kinds)
        rows = decode_rows(batch.cols, batch.kinds, self.flow.interner)
        if batch.arity == 1:
            rows = [(r,) for r in rows]

        def part(r, lo, hi):
            return r[lo] if hi - lo == 1 else (r[lo:hi] if hi > lo else None)

        out = call_user(self, lambda r: sel(part(r, 0, nkey), part(r, nkey, nleft),
                                            part(r, nleft, len(r))), rows)
        cols, kinds = encode_rows(out, self.flow.interner, f"{self.label} output")
        return Batch(cols, kinds, batch.diffs)

    # -- hooks of the analyses (see Operator) -------------------------------------------------
    def known_kinds(self, kinds_of):
        return None

    def explain_present(self, tracer, step, rec, t, sign):
        """One pair of input records whose output is ``rec``: the earliest."""
        left_op, right_op = self.inputs
        ranked = []
        for lrec, lm, rrec, rm, _ in tracer.pairs(self, tracer.hist.record_pattern([rec]), t):
            if lm * rm * sign <= 0:
                continue
            ls, rs = (1 if lm > 0 else -1), (1 if rm > 0 else -1)
            lr, rr = tracer.rank(left_op, lrec, t, ls), tracer.rank(right_op, rrec, t, rs)
            if lr is None or rr is None:
                continue
            ranked.append(((lub(lr[0], rr[0]), lr[1] + rr[1], lr[2], rr[2]), lrec, ls, rrec, rs))
        if not ranked:
            raise LookupError(f"{self.label}: no pair of input records makes {rec!r}")
        _, lrec, ls, rrec, rs = min(ranked, key=lambda z: z[0])
        step.note = f"{lrec!r} \u22c8 {rrec!r}" + (
            f" (one of {len(ranked)} pairs)" if len(ranked) > 1 else "")
        # the right side first: in a loop it is usually the constant side (the edges), so
        # the chain on the left, explored after it, can reuse what the right side used
        return [("P", right_op, rrec, t, rs), ("P", left_op, lrec, t, ls)]

    def explain_exact(self, tracer, step, pattern, t, content):
        """The whole key groups, on both sides, of the pairs making the records."""
        keys = {lrec[:self.nkey] for lrec, _, _, _, _ in tracer.pairs(self, pattern, t)}
        kp = tracer.hist.key_pattern(keys, self.nkey)
        step.note = f"{len(keys)} whole key group(s) of both sides"
        return [("E", up, kp, t) for up in self.inputs] if keys else []

    def derive_history(self, hist, pattern):
        return hist.join_updates(self, pattern)

    def copy_into(self, scope, inputs):
        return Join(scope, inputs[0], inputs[1], self.nkey, self.select, self.name)


def _columns(times):
    """A ``(rows, depth)`` time matrix as the kernels take it: one column per row."""
    return None if times is None else np.ascontiguousarray(times.T)
