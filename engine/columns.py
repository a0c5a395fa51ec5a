"""Columnar encoding of records.

A record is a flat tuple of scalars (an arity-1 record is shown as the bare scalar).  Inside
the engine a batch of records is a tuple of numpy columns, one per field, each of one *kind*:

- ``"i"`` int64, ``"f"`` float64, ``"b"`` bool (stored as int64 0/1),
- ``"o"`` any other hashable value (strings, tuples, ...), interned to int64 codes by the
  dataflow's :class:`Interner` at ingestion and decoded only at the edges (views, user
  functions, pandas output).

So every engine column is numeric and every built-in operator works on whole columns.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .errors import InputError

INT, FLOAT, BOOL, OBJECT = "i", "f", "b", "o"
KIND_NAMES = {INT: "int", FLOAT: "float", BOOL: "bool", OBJECT: "object"}
_DTYPES = {INT: np.int64, FLOAT: np.float64, BOOL: np.int64, OBJECT: np.int64}


class Interner:
    """Maps hashable values to dense int64 codes and back (one per dataflow)."""

    def __init__(self) -> None:
        self._codes: dict = {}
        self._values = np.empty(256, dtype=object)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def _grow(self, need: int) -> None:
        if need > len(self._values):
            bigger = np.empty(max(need, 2 * len(self._values)), dtype=object)
            bigger[: self._n] = self._values[: self._n]
            self._values = bigger

    def intern_unique(self, uniques) -> np.ndarray:
        """Codes for a sequence of distinct hashable values (new ones get fresh codes)."""
        codes = self._codes
        out = np.empty(len(uniques), dtype=np.int64)
        self._grow(self._n + len(uniques))
        for i, value in enumerate(uniques):
            code = codes.get(value)
            if code is None:
                code = codes[value] = self._n
                self._values[self._n] = value
                self._n += 1
            out[i] = code
        return out

    def intern(self, values) -> np.ndarray:
        """Codes for a sequence of hashable values (vectorised through pandas.factorize)."""
        arr = np.empty(len(values), dtype=object)
        arr[:] = list(values) if not isinstance(values, np.ndarray) else values
        local, uniques = pd.factorize(arr, use_na_sentinel=False)
        # factorize reads None as a NaN, a new float each call (NaN != NaN): keep None
        uniques = [None if type(u) is float and u != u else u for u in uniques]
        return self.intern_unique(uniques)[local]

    def code(self, value) -> int | None:
        """The code of ``value`` if it was ever interned, else ``None`` (never adds one: a
        lookup by value, e.g. to find a record in a trace, must not grow the table).

        >>> interner = Interner(); _ = interner.intern(["a", "b"])
        >>> interner.code("b"), interner.code("zzz")
        (1, None)
        """
        try:
            return self._codes.get(value)
        except TypeError:  # unhashable: never interned
            return None

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Object array of the values behind ``codes``."""
        return self._values[: self._n][codes]

    def values_from(self, start: int) -> list:
        """The values of codes ``start``, ``start + 1``, ...: what another worker's interner
        lacks when it has the first ``start`` (interning them there gives the same codes)."""
        return list(self._values[start: self._n])


_INT_TYPES = {int, np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16, np.uint32}
_FLOAT_TYPES = {float, np.float64, np.float32}
_BOOL_TYPES = {bool, np.bool_}


def _type_name(t) -> str:
    return getattr(t, "__name__", str(t))


def encode_column(values, interner: Interner, where: str, column: int) -> tuple[str, np.ndarray]:
    """Encode one column of Python values; raise :class:`InputError` naming the bad value."""
    n = len(values)
    types = set(map(type, values))
    try:
        if types <= _INT_TYPES:
            return INT, np.fromiter(values, dtype=np.int64, count=n)
        if types <= _BOOL_TYPES:
            return BOOL, np.fromiter(values, dtype=np.int64, count=n)
        if types <= (_INT_TYPES | _FLOAT_TYPES):
            return FLOAT, np.fromiter(values, dtype=np.float64, count=n)
    except OverflowError:
        pass  # an integer beyond int64: keep it exact as an object
    _check_one_type(values, types, where, column)
    try:
        return OBJECT, interner.intern(values)
    except TypeError:
        for value in values:
            try:
                hash(value)
            except TypeError:
                raise InputError(
                    f"{where}: column {column} holds an unhashable value {value!r} "
                    f"({_type_name(type(value))}); records must be tuples of hashable scalars "
                    f"(use a tuple instead of a list)") from None
        raise


def _check_one_type(values, types: set, where: str, column: int) -> None:
    """Reject a column that mixes kinds of value (say ``'17'`` and ``17``): such keys would
    silently never match.  ``None`` may stand beside one other type."""
    real = {t for t in types if t is not type(None)}
    if len(real) <= 1 or real <= (_INT_TYPES | _FLOAT_TYPES):
        return
    first = {}
    for value in values:
        first.setdefault(type(value), value)
    sample = ", ".join(f"{first[t]!r} ({_type_name(t)})" for t in list(first)[:3])
    raise InputError(f"{where}: column {column} mixes types: {sample}; "
                     f"convert the column to one type first")


