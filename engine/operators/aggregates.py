"""Reduce logics: given the accumulated input of many keys at one time, the new output.

Each logic has ``evaluate(accumulations, op) -> (cols, kinds, weights)`` where the output
records start with the key columns.  Built-ins (count, sum, min, max, distinct, top-k and the
multiset set operations) are vectorised over all keys at once with sorts and segmented
reductions; ``UserReduce`` and ``UserCogroup`` call a Python function per key.

Count, sum, min, max and the thresholds (distinct) also have ``small(accumulations, nkey)``
for the reduce's Python path: the same function on a few keys' integer records given as
``{record tuple: weight}``, returning ``{record: weight}`` (or ``None`` to decline).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import tuning
from ..batch import row_boundaries, sort_order, unify_kinds
from ..columns import OBJECT, INT, FLOAT, BOOL, KIND_NAMES, decode_rows, encode_rows
from ..errors import SchemaError, OperatorError
from ..kernels.spec import COUNT, DISTINCT as DISTINCT_CODE, GIVEN, MAX, MIN, SUM
from .linear import _describe

_ONE = np.int64(1)


def group_starts(key_cols) -> np.ndarray:
    return np.flatnonzero(row_boundaries(key_cols))


def _empty(kinds):
    return [np.zeros(0, dtype=np.float64 if k == FLOAT else np.int64) for k in kinds], tuple(kinds), \
        np.zeros(0, dtype=np.int64)


def _empty_keyed(a, nkey, value_kind=INT):
    """No output rows, with the kinds of ``(key..., value)``."""
    return _empty((a.kinds[:nkey] if a else (INT,) * nkey) + (value_kind,))


def _rank(col, kind, interner):
    """Sort key respecting the values' order (object codes are not ordered by value)."""
    if kind != OBJECT:
        return col
    values = interner.decode(col)
    try:
        codes, _ = pd.factorize(values, sort=True)
    except TypeError as err:
        raise SchemaError(f"values {values[:3].tolist()} cannot be ordered: {err}") from None
    return codes


def _explain_kept(tracer, step, op, rec, t, what: str):
    """A record a reduce keeps from its group (a min, a max, one of a top k, a distinct
    record) is explained by itself upstream: the rest of its group is not needed."""
    up = op.inputs[0]
    group = tracer.hist.content(up, tracer.hist.key_pattern([rec], op.nkey or len(rec)), t)
    step.note = (f"the {what} of {len(group)} record(s) of its group" if op.nkey
                 else "present upstream")
    return [("P", up, rec, t, 1)]


class _PerKey:
    """An aggregate over one input's accumulated groups: empty input gives empty output,
    otherwise :meth:`aggregate` sees the accumulation ``a`` (sorted by key) and the key width."""

    def evaluate(self, accs, op):
        a = accs[0]
        if a is None or not len(a):
            return self.empty(a, op.nkey)
        return self.aggregate(a, op.nkey, op)

    def empty(self, a, nkey):
        return _empty_keyed(a, nkey)


class Count(_PerKey):
    """``(key, number of records with that key)``, multiplicities counted."""

    name = "count"
    kernel_code = COUNT

    def aggregate(self, a, nkey, op):
        starts = group_starts(a.cols[:nkey])
        totals = np.add.reduceat(a.weights, starts)
        keep = totals != 0
        pick = starts[keep]
        cols = [c[pick] for c in a.cols[:nkey]] + [totals[keep]]
        return cols, a.kinds[:nkey] + (INT,), np.ones(len(pick), dtype=np.int64)

    @staticmethod
    def small(accs, nkey):
        totals: dict = {}
        for rec, w in accs[0].items():
            key = rec[:nkey]
            totals[key] = totals.get(key, 0) + w
        return {key + (n,): 1 for key, n in totals.items() if n}


