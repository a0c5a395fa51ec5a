"""Linear operators: each output update depends on one input update, so they work batch by
batch on whole columns (map, filter, project, concat, negate, ...) with no state.

Row-wise user functions (``map``, ``flat_map``, ``filter``) are the convenient path: records
are decoded to Python tuples, the function runs per record, results are encoded back.  The
column-wise variants (``map_columns``, ``filter_columns``, ``project``) are the fast path."""
from __future__ import annotations

import numpy as np

from .. import tuning
from ..batch import Batch, concat_batches
from ..columns import (BOOL, FLOAT, INT, as_record, columns_of, decode_column, decode_rows,
                       encode_column, encode_rows, user_form)
from ..errors import OperatorError, InputError
from ..budget import check_pending
from .base import Operator


def _describe(fn) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def call_user(op: Operator, fn, rows, what: str = "record"):
    """Apply ``fn`` to every row; a raising function becomes an OperatorError naming the row."""
    out = []
    append = out.append
    it = iter(rows)
    row = None
    try:
        for row in it:
            append(fn(row))
    except Exception as err:
        raise OperatorError(f"{op.label}: {_describe(fn)} raised {type(err).__name__}: {err} "
                            f"on {what} {row!r}", operator=op.label, row=row) from err
    return out


class UserFunctionOperator(Operator):
    """An operator that applies a user function ``fn`` to its one input."""

    def __init__(self, scope, up, fn, name=None):
        super().__init__(scope, [up], name)
        self.fn = fn

    def decoded_columns(self, b: Batch) -> list:
        """The batch's columns as user-facing numpy arrays (for column-wise functions)."""
        interner = self.flow.interner
        return [decode_column(c, k, interner) for c, k in zip(b.cols, b.kinds)]

    def copy_into(self, scope, inputs):
        return type(self)(scope, inputs[0], self.fn, self.name)


class MappingOperator(UserFunctionOperator):
    """An operator mapping each record to records by a user function (``map``,
    ``flat_map``, ``map_columns``).  A function cannot be inverted, so explanations evaluate
    it forward over the input's records (:meth:`images`) and look up which map to a record."""

    shown_in_derivations = True

    def images(self, records: list) -> list:  # pragma: no cover - abstract
        """What each of ``records`` (decoded tuples) maps to: a list per record of
        ``(output record, how many times)`` pairs (a record may appear more than once)."""
        raise NotImplementedError

    def known_kinds(self, kinds_of):
        return None

    def explain_present(self, tracer, step, rec, t, sign):
        hist = tracer.hist
        counts = hist.preimages(self).get(rec, {})
        cands = hist.content(self.inputs[0], hist.record_pattern(counts), t) if counts else {}
        return [tracer.linear_choice(step, self, rec, t, sign, cands, counts)]

    def explain_exact(self, tracer, step, pattern, t, content):
        hist, up = tracer.hist, self.inputs[0]
        xs = {x for y, into in hist.preimages(self).items()
              if hist.matches(y, pattern) for x in into}
        hit = list(hist.content(up, hist.record_pattern(sorted(xs, key=repr)), t)) \
            if xs else []
        return [("E", up, hist.record_pattern(hit), t)] if hit else []

    def derive_history(self, hist, pattern):
        return hist.mapped(self, pattern)


class Map(MappingOperator):
    kind = "map"
    eager = True  # (see Operator.eager)
    fusable = True

    def images(self, records):
        fn = self.fn
        return [[(as_record(fn(user_form(x))), 1)] for x in records]

    def process(self, t, inputs):
        b = inputs[0]
        rows = decode_rows(b.cols, b.kinds, self.flow.interner)
        out = call_user(self, self.fn, rows)
        cols, kinds = encode_rows(out, self.flow.interner, f"{self.label} output")
        self.emit(t, Batch(cols, kinds, b.diffs))


class FlatMap(MappingOperator):
    kind = "flat_map"
    eager = True  # (see Operator.eager)
    fusable = True

    def images(self, records):
        fn = self.fn
        return [[(as_record(y), 1) for y in fn(user_form(x))] for x in records]

    def process(self, t, inputs):
        b = inputs[0]
        rows = decode_rows(b.cols, b.kinds, self.flow.interner)
        outs = call_user(self, lambda r: list(self.fn(r)), rows)
        counts = np.fromiter(map(len, outs), dtype=np.int64, count=len(outs))
        check_pending(self, int(counts.sum()), "produce")
        flat = [x for o in outs for x in o]
        if not flat:
            return
        cols, kinds = encode_rows(flat, self.flow.interner, f"{self.label} output")
        self.emit(t, Batch(cols, kinds, np.repeat(b.diffs, counts)))


