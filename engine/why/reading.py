"""Reading the state the engine retains, for explanations: the only module of ``engine.why``
that touches the engine's data structures.

Why a module of its own: explanations read traces (arrangements, reduce outputs, input
contents) by key and by value and decode what they read; the engine's trace layer is being
reorganised, so everything explanations need from it goes through the few functions here
(``trace_of``, ``read``, ``kinds_of``), and a change of the trace layer is a change here only.

Records here are *decoded*: tuples of the values users see (strings, ints, floats, bools),
one-field records as 1-tuples.  Times are *inner* times: the loop coordinates of a time with
the epoch dropped, because explanations read the accumulated state after the last completed
epoch, where every retained update counts whatever its (compacted) epoch coordinate.
"""
from __future__ import annotations

import numpy as np

from ..columns import BOOL, FLOAT, INT, OBJECT, decode_column, key_code
from ..lattice import FIXED_POINT
from .patterns import matcher

#: A loop coordinate larger than any iteration: "at the fixed point".
INF = FIXED_POINT


def trace_of(op):
    """The trace holding ``op``'s output collection, or ``None`` (the operator keeps none:
    its output is derived from its inputs when needed): the operator's ``history_trace``
    hook, with every worker's shard when the flow runs on several
    (:meth:`Dataflow.history_trace`)."""
    return op.flow.history_trace(op)


def encode_value(value, kind, interner):
    """The engine code of one decoded field of kind ``kind``, or ``None`` if no record of the
    flow can hold it (an object never interned, a non-number in a numeric column)."""
    if kind == OBJECT:
        return interner.code(value)
    if isinstance(value, (str, bytes, tuple)) or value is None:
        return None
    try:
        if kind == FLOAT:
            return float(value)
        if kind == BOOL:
            return int(bool(value))
        as_int = int(value)
        return as_int if as_int == value else None
    except (TypeError, ValueError, OverflowError):
        return None


def _decode_rows(rows, kinds, interner, depth_skip: int = 1):
    """``[(record, inner time, diff)]`` of gathered trace rows."""
    if not len(rows.diffs):
        return []
    cols = [decode_column(c, k, interner).tolist() for c, k in zip(rows.cols, kinds)]
    records = list(zip(*cols))
    times = [tuple(t) for t in rows.times[:, depth_skip:].tolist()]
    return list(zip(records, times, rows.diffs.tolist()))


def read(trace, interner, conjunctions, test=None) -> list:
    """The updates of ``trace`` matching any of ``conjunctions`` (each a tuple of
    ``(column, decoded value)`` pairs; ``None`` means all updates): ``[(record, inner time,
    diff)]``; ``test(record)`` is the conjunctions' test when the caller keeps one.  A
    conjunction fixing every key field is a key lookup; one fixing another field
    scans that field (:meth:`Trace.rows_where`); an empty one reads everything."""
    kinds = trace.kinds
    if kinds is None:
        return []
    arity = len(kinds)
    nkey = trace.nkey or arity
    if conjunctions is None or any(not c for c in conjunctions):
        return _decode_rows(trace.all_rows(), kinds, interner)
    by_key, by_column = [], {}
    for conj in conjunctions:
        fixed = dict(conj)
        if any(j >= arity for j in fixed):
            continue
        codes = {j: encode_value(v, kinds[j], interner) for j, v in fixed.items()}
        if any(c is None for c in codes.values()):
            continue  # a value no record of this trace can hold
        if all(j in fixed for j in range(nkey)):
            by_key.append(tuple(codes[j] for j in range(nkey)))
        else:
            j = min(fixed)
            by_column.setdefault(j, set()).add(codes[j])
    out = []
    if by_key:
        cols = [np.array([k[j] for k in by_key],
                         dtype=np.float64 if kinds[j] == FLOAT else np.int64)
                for j in range(nkey)]
        wanted = np.unique(key_code(cols, kinds[:nkey], nkey))
        out.extend(_decode_rows(trace.gather(wanted), kinds, interner))
    for j, codes in by_column.items():
        out.extend(_decode_rows(trace.rows_where(j, sorted(codes)), kinds, interner))
    if test is None:
        test = matcher(frozenset(conjunctions))
    matched = [u for u in out if test(u[0])]
    if by_key and by_column:  # a row found both ways counts once
        matched = list(dict.fromkeys(matched))
    return matched