class Sum(_PerKey):
    """``(key, sum of value * multiplicity)`` for the single value column."""

    name = "sum"
    kernel_code = SUM

    def aggregate(self, a, nkey, op):
        if len(a.cols) != nkey + 1 or a.kinds[nkey] not in (INT, FLOAT, BOOL):
            got = ", ".join(KIND_NAMES[k] for k in a.kinds[nkey:]) or "none"
            raise SchemaError(f"{op.label}: sum needs records (key, number); the value columns "
                              f"here are: {got}")
        starts = group_starts(a.cols[:nkey])
        kind = FLOAT if a.kinds[nkey] == FLOAT else INT
        sums = np.add.reduceat(a.cols[nkey] * a.weights, starts)
        cols = [c[starts] for c in a.cols[:nkey]] + [sums]
        return cols, a.kinds[:nkey] + (kind,), np.ones(len(starts), dtype=np.int64)

    @staticmethod
    def small(accs, nkey):
        sums: dict = {}
        for rec, w in accs[0].items():
            if len(rec) != nkey + 1:
                return None  # the general path names the error
            key = rec[:nkey]
            sums[key] = sums.get(key, 0) + rec[nkey] * w
        return {key + (total,): 1 for key, total in sums.items()}


class Extreme(_PerKey):
    """``(key, smallest value)`` (or largest): values with positive multiplicity only."""

    def __init__(self, largest: bool):
        self.largest = largest
        self.name = "max" if largest else "min"
        self.kernel_code = MAX if largest else MIN

    def explain_present(self, tracer, step, op, rec, t, sign):
        """(The reduce's explanation hook, see :meth:`Reduce.explain_present`.)"""
        return _explain_kept(tracer, step, op, rec, t,
                             "largest" if self.largest else "smallest")

    def empty(self, a, nkey):
        return _empty(a.kinds if a else (INT,) * (nkey + 1))

    def aggregate(self, a, nkey, op):
        pos = a.weights > 0
        cols = [c[pos] for c in a.cols]
        if not len(cols[0]):
            return _empty(a.kinds)
        if len(cols) == nkey:
            raise SchemaError(f"{op.label}: {self.name} needs records (key, value)")
        if OBJECT in a.kinds[nkey:] or not tuning.FAST_PATHS:
            interner = op.flow.interner
            ranks = [_rank(c, k, interner) for c, k in zip(cols[nkey:], a.kinds[nkey:])]
            order = sort_order(cols[:nkey] + ranks)
            cols = [c[order] for c in cols]
        # accumulations come sorted by (key, value...): the first row of a key is its
        # smallest value, the last its largest
        change = row_boundaries(cols[:nkey])
        if self.largest:
            pick = np.flatnonzero(np.append(change[1:], True))
        else:
            pick = np.flatnonzero(change)
        return [c[pick] for c in cols], a.kinds, np.ones(len(pick), dtype=np.int64)

    def small(self, accs, nkey):
        best: dict = {}
        largest = self.largest
        for rec, w in accs[0].items():
            if w > 0:
                if len(rec) == nkey:
                    return None  # the general path names the error
                key = rec[:nkey]
                held = best.get(key)
                if held is None or (rec > held if largest else rec < held):
                    best[key] = rec
        return {rec: 1 for rec in best.values()}


class Threshold:
    """Per whole record: new multiplicity ``fn(accumulated multiplicity)`` (vectorised)."""

    def __init__(self, fn, name: str):
        self.fn, self.name = fn, name

    @property
    def kernel_code(self) -> int:
        return DISTINCT_CODE if self is DISTINCT else GIVEN

    def explain_present(self, tracer, step, op, rec, t, sign):
        if self is DISTINCT and sign > 0:
            return _explain_kept(tracer, step, op, rec, t, "kept")
        return None

    def evaluate(self, accs, op):
        a = accs[0]
        if a is None or not len(a):
            return _empty(a.kinds if a else (INT,) * op.nkey)
        try:
            w = np.asarray(self.fn(a.weights))
        except Exception as err:
            first = decode_rows([c[:1] for c in a.cols], a.kinds, op.flow.interner)[0]
            raise OperatorError(f"{op.label}: {_describe(self.fn)} raised {type(err).__name__}: "
                                f"{err} on the multiplicities of {len(a)} records (first "
                                f"{first!r} with multiplicity {int(a.weights[0])})",
                                operator=op.label, row=first) from err
        if w.shape != a.weights.shape or w.dtype.kind not in "iub":
            raise OperatorError(f"{op.label}: {_describe(self.fn)} must return one integer per "
                                f"multiplicity (got {w.dtype} of shape {w.shape} for "
                                f"{len(a)} records)", operator=op.label)
        w = w.astype(np.int64, copy=False)
        keep = w != 0
        return [c[keep] for c in a.cols], a.kinds, w[keep]

    def small(self, accs, nkey):
        acc = accs[0]
        if not acc:
            return {}
        if self is DISTINCT:
            return {rec: 1 for rec, w in acc.items() if w > 0}
        records = list(acc)
        try:
            w = np.asarray(self.fn(np.array([acc[r] for r in records], dtype=np.int64)))
        except Exception:
            return None  # the general path raises the error, naming the record
        if w.shape != (len(records),) or w.dtype.kind not in "iub":
            return None
        return {r: int(v) for r, v in zip(records, w.tolist()) if v}