class Filter(UserFunctionOperator):
    kind = "filter"
    eager = True  # (see Operator.eager)
    fusable = True
    passes_records = shown_in_derivations = True

    def derive_history(self, hist, pattern):
        fn = self.fn
        return {(rec, t): d for (rec, t), d in hist.updates(self.inputs[0], pattern).items()
                if fn(user_form(rec))}

    def process(self, t, inputs):
        b = inputs[0]
        rows = decode_rows(b.cols, b.kinds, self.flow.interner)
        keep = np.array(call_user(self, lambda r: bool(self.fn(r)), rows), dtype=bool)
        self.emit(t, b.take(keep))


def encode_arrays(op, arrays, interner):
    """Encode the numpy columns a column-wise function returned."""
    cols, kinds = [], []
    for j, arr in enumerate(arrays):
        arr = np.asarray(arr)
        if arr.dtype.kind in "iu":
            kinds.append(INT)
            cols.append(arr.astype(np.int64, copy=False))
        elif arr.dtype.kind == "f":
            kinds.append(FLOAT)
            cols.append(arr.astype(np.float64, copy=False))
        elif arr.dtype.kind == "b":
            kinds.append(BOOL)
            cols.append(arr.astype(np.int64))
        else:
            kind, col = _encode_object(op, arr, j, interner)
            kinds.append(kind)
            cols.append(col)
    return cols, kinds


def _encode_object(op, arr, j, interner):
    return encode_column(list(arr), interner, f"{op.label} output", j)


class MapColumns(MappingOperator):
    """Column-wise map: ``fn(*columns) -> column or tuple of columns`` (numpy arrays)."""

    kind = "map_columns"
    eager = True  # (see Operator.eager)
    fusable = True

    def images(self, records):
        if not records:
            return []
        out = self.fn(*columns_of(records))
        if not isinstance(out, (tuple, list)):
            out = (out,)
        return [[(img, 1)] for img in zip(*[np.asarray(a).tolist() for a in out])]

    def process(self, t, inputs):
        b = inputs[0]
        interner = self.flow.interner
        try:
            out = self.fn(*self.decoded_columns(b))
        except Exception as err:
            raise OperatorError(f"{self.label}: {_describe(self.fn)} raised "
                                f"{type(err).__name__}: {err} on a batch of {len(b)} records "
                                f"(first {decode_rows(b.take(slice(0, 1)).cols, b.kinds, interner)[0]!r})",
                                operator=self.label) from err
        if not isinstance(out, (tuple, list)):
            out = (out,)
        for arr in out:
            if len(arr) != len(b):
                raise OperatorError(f"{self.label}: {_describe(self.fn)} returned a column of "
                                    f"{len(arr)} values for {len(b)} records", operator=self.label)
        cols, kinds = encode_arrays(self, out, interner)
        self.emit(t, Batch(cols, kinds, b.diffs))


class FilterColumns(UserFunctionOperator):
    """Column-wise filter: ``predicate(*columns) -> boolean array``."""

    kind = "filter_columns"
    eager = True  # (see Operator.eager)
    fusable = True
    passes_records = shown_in_derivations = True

    def derive_history(self, hist, pattern):
        ups = hist.updates(self.inputs[0], pattern)
        if not ups:
            return {}
        items = list(ups.items())
        keep = np.asarray(self.fn(*columns_of([rec for (rec, _), _ in items])), dtype=bool)
        return {k: d for (k, d), ok in zip(items, keep.tolist()) if ok}

    def process(self, t, inputs):
        b = inputs[0]
        try:
            keep = np.asarray(self.fn(*self.decoded_columns(b)), dtype=bool)
        except Exception as err:
            raise OperatorError(f"{self.label}: {_describe(self.fn)} raised "
                                f"{type(err).__name__}: {err}", operator=self.label) from err
        self.emit(t, b.take(keep))


