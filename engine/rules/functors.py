"""Soufflé's functors and its operators beyond arithmetic, computed on whole numpy columns.

Why a table: the analysis checks a call's name and number of arguments against it (an
unknown functor is refused at its place, with the list), and the compiler evaluates every
row of a batch at once (symbols are object columns, numbers int64 or float64).

Semantics follow Soufflé's documentation: ``substr(s, i, n)`` counts from 0 and a start past
the end gives nothing (the row derives nothing, as a division by zero); ``contains(a, b)``
is whether ``a`` occurs in ``b``; ``match(pattern, s)`` whether the whole of ``s`` matches the
regular expression; ``to_number("x")`` of a non-number derives nothing; logical operators
give 1 or 0; ``bshr`` shifts arithmetically and ``bshru`` as unsigned 64-bit.
"""
from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

__all__ = ["FUNCTORS", "OPERATORS", "REFUSED", "call", "operate", "cast"]


def _objects(values) -> np.ndarray:
    values = list(values)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _strings(col, name) -> list:
    values = np.asarray(col, dtype=object).tolist()
    for v in values:
        if not isinstance(v, str):
            raise TypeError(f"{name} takes symbols; got {v!r}")
    return values


def _numbers(col, name) -> np.ndarray:
    arr = np.asarray(col)
    if arr.dtype.kind == "O":
        raise TypeError(f"{name} takes numbers; got {arr.flat[0]!r}" if arr.size else name)
    return arr


def _to_number(col):
    values = np.asarray(col, dtype=object).tolist()
    out, ok = np.zeros(len(values), dtype=np.int64), np.ones(len(values), dtype=bool)
    for i, v in enumerate(values):
        try:
            out[i] = int(str(v).strip(), 0) if isinstance(v, str) else int(v)
        except ValueError:
            ok[i] = False
    return out, ok


def _to_float(col):
    values = np.asarray(col, dtype=object).tolist()
    out, ok = np.zeros(len(values)), np.ones(len(values), dtype=bool)
    for i, v in enumerate(values):
        try:
            out[i] = float(v)
        except ValueError:
            ok[i] = False
    return out, ok


def _to_string(col):
    arr = np.asarray(col)
    if arr.dtype.kind == "f":
        return _objects(repr(float(v)) for v in arr), None
    return _objects(str(v.item() if hasattr(v, "item") else v) for v in arr), None


def _substr(s, start, length):
    strings = _strings(s, "substr")
    start, length = _numbers(start, "substr"), _numbers(length, "substr")
    ok = (start >= 0) & (length >= 0) & (start <= np.array([len(x) for x in strings]))
    return _objects(x[int(i):int(i) + int(n)] for x, i, n in zip(strings, start, length)), ok


@lru_cache(maxsize=256)
def _pattern(text: str):
    return re.compile(text)


def _match(pattern, s):
    pats, strings = _strings(pattern, "match"), _strings(s, "match")
    out = np.fromiter((_pattern(p).fullmatch(x) is not None for p, x in zip(pats, strings)),
                      dtype=bool, count=len(strings))
    return out.astype(np.int64), None


def _ord(col):
    return np.fromiter((ord(x[0]) if x else 0 for x in _strings(col, "ord")), dtype=np.int64,
                       count=len(col)), None


def _extreme(fn):
    def pick(a, b):
        if np.asarray(a).dtype.kind == "O" or np.asarray(b).dtype.kind == "O":
            return _objects(fn(x, y) for x, y in zip(np.asarray(a, dtype=object),
                                                      np.asarray(b, dtype=object))), None
        return (np.minimum if fn is min else np.maximum)(a, b), None
    return pick


#: name -> (number of arguments, fn(*columns) -> (values, ok mask or None))
FUNCTORS = {
    "cat": (None, lambda *cols: (_objects("".join(parts) for parts in zip(
        *[_strings(c, "cat") for c in cols])), None)),
    "strlen": (1, lambda s: (np.fromiter(map(len, _strings(s, "strlen")), dtype=np.int64,
                                         count=len(s)), None)),
    "substr": (3, _substr),
    "contains": (2, lambda a, b: (np.fromiter((x in y for x, y in zip(
        _strings(a, "contains"), _strings(b, "contains"))), dtype=np.int64, count=len(a)),
        None)),
    "match": (2, _match),
    "ord": (1, _ord),
    "to_number": (1, _to_number),
    "to_unsigned": (1, _to_number),
    "to_float": (1, _to_float),
    "to_string": (1, _to_string),
    "min": (2, _extreme(min)),
    "max": (2, _extreme(max)),
    "bnot": (1, lambda a: (~_numbers(a, "bnot"), None)),
    "lnot": (1, lambda a: ((_numbers(a, "lnot") == 0).astype(np.int64), None)),
    "abs": (1, lambda a: (np.abs(_numbers(a, "abs")), None)),
}

#: functors Soufflé has that ddlab refuses, with the way around
REFUSED = {
    "range": "range(a, b) binds a variable to many values: write a relation of the values "
             "(numbers(0). numbers(n + 1) :- numbers(n), n < 9.) and join it",
    "autoinc": "autoinc() numbers facts in the order Soufflé derives them, which an "
               "incremental evaluation has no equivalent of: key the facts by their own fields",
    "mean": "mean is not supported: write s = sum x : {...}, n = count : {...} and divide",
}


def _shift_right_unsigned(a, b):
    return (a.astype(np.uint64) >> b.astype(np.uint64)).astype(np.int64)


#: the operators written between their operands (``x band 3``, ``2 ^ 10``)
OPERATORS = {
    "band": lambda a, b: a & b,
    "bor": lambda a, b: a | b,
    "bxor": lambda a, b: a ^ b,
    "bshl": lambda a, b: a << b,
    "bshr": lambda a, b: a >> b,
    "bshru": _shift_right_unsigned,
    "land": lambda a, b: ((a != 0) & (b != 0)).astype(np.int64),
    "lor": lambda a, b: ((a != 0) | (b != 0)).astype(np.int64),
}


def call(name: str, cols: list):
    """``(values, ok)`` of functor ``name`` on argument columns (``ok``: rows where defined)."""
    return FUNCTORS[name][1](*cols)


def operate(op: str, a, b):
    """``(values, ok)`` of ``a op b`` for ``^`` and the operators of :data:`OPERATORS`
    (integers only, but ``^`` and the logical ones); an integer to a negative power is
    undefined (the row derives nothing)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "O" or b.dtype.kind == "O":
        raise TypeError(f"{op} of a symbol")
    floats = a.dtype.kind == "f" or b.dtype.kind == "f"
    if op == "^":
        if floats:
            return np.power(a.astype(np.float64), b), None
        ok = b >= 0
        return np.power(a, np.where(ok, b, 0)), (None if ok.all() else ok)
    if floats and op not in ("land", "lor"):
        raise TypeError(f"{op} of a float")
    return OPERATORS[op](a, b), None


def cast(values, to: str):
    """``as(x, type)``: ``(values, ok)`` of ``x`` read as ``number``/``unsigned``, ``float``
    or ``symbol`` (any other type name: unchanged, as a subtype's values are its base's)."""
    if to in ("number", "unsigned"):
        if np.asarray(values).dtype.kind == "O":
            return _to_number(values)
        return np.asarray(values).astype(np.int64), None
    if to == "float":
        if np.asarray(values).dtype.kind == "O":
            return _to_float(values)
        return np.asarray(values).astype(np.float64), None
    if to == "symbol":
        return _to_string(values)
    return values, None