DISTINCT = Threshold(lambda w: (w > 0).astype(np.int64), "distinct")


class TopK(_PerKey):
    """Per key, the ``k`` largest (or smallest) records by their value columns, multiplicities
    counted: a record of multiplicity 3 fills three places."""

    def __init__(self, k: int, largest: bool = True):
        if k < 1:
            raise ValueError(f"top_k needs k >= 1, got {k}")
        self.k, self.largest = int(k), largest
        self.name = f"top_{k}"

    def explain_present(self, tracer, step, op, rec, t, sign):
        return _explain_kept(tracer, step, op, rec, t, "kept")

    def empty(self, a, nkey):
        return _empty(a.kinds if a else (INT,) * (nkey + 1))

    def aggregate(self, a, nkey, op):
        pos = a.weights > 0
        cols, weights = [c[pos] for c in a.cols], a.weights[pos]
        if not len(weights):
            return _empty(a.kinds)
        interner = op.flow.interner
        ranks = [_rank(c, k, interner) for c, k in zip(cols[nkey:], a.kinds[nkey:])]
        if self.largest:
            ranks = [-r for r in ranks]
        order = sort_order(cols[:nkey] + ranks)
        cols, weights = [c[order] for c in cols], weights[order]
        starts = group_starts(cols[:nkey])
        group = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(weights))))
        csum = np.cumsum(weights)
        before = csum - weights - (csum[starts] - weights[starts])[group]
        take = np.clip(self.k - before, 0, weights)
        keep = take > 0
        return [c[keep] for c in cols], a.kinds, take[keep]


class SetOperation:
    """Multiset union (max), intersect (min) or except (``max(a - b, 0)``) of whole records."""

    def __init__(self, name, fn):
        self.name, self.fn = name, fn

    def explain_present(self, tracer, step, op, rec, t, sign):
        """A union's record by the side with the larger multiplicity, an intersection's by
        both sides (or, absent, by the side missing it); anything else by whole groups."""
        hist, ins = tracer.hist, op.inputs
        pattern = hist.record_pattern([rec])
        a = hist.content(ins[0], pattern, t)[rec]
        b = hist.content(ins[1], pattern, t)[rec]
        if self.name == "union" and sign > 0:
            up = tracer.earliest([up for up, m in zip(ins, (a, b)) if m > 0], rec, t, 1)
            if up is None:
                raise LookupError(f"{op.label}: no input holds {rec!r}")
            step.note = "the larger multiplicity of the two sides"
            return [("P", up, rec, t, 1)]
        if self.name == "intersect" and sign > 0:
            step.note = "present on both sides"
            return [("P", ins[0], rec, t, 1), ("P", ins[1], rec, t, 1)]
        if self.name == "intersect":
            return [("P", ins[0] if a < 0 else ins[1], rec, t, -1)]
        return None

    def evaluate(self, accs, op):
        a, b = accs
        present = [x for x in (a, b) if x is not None]
        if not present:
            return _empty((INT,) * op.nkey)
        kinds = unify_kinds([x.kinds for x in present], op.label)
        parts_a = a if a is not None else None
        na = len(a) if a is not None else 0
        nb = len(b) if b is not None else 0
        if na + nb == 0:
            return _empty(kinds)
        cols = [np.concatenate(([a.cols[j]] if na else []) + ([b.cols[j]] if nb else []))
                for j in range(len(kinds))]
        wa = np.concatenate([parts_a.weights if na else np.zeros(0, np.int64),
                             np.zeros(nb, np.int64)])
        wb = np.concatenate([np.zeros(na, np.int64), b.weights if nb else np.zeros(0, np.int64)])
        order = sort_order(cols)
        cols = [c[order] for c in cols]
        starts = group_starts(cols)
        w = self.fn(np.add.reduceat(wa[order], starts), np.add.reduceat(wb[order], starts))
        keep = w != 0
        return [c[starts][keep] for c in cols], kinds, w[keep]