class Project(Operator):
    """Select and reorder columns by index: no decoding, pure column moves."""

    kind = "project"
    eager = True  # (see Operator.eager)
    fusable = True

    def __init__(self, scope, up, columns, name=None):
        super().__init__(scope, [up], name)
        self.columns = tuple(columns)

    def process(self, t, inputs):
        b = inputs[0]
        try:
            cols = [b.cols[j] for j in self.columns]
            kinds = [b.kinds[j] for j in self.columns]
        except IndexError:
            raise InputError(f"{self.label}: project{self.columns} on records of "
                             f"{b.arity} fields") from None
        if self.columns == tuple(range(len(self.columns))) and tuning.FAST_PATHS:
            # a prefix of the fields keeps the input's order: the whole record (the same
            # batch, consolidated as it was) or sorted runs (summed by a linear merge, not a
            # sort: the CC 3.4M load's project(0, 1) re-sorted 3.4M sorted edges)
            if len(self.columns) == b.arity:
                self.emit(t, b)
                return
            self.emit(t, Batch(cols, kinds, b.diffs,
                               sorted_runs=b.consolidated or b.sorted_runs))
            return
        self.emit(t, Batch(cols, kinds, b.diffs))

    # -- hooks of the analyses (see Operator) -------------------------------------------------
    def pushed(self, pattern):
        """The input pattern whose records project into output pattern ``pattern``
        (``None``: all)."""
        if pattern is None:
            return None
        cols = self.columns
        out = set()
        for conj in pattern:
            fixed: dict = {}
            ok = True
            for j, v in conj:
                src = cols[j] if j < len(cols) else None
                if src is None or (src in fixed and fixed[src] != v):
                    ok = False
                    break
                fixed[src] = v
            if ok:
                out.add(tuple(sorted(fixed.items())))
        return frozenset(out) if () not in out else None

    def known_kinds(self, kinds_of):
        up = kinds_of(self.inputs[0])
        return None if up is None else tuple(up[j] for j in self.columns)

    def explain_present(self, tracer, step, rec, t, sign):
        cols = self.columns
        cands = tracer.hist.content(self.inputs[0],
                                    self.pushed(tracer.hist.record_pattern([rec])), t)
        counts = {x: 1 for x in cands if tuple(x[j] for j in cols) == rec}
        return [tracer.linear_choice(step, self, rec, t, sign, cands, counts)]

    def explain_exact(self, tracer, step, pattern, t, content):
        return [("E", self.inputs[0], self.pushed(pattern), t)]

    def derive_history(self, hist, pattern):
        cols = self.columns
        return hist.consolidated((tuple(rec[j] for j in cols), t, d) for (rec, t), d in
                                 hist.updates(self.inputs[0], self.pushed(pattern)).items()
                                 if hist.matches(tuple(rec[j] for j in cols), pattern))

    def copy_into(self, scope, inputs):
        return Project(scope, inputs[0], self.columns, self.name)


class Concat(Operator):
    """Multiset sum of several collections (diffs add)."""

    kind = "concat"
    eager = True  # (see Operator.eager)
    fusable = True

    def process(self, t, inputs):
        self.emit(t, concat_batches([b for b in inputs if b is not None], self.label))

    def known_kinds(self, kinds_of):
        return kinds_of(self.inputs[0])

    def explain_present(self, tracer, step, rec, t, sign):
        """One input holding the record: the one holding it earliest."""
        up = tracer.earliest(self.inputs, rec, t, sign)
        if up is None:
            raise LookupError(f"{self.label}: no input holds {rec!r}")
        return [("P", up, rec, t, sign)]

    def explain_exact(self, tracer, step, pattern, t, content):
        return [("E", up, pattern, t) for up in self.inputs]

    def derive_history(self, hist, pattern):
        out: dict = {}
        for up in self.inputs:
            for k, d in hist.updates(up, pattern).items():
                out[k] = out.get(k, 0) + d
        return {k: d for k, d in out.items() if d}

    def copy_into(self, scope, inputs):
        return Concat(scope, inputs, self.name)


class Negate(Operator):
    kind = "negate"
    eager = True  # (see Operator.eager)
    fusable = True
    shown_in_derivations = True

    def process(self, t, inputs):
        self.emit(t, inputs[0].negate())

    def known_kinds(self, kinds_of):
        return kinds_of(self.inputs[0])

    def explain_present(self, tracer, step, rec, t, sign):
        return [("P", self.inputs[0], rec, t, -sign)]

    def explain_exact(self, tracer, step, pattern, t, content):
        return [("E", self.inputs[0], pattern, t)]

    def derive_history(self, hist, pattern):
        return {k: -d for k, d in hist.updates(self.inputs[0], pattern).items()}

    def copy_into(self, scope, inputs):
        return Negate(scope, inputs, self.name)


class Consolidate(Operator):
    """Sum diffs of equal records and drop zeros (every operator's output already is)."""

    kind = "consolidate"
    fusable = True
    passes_records = presents_input = True

    def process(self, t, inputs):
        self.emit(t, inputs[0].consolidate())

    def copy_into(self, scope, inputs):
        return Consolidate(scope, inputs, self.name)


class Inspect(UserFunctionOperator):
    """Debugging tap: calls ``fn(record, time, diff)`` for each update, passes data through."""

    kind = "inspect"
    fusable = True
    passes_records = presents_input = True

    def copy_into(self, scope, inputs):
        """A replay shows nothing: the copy passes its input on without calling ``fn``."""
        return Consolidate(scope, inputs, self.name)

    def process(self, t, inputs):
        b = inputs[0].consolidate()
        shown = self.scope.describe_time(t)
        rows = decode_rows(b.cols, b.kinds, self.flow.interner)
        call_user(self, lambda rd: self.fn(rd[0], shown, rd[1]), list(zip(rows, b.diffs.tolist())),
                  what="update")
        self.emit(t, b)