def encode_rows(rows, interner: Interner, where: str, arity: int | None = None):
    """Encode a list of records (tuples, or scalars for arity 1) to ``(cols, kinds)``."""
    rows = rows if isinstance(rows, list) else list(rows)
    if not rows:
        return (), ()
    row_types = set(map(type, rows))
    if all(issubclass(t, tuple) for t in row_types):
        lengths = set(map(len, rows))
        width = arity if arity is not None else len(rows[0])
        if lengths != {width}:
            bad = next(i for i, r in enumerate(rows) if len(r) != width)
            raise InputError(f"{where}: row {bad} {rows[bad]!r} has {len(rows[bad])} fields, "
                             f"expected {width}")
        if width == 0:
            raise InputError(f"{where}: row 0 is an empty tuple; records need at least one field")
        columns = list(zip(*rows))
    elif not any(issubclass(t, tuple) for t in row_types):
        if arity not in (None, 1):
            raise InputError(f"{where}: row 0 {rows[0]!r} is a single value, expected a tuple "
                             f"of {arity} fields")
        columns = [rows]
    else:
        bad = next(i for i, r in enumerate(rows) if not isinstance(r, tuple))
        raise InputError(f"{where}: row {bad} {rows[bad]!r} is not a tuple like the rows before it")
    kinds, cols = [], []
    for j, values in enumerate(columns):
        kind, col = encode_column(values, interner, where, j)
        kinds.append(kind)
        cols.append(col)
    return tuple(cols), tuple(kinds)


def encode_frame(frame: pd.DataFrame, interner: Interner, where: str):
    """Encode the columns of a DataFrame (vectorised: no per-row Python)."""
    kinds, cols = [], []
    for j, name in enumerate(frame.columns):
        series = frame[name]
        dtype = series.dtype
        if dtype.kind in "iu":
            kinds.append(INT)
            cols.append(series.to_numpy(dtype=np.int64))
        elif dtype.kind == "b":
            kinds.append(BOOL)
            cols.append(series.to_numpy(dtype=np.int64))
        elif dtype.kind == "f":
            kinds.append(FLOAT)
            cols.append(series.to_numpy(dtype=np.float64))
        else:
            values = series.to_numpy(dtype=object)
            try:
                local, uniques = pd.factorize(values, use_na_sentinel=False)
            except TypeError:
                kind, col = encode_column(list(values), interner, where, j)  # names the bad value
                kinds.append(kind)
                cols.append(col)
                continue
            uniques = list(uniques)
            # the distinct values decide the kind (an object column may hold plain numbers)
            kind, codes = encode_column(uniques, interner, f"{where} (column {name!r})", j)
            kinds.append(kind)
            cols.append(codes[local])
    return tuple(cols), tuple(kinds)


def decode_column(col: np.ndarray, kind: str, interner: Interner) -> np.ndarray:
    """Numpy column of user-facing values."""
    if kind == OBJECT:
        return interner.decode(col)
    if kind == BOOL:
        return col.astype(bool)
    return col


def decode_rows(cols, kinds, interner: Interner) -> list:
    """Python records (tuples; bare scalars for arity 1)."""
    lists = [decode_column(c, k, interner).tolist() for c, k in zip(cols, kinds)]
    if len(lists) == 1:
        return lists[0]
    return list(zip(*lists))


def key_code(cols, kinds, nkey: int) -> np.ndarray:
    """One int64 per row standing for the first ``nkey`` columns, used to index and look up.

    One column: the value itself (float bits for floats).  Several: a 64-bit hash mix; rare
    collisions are harmless because lookups re-check the key columns themselves.  ``nkey == 0``
    means the whole record.
    """
    nkey = nkey or len(cols)
    if nkey == 1:
        return _as_code(cols[0], kinds[0])
    h = np.full(len(cols[0]), 0x9E3779B97F4A7C15, dtype=np.uint64)
    for j in range(nkey):
        h = _mix(h ^ _as_code(cols[j], kinds[j]).view(np.uint64))
    return h.view(np.int64)


def _as_code(col: np.ndarray, kind: str) -> np.ndarray:
    if kind == FLOAT:
        return (col + 0.0).view(np.int64)  # + 0.0 turns -0.0 into 0.0
    return col


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser (wrapping uint64 arithmetic)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


# -- decoded records as user functions see them (explanations evaluate them again) ------
def user_form(record):
    """How user functions see a record: the bare value for one field."""
    return record[0] if len(record) == 1 else record


def as_record(value) -> tuple:
    """A user function's record as a tuple (a bare value is a one-field record)."""
    return value if isinstance(value, tuple) else (value,)


def columns_of(records: list) -> list:
    """Numpy columns of decoded records, as column-wise user functions receive them."""
    if not records:
        return []
    cols = []
    for values in zip(*records):
        types = set(map(type, values))
        if types <= {bool}:
            cols.append(np.array(values, dtype=bool))
        elif types <= {int}:
            cols.append(np.array(values, dtype=np.int64))
        elif types <= {int, float}:
            cols.append(np.array(values, dtype=np.float64))
        else:
            arr = np.empty(len(values), dtype=object)
            arr[:] = list(values)
            cols.append(arr)
    return cols
