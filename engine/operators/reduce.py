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
"""
from __future__ import annotations

import numpy as np

from .. import config
from ..batch import Batch, SMALL_ROWS, consolidate, sort_order
from ..columns import key_code
from ..lattice import leq_rows, lub_rows
from ..trace import Trace
from .base import Operator


def unique_codes(codes: np.ndarray) -> np.ndarray:
    """Sorted distinct codes; batches usually arrive sorted by key, so skip the sort then."""
    if len(codes) > 1 and not (config.fast_paths and (codes[1:] >= codes[:-1]).all()):
        codes = np.sort(codes)
    if len(codes) > 1:
        keep = np.empty(len(codes), dtype=bool)
        keep[0] = True
        np.not_equal(codes[1:], codes[:-1], out=keep[1:])
        codes = codes[keep]
    return codes


#: From this many keys on, a reduce accumulates its inputs with :meth:`Trace.accumulate_until`.
LARGE_KEYS = 1024


class Accumulation:
    """A collection's content at one time for a set of keys: consolidated columns + weights,
    sorted by record, so the rows of one key are contiguous."""

    __slots__ = ("cols", "kinds", "weights")

    def __init__(self, cols, kinds, weights):
        self.cols, self.kinds, self.weights = list(cols), tuple(kinds), weights

    def __len__(self):
        return len(self.weights)


class Reduce(Operator):
    kind = "reduce"

    def __init__(self, scope, inputs, logic, nkey: int = 1, name=None):
        super().__init__(scope, inputs, name or logic.name)
        self.logic = logic
        self.nkey = nkey
        self.in_traces = [up.trace for up in inputs]
        self.out_trace = Trace(nkey, scope.depth, self.flow, name=f"{self.label} output")
        self.obligations: dict[tuple, list] = {}

    def process(self, t, inputs):
        codes = [key_code(b.cols, b.kinds, self.nkey) for b in inputs if b is not None and len(b)]
        pending = self.obligations.pop(t, None)
        if pending:
            codes.extend(pending)
        if not codes:
            return
        codes = unique_codes(np.concatenate(codes) if len(codes) > 1 else codes[0])
        later_keys, later_times = [], []
        accs = []
        for trace in self.in_traces:
            accs.append(self._accumulate(trace, codes, t, later_keys, later_times))
        old = self._accumulate(self.out_trace, codes, t, later_keys, later_times)
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
                self.out_trace.insert(t, delta)
                self.emit(t, delta)
        if later_keys:
            self._schedule(np.concatenate(later_keys), np.concatenate(later_times), t)

    def _accumulate(self, trace, codes, t, later_keys, later_times):
        if trace.kinds is None:
            return None
        if len(codes) >= LARGE_KEYS and config.fast_paths and isinstance(trace, Trace):
            # many keys: only columns and diffs, filtered by time batch by batch, packed
            cols, weights, codes_later, times_later = trace.accumulate_until(codes, t)
            later_keys.extend(codes_later)
            later_times.extend(times_later)
            return Accumulation(cols, trace.kinds, weights)
        rows = trace.gather(codes)
        if not len(rows):
            return Accumulation([c[:0] for c in rows.cols], trace.kinds, rows.diffs)
        now = leq_rows(rows.times, t)
        if not now.all():
            later = ~now
            later_keys.append(rows.keycode[later])
            later_times.append(rows.times[later])
            rows = rows.take(now)
        cols, weights = consolidate(rows.cols, rows.diffs, runs=True)
        return Accumulation(cols, trace.kinds, weights)

    def _schedule(self, keys, times, t):
        times = lub_rows(times, t)
        if len(keys) <= SMALL_ROWS and config.fast_paths:
            # a few (key, time) pairs: group them by time in Python
            groups: dict = {}
            for k, row in zip(keys.tolist(), map(tuple, times.tolist())):
                groups.setdefault(row, set()).add(k)
            for u in sorted(groups):
                self.obligations.setdefault(u, []).append(
                    np.array(sorted(groups[u]), dtype=np.int64))
                self.scope.schedule(u, self.index)
            return
        # group the (key, time) pairs by time: one sort by (time, key), then drop repeats
        # (process() sorts and dedups each time's keys again, so this only saves memory)
        order = sort_order(list(times.T) + [keys]) if config.fast_paths else \
            np.lexsort([keys] + list(times.T[::-1]))
        times, keys = times.take(order, axis=0), keys.take(order)
        new_time = np.ones(len(keys), dtype=bool)
        new_time[1:] = np.any(times[1:] != times[:-1], axis=1)
        fresh = new_time.copy()
        fresh[1:] |= keys[1:] != keys[:-1]
        times, keys, new_time = times[fresh], keys[fresh], new_time[fresh]
        starts = np.flatnonzero(new_time)
        ends = np.append(starts[1:], len(keys))
        for s, e in zip(starts.tolist(), ends.tolist()):
            u = tuple(times[s].tolist())
            self.obligations.setdefault(u, []).append(keys[s:e])
            self.scope.schedule(u, self.index)

    # -- state ---------------------------------------------------------------------------
    def snapshot(self):
        return (self.out_trace.snapshot(), {k: list(v) for k, v in self.obligations.items()})

    def restore(self, state):
        self.out_trace.restore(state[0])
        self.obligations = {k: list(v) for k, v in state[1].items()}

    def traces(self):
        return [self.out_trace]
