"""How a plan's values live in engine columns: every number *boxed*, NULL as ``None``.

Why: the engine picks a column's kind per batch from the values in it (int, float, bool,
object) and refuses a column whose kind changes between batches; an int column that holds a
NULL in one batch and none in the next would do exactly that.  So a plan's collections
hold every number as :class:`Int` / :class:`Float` (subclasses of ``int`` / ``float``: they compare,
hash and print as the plain number), booleans as :class:`Bool`, strings as they are, and
SQL's NULL as ``None``.  Every column is then of the object kind in every
batch, NULL or not; a join key is compared in :func:`key_form` (``Int(3)`` and
``Float(3.0)`` join, as in SQL).  Expressions evaluate on plain Python values (``None`` for NULL): :func:`unbox_row`
on the way in, :func:`box_row` on the way out.

An input column that holds NULLs beside numbers must be given boxed rows
(``box_row((1, None))``: otherwise the engine refuses the column's change of kind); an input
of plain ints, floats or strings, or strings with ``None``, is boxed by the plan's scan.
"""
from __future__ import annotations

__all__ = ["NULL", "isnull", "Int", "Float", "Bool", "box", "key_form", "unbox", "box_row",
           "unbox_row", "plain"]


#: SQL's NULL in a plan's columns: ``None`` (an object column keeps one code for it)
NULL = None


def isnull(value) -> bool:
    """Whether a stored value is NULL (``None``, or a NaN that pandas made of one)."""
    return value is None or (type(value) is float and value != value)


class Int(int):
    """An integer in a plan's column (prints and compares as the plain int)."""

    __slots__ = ()

    def __reduce__(self):
        return (Int, (int(self),))


class Float(float):
    """A float in a plan's column (prints and orders as the plain float).  Equal only to
    another Float: the interner must not give ``Float(3.0)`` the code of ``Int(3)``, or the
    column would decode with both classes (which the engine refuses as mixed types); join
    keys are made to meet across the two by :func:`key_form`."""

    __slots__ = ()

    def __eq__(self, other):
        return type(other) is Float and float(self) == float(other)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("Float", float(self)))

    def __reduce__(self):
        return (Float, (float(self),))


class Bool(int):
    """A boolean in a plan's column (``bool`` cannot be subclassed); prints true/false.
    Equal only to another Bool (as :class:`Float`, for the interner)."""

    __slots__ = ()

    def __eq__(self, other):
        return type(other) is Bool and int(self) == int(other)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("Bool", int(self)))

    def __repr__(self) -> str:
        return "true" if self else "false"

    __str__ = __repr__

    def __reduce__(self):
        return (Bool, (int(self),))


def box(value):
    """A Python value (``None`` for NULL) as it is stored in a plan's column."""
    if value is None:
        return None
    t = type(value)
    if t is Int or t is Float or t is Bool or t is str:
        return value
    if t is bool:
        return Bool(value)
    if isinstance(value, int):
        return Int(value)
    if isinstance(value, float):
        return None if value != value else Float(value)  # NaN read as NULL (pandas' habit)
    return value


def unbox(value):
    """A stored value as expressions see it: ``None`` for NULL, plain numbers and bools."""
    t = type(value)
    if t is float and value != value:
        return None
    if t is Int:
        return int(value)
    if t is Float:
        return float(value)
    if t is Bool:
        return bool(value)
    return value


def key_form(value):
    """A stored value as a join key: a whole Float as the Int it equals (SQL's ``1 = 1.0``)."""
    if type(value) is Float and float(value).is_integer() and abs(value) < 2 ** 63:
        return Int(int(value))
    return value


def box_row(row) -> tuple:
    """A record of Python values as a plan stores it (a bare value is one field)."""
    if not isinstance(row, tuple):
        row = (row,)
    return tuple(map(box, row))


def unbox_row(row) -> tuple:
    """A stored record (a bare value is one field) as a tuple of Python values."""
    if not isinstance(row, tuple):
        row = (row,)
    return tuple(map(unbox, row))


def plain(row) -> tuple:
    """A result record with Python values (``None`` for NULL): for comparing with other
    engines' answers and for showing."""
    return unbox_row(row)