def read_keys(trace, interner, keys) -> dict:
    """``{key: [(record, inner time, diff)]}`` for each key (a tuple of decoded values of the
    trace's key fields) in one lookup; a key no record of the trace can hold reads empty."""
    out = {key: [] for key in keys}
    kinds = trace.kinds
    if kinds is None or not out:
        return out
    nkey = trace.nkey or len(kinds)
    wanted = []
    for key in out:
        codes = [encode_value(v, kinds[j], interner) for j, v in enumerate(key)]
        if len(key) == nkey and None not in codes:
            wanted.append(codes)
    if not wanted:
        return out
    cols = [np.array([k[j] for k in wanted], dtype=np.float64 if kinds[j] == FLOAT else np.int64)
            for j in range(nkey)]
    codes = np.unique(key_code(cols, kinds[:nkey], nkey))
    for update in _decode_rows(trace.gather(codes), kinds, interner):
        rows = out.get(update[0][:nkey])
        if rows is not None:
            rows.append(update)
    return out


class KeyIndex:
    """One trace's updates sorted by key code, decoded, for reading many keys one at a time
    (a path's steps read one node at a time: each :meth:`Trace.gather` of one key searches
    every batch of the spine and decodes a few rows, about 0.2 ms; here a key is a binary
    search and a slice).  Built from the trace as it is (an epoch's state: explanations
    keep it only for the epoch); ``rows`` says its size (numpy arrays, about 40 bytes a row
    plus the decoded objects of object columns)."""

    def __init__(self, trace, interner):
        self.kinds = tuple(trace.kinds) if trace.kinds is not None else None
        self.nkey = trace.nkey or len(self.kinds or ())
        rows = trace.all_rows() if self.kinds is not None else None
        if rows is None or not len(rows.diffs):
            self.rows, self.codes = 0, np.zeros(0, dtype=np.int64)
            return
        order = np.argsort(rows.keycode, kind="stable")   # gather's order within a key
        self.codes = rows.keycode[order]
        self.cols = [decode_column(c[order], k, interner) for c, k in zip(rows.cols, self.kinds)]
        self.times = [c for c in rows.times[order, 1:].T]      # one array per coordinate
        self.diffs = rows.diffs[order]
        self.rows = len(order)
        self.interner = interner
        # a one-field integer key's code is its engine code: each key's rows found by a dict
        self.ranges = None
        if self.nkey == 1 and self.kinds[0] != FLOAT:
            starts = np.flatnonzero(np.diff(self.codes, prepend=self.codes[0] - 1))
            ends = np.append(starts[1:], len(order))
            self.ranges = dict(zip(self.codes[starts].tolist(), zip(starts.tolist(),
                                                                    ends.tolist())))

    def read_keys(self, keys) -> dict:
        """:func:`read_keys` of this trace, from the index."""
        out = {key: [] for key in keys}
        if not self.rows or not out:
            return out
        kinds, nkey = self.kinds, self.nkey
        wanted = []
        for key in out:
            codes = [encode_value(v, kinds[j], self.interner) for j, v in enumerate(key)]
            if len(key) == nkey and None not in codes:
                wanted.append(codes)
        if not wanted:
            return out
        if self.ranges is not None:      # a code stands for one key: its rows are the key's
            for key, (code,) in zip(out, wanted) if len(wanted) == len(out) else ():
                bounds = self.ranges.get(code)
                if bounds is not None:
                    out[key] = self._rows(*bounds)
            if len(wanted) == len(out):
                return out
        cols = [np.array([k[j] for k in wanted], dtype=np.float64 if kinds[j] == FLOAT else np.int64)
                for j in range(nkey)]
        codes = np.unique(key_code(cols, kinds[:nkey], nkey))
        for a, b in zip(np.searchsorted(self.codes, codes, side="left").tolist(),
                        np.searchsorted(self.codes, codes, side="right").tolist()):
            for update in self._rows(a, b):   # (a hashed code may stand for several keys)
                rows = out.get(update[0][:nkey])
                if rows is not None:
                    rows.append(update)
        return out

    def _rows(self, a: int, b: int) -> list:
        """``[(record, inner time, diff)]`` of the sorted rows ``a:b``."""
        records = list(zip(*[c[a:b].tolist() for c in self.cols]))
        times = list(zip(*[c[a:b].tolist() for c in self.times]))
        if not self.times:
            times = [()] * (b - a)
        return list(zip(records, times, self.diffs[a:b].tolist()))


def kinds_of(op):
    """The kinds of ``op``'s output fields when the graph tells them without running anything
    (a trace, or a trace upstream through operators that keep or pick fields: each
    operator's ``known_kinds`` hook), else ``None``."""
    trace = op.kept_trace()
    if trace is not None and trace.kinds is not None:
        return tuple(trace.kinds)
    return op.known_kinds(kinds_of)


__all__ = ["INF", "INT", "FLOAT", "BOOL", "OBJECT", "trace_of", "read", "read_keys", "KeyIndex",
           "encode_value", "kinds_of"]
