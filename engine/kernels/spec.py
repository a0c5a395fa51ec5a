"""What the kernels compute, without importing numba: the logic codes (each built-in reduce
logic says its own, as its ``kernel_code``) and which records qualify (operators ask this at
build time and on every run; numba loads only when a kernel actually runs)."""
from __future__ import annotations

from ..columns import BOOL, INT, OBJECT

COUNT, SUM, MIN, MAX, DISTINCT, GIVEN = 0, 1, 2, 3, 4, 5

_ORDERED = (INT, BOOL)
_EQUALITY = (INT, BOOL, OBJECT)


def qualifies(code: int, nkey: int, kinds) -> bool:
    """Whether records of ``kinds`` (``None``: none seen yet) suit the kernels for logic
    ``code`` with ``nkey`` key columns.  Keys need equality only (ints, bools, interned
    objects); values compared by order (sum, min, max) must be ints or bools; floats never
    qualify (their bits do not order or compare like the numbers).  Records the numpy path
    rejects with a schema error (a sum over two value columns, ...) do not qualify either,
    so that path raises it."""
    if kinds is None:
        return True
    arity = len(kinds)
    if code in (COUNT, SUM, MIN, MAX):
        if nkey < 1 or nkey > arity or any(k not in _EQUALITY for k in kinds[:nkey]):
            return False
        if code == SUM:
            return arity == nkey + 1 and kinds[nkey] in _ORDERED
        if code in (MIN, MAX):
            return arity > nkey and all(k in _ORDERED for k in kinds[nkey:])
        return all(k in _EQUALITY for k in kinds)
    return all(k in _EQUALITY for k in kinds)
