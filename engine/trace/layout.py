"""The packed layout: every field of a run of trace updates in one ``(fields, n)`` int64 matrix
(int32 for a large spine batch whose values all fit: :func:`narrowed`; read back as int64).

Rows are key code, columns (float bits for floats), time coordinates, diff; each field is a
contiguous row of the matrix.  Gathering rows is then one ``take`` and concatenating one call,
whatever the record's arity: small lookups are dominated by the number of numpy calls, not
by the bytes moved.  The same rows as Python tuples ``(key code, fields..., time..., diff)``
(the key code always first) are what the cached histories and the recent rows' Python views
hold.
"""
from __future__ import annotations

import numpy as np

from .. import tuning


def pack(keycode, cols, times, diffs, order=None, narrow: bool = False
         ) -> tuple[np.ndarray, tuple]:
    """``(data, layout)``: the packed matrix and its layout tuple (a float flag per column).
    ``order`` permutes the rows on the way in (one copy, field by field, instead of a copy
    and then a permuted copy).  ``narrow``: written straight in int32 where :func:`narrowed`
    would narrow the result (no int64 matrix made first: for the 15M-row batch of a large
    from-scratch CC, 300 MB fewer at its peak).

    When the key code *is* the first column (one non-float key column: ``key_code`` returns
    the column itself) it is stored once: the layout's first flag is then ``None`` instead of
    ``False`` (a sixth less state, merging and gathering for a two-field record in a loop).
    :func:`unpack` reads the layout."""
    floats = tuple(c.dtype.kind == "f" for c in cols)
    if len(cols) and keycode is cols[0] and not floats[0]:
        floats = (None,) + floats[1:]
        keycode = None
    n = len(diffs)
    fields = ([] if keycode is None else [keycode]) + \
        [c.view(np.int64) if f else c for c, f in zip(cols, floats)] + list(times.T) + [diffs]
    narrow = narrow and _narrows(n, floats) and fits_narrow(fields)
    data = np.empty((len(fields), n), dtype=np.int32 if narrow else np.int64)
    for j, field in enumerate(fields):
        if order is None:
            data[j] = field
        else:
            np.take(field, order, out=data[j], mode="clip")
    return data, floats


INT32_MIN, INT32_MAX = int(np.iinfo(np.int32).min), int(np.iinfo(np.int32).max)


def narrowed(data: np.ndarray, floats: tuple) -> np.ndarray:
    """``data`` as int32 when it is a large batch (:data:`~ddlab.engine.tuning.NARROW_ROWS`)
    without float fields whose every value lies strictly inside the int32 range (so a query
    clipped to that range compares with every value as the query itself does); else as is."""
    if data.dtype != np.int64 or not _narrows(data.shape[1], floats):
        return data
    return data.astype(np.int32) if fits_narrow([data]) else data


def trimmed(data: np.ndarray, m: int, floats: tuple) -> np.ndarray:
    """The first ``m`` columns of a merge's int64 result as a batch keeps them: narrowed
    where :func:`narrowed` would, else contiguous (no copy when every column is kept)."""
    view = data if m == data.shape[1] else data[:, :m]
    kept = narrowed(view, floats)
    return np.ascontiguousarray(kept) if kept is view else kept


def _narrows(n: int, floats: tuple) -> bool:
    """Whether a packed matrix of ``n`` rows and this layout is one :func:`narrowed` narrows
    when its values fit."""
    return n >= max(tuning.NARROW_ROWS, 1) and tuning.FAST_PATHS and True not in floats


def fits_narrow(parts) -> bool:
    """Whether packed matrices or fields (int32 already, or int64 checked) all lie strictly
    inside the int32 range."""
    return all(data.dtype == np.int32 or not data.size or
               (INT32_MIN < int(data.min()) and int(data.max()) < INT32_MAX) for data in parts)


def narrow_query(column: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``query`` (int64 key codes) in ``column``'s dtype for a ``searchsorted``: numpy would
    otherwise convert the whole int32 column to int64 at every search.  Clipping keeps each
    query's order against every value of a narrowed column (its values lie strictly inside
    the int32 range)."""
    if column.dtype == np.int32 and query.dtype != np.int32:
        return np.clip(query, INT32_MIN, INT32_MAX).astype(np.int32)
    return query


def wide(data: np.ndarray) -> np.ndarray:
    """A packed matrix as int64 (what leaves the trace package; a copy of a narrowed one)."""
    return data if data.dtype == np.int64 else data.astype(np.int64)


def unpack(data: np.ndarray, floats: tuple):
    """Views ``(keycode, cols, times, diffs)`` of a packed matrix (no copies)."""
    arity = len(floats)
    first = 0 if arity and floats[0] is None else 1  # key code stored as the first column
    cols = [data[first + j].view(np.float64) if floats[j] else data[first + j]
            for j in range(arity)]
    return data[0], cols, data[first + arity:-1].T, data[-1]


def take_columns(data: np.ndarray, idx) -> np.ndarray:
    """``data[:, idx]`` for a packed matrix; ``np.take`` along the rows' axis is several
    times faster than 2-d fancy indexing for integer indices."""
    if isinstance(idx, slice):
        return data[:, idx]
    idx = np.asarray(idx)
    if idx.dtype == bool:
        idx = np.flatnonzero(idx)
    return np.take(data, idx, axis=1)


def packed_matrix(rows: list, layout: tuple) -> np.ndarray:
    """The packed matrix of ``layout`` holding rows given as tuples (which always start with
    the key code: dropped where the layout stores it as the first column)."""
    data = np.array(rows, dtype=np.int64).T
    return data[1:] if layout and layout[0] is None else data


def is_sorted(a: np.ndarray) -> bool:
    """Whether ``a`` is ascending (the general path always answers no and sorts)."""
    return tuning.FAST_PATHS and (len(a) < 2 or bool((a[1:] >= a[:-1]).all()))