UNION = SetOperation("union", np.maximum)
INTERSECT = SetOperation("intersect", np.minimum)
EXCEPT = SetOperation("except", lambda a, b: np.maximum(a - b, 0))


def _split(row, nkey):
    """(key, value) of a decoded record: scalars for one column, tuples otherwise."""
    if not isinstance(row, tuple):
        return row, None
    key = row[0] if nkey == 1 else row[:nkey]
    rest = row[nkey:]
    value = rest[0] if len(rest) == 1 else (rest if rest else None)
    return key, value


def _groups(acc, op):
    """Yield ``(key, [(value, multiplicity), ...])`` per key of an accumulation."""
    if acc is None or not len(acc):
        return
    rows = decode_rows(acc.cols, acc.kinds, op.flow.interner)
    weights = acc.weights.tolist()
    starts = group_starts(acc.cols[:op.nkey]).tolist() + [len(rows)]
    for s, e in zip(starts[:-1], starts[1:]):
        key, _ = _split(rows[s], op.nkey)
        yield key, [(_split(rows[i], op.nkey)[1], weights[i]) for i in range(s, e)]


def _encode_output(op, fn, out_rows, weights, kinds_hint):
    if not out_rows:
        return _empty(kinds_hint)
    cols, kinds = encode_rows(out_rows, op.flow.interner, f"{op.label} output")
    return list(cols), kinds, np.asarray(weights, dtype=np.int64)


def _collect(op, fn, key, produced, out_rows, weights, args):
    try:
        for item in produced:
            value, mult = item
            krow = key if isinstance(key, tuple) else (key,)
            vrow = value if isinstance(value, tuple) else ((value,) if value is not None else ())
            out_rows.append(krow + vrow)
            weights.append(int(mult))
    except (TypeError, ValueError) as err:
        raise OperatorError(f"{op.label}: {_describe(fn)} must return (value, multiplicity) "
                            f"pairs; for key {key!r} it returned {produced!r} ({err})",
                            operator=op.label, row=args) from err


class UserReduce:
    """``fn(key, [(value, multiplicity), ...]) -> [(value, multiplicity), ...]`` per key."""

    def __init__(self, fn, name="reduce"):
        self.fn, self.name = fn, name

    def evaluate(self, accs, op):
        out_rows, weights = [], []
        for key, values in _groups(accs[0], op):
            try:
                produced = list(self.fn(key, values))
            except Exception as err:
                raise OperatorError(f"{op.label}: {_describe(self.fn)} raised "
                                    f"{type(err).__name__}: {err} for key {key!r} with values "
                                    f"{values[:5]!r}", operator=op.label, row=(key, values)) from err
            _collect(op, self.fn, key, produced, out_rows, weights, (key, values))
        hint = accs[0].kinds if accs[0] is not None else (INT,)
        return _encode_output(op, self.fn, out_rows, weights, hint)


class UserCogroup:
    """``fn(key, left_values, right_values) -> [(value, multiplicity), ...]`` per key."""

    def __init__(self, fn, name="cogroup"):
        self.fn, self.name = fn, name

    def evaluate(self, accs, op):
        left = dict(_groups(accs[0], op))
        right = dict(_groups(accs[1], op))
        out_rows, weights = [], []
        for key in list(left) + [k for k in right if k not in left]:
            lv, rv = left.get(key, []), right.get(key, [])
            try:
                produced = list(self.fn(key, lv, rv))
            except Exception as err:
                raise OperatorError(f"{op.label}: {_describe(self.fn)} raised "
                                    f"{type(err).__name__}: {err} for key {key!r}",
                                    operator=op.label, row=(key, lv, rv)) from err
            _collect(op, self.fn, key, produced, out_rows, weights, (key, lv, rv))
        present = [a for a in accs if a is not None]
        hint = present[0].kinds[:op.nkey] if present else (INT,)
        return _encode_output(op, self.fn, out_rows, weights, hint)
