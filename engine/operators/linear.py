"""Linear operators: each output update depends on one input update, so they work batch by
batch on whole columns (map, filter, project, concat, negate, ...) with no state.

Row-wise user functions (``map``, ``flat_map``, ``filter``) are the convenient path: records
are decoded to Python tuples, the function runs per record, results are encoded back.  The
column-wise variants (``map_columns``, ``filter_columns``, ``project``) are the fast path."""
from __future__ import annotations

import numpy as np

from .. import tuning
from ..batch import Batch, concat_batches
from ..columns import decode_rows, decode_column, encode_rows, INT, FLOAT, BOOL
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


class Map(UserFunctionOperator):
    kind = "map"
    fusable = True

    def process(self, t, inputs):
        b = inputs[0]
        rows = decode_rows(b.cols, b.kinds, self.flow.interner)
        out = call_user(self, self.fn, rows)
        cols, kinds = encode_rows(out, self.flow.interner, f"{self.label} output")
        self.emit(t, Batch(cols, kinds, b.diffs))


class FlatMap(UserFunctionOperator):
    kind = "flat_map"
    fusable = True

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
    fusable = True

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
    from ..columns import encode_column

    return encode_column(list(arr), interner, f"{op.label} output", j)


class MapColumns(UserFunctionOperator):
    """Column-wise map: ``fn(*columns) -> column or tuple of columns`` (numpy arrays)."""

    kind = "map_columns"
    fusable = True

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
    fusable = True

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


class Concat(Operator):
    """Multiset sum of several collections (diffs add)."""

    kind = "concat"
    fusable = True

    def process(self, t, inputs):
        self.emit(t, concat_batches([b for b in inputs if b is not None], self.label))


class Negate(Operator):
    kind = "negate"
    fusable = True

    def process(self, t, inputs):
        self.emit(t, inputs[0].negate())


class Consolidate(Operator):
    """Sum diffs of equal records and drop zeros (every operator's output already is)."""

    kind = "consolidate"
    fusable = True

    def process(self, t, inputs):
        self.emit(t, inputs[0].consolidate())


class Inspect(UserFunctionOperator):
    """Debugging tap: calls ``fn(record, time, diff)`` for each update, passes data through."""

    kind = "inspect"
    fusable = True

    def process(self, t, inputs):
        b = inputs[0].consolidate()
        shown = self.scope.describe_time(t)
        rows = decode_rows(b.cols, b.kinds, self.flow.interner)
        call_user(self, lambda rd: self.fn(rd[0], shown, rd[1]), list(zip(rows, b.diffs.tolist())),
                  what="update")
        self.emit(t, b)
