"""Scalar expressions of a logical plan, evaluated row by row with SQL's three-valued logic.

A plan's operators (filters, projections, join residues) carry these rather than Python
lambdas so that a plan can be printed (``explain``) and produced by any front end: the SQL
translator builds them from sqlglot's tree; the rules compiler would build ``Col``, ``Lit``
and ``Binary`` comparisons from a rule's body.  ``None`` is NULL: every operator on a NULL
gives NULL except ``AND``/``OR`` (false AND NULL is false, true OR NULL is true),
``IS [NOT] NULL``, ``COALESCE`` and ``CASE``.
"""
from __future__ import annotations

import datetime
import functools
import math
import operator
import re
from dataclasses import dataclass

__all__ = ["Expr", "Col", "Lit", "Binary", "Not", "Neg", "IsNull", "Case", "Coalesce", "Func",
           "InList", "Like", "FUNCTIONS", "columns_used", "shift"]


class Expr:
    """A scalar expression over one row (a tuple of Python values, ``None`` for NULL)."""

    def eval(self, row: tuple):
        raise NotImplementedError

    def children(self) -> tuple:
        return ()


@dataclass(frozen=True)
class Col(Expr):
    """The row's field ``index`` (``name`` for printing)."""

    index: int
    name: str = ""

    def eval(self, row):
        return row[self.index]

    def __str__(self):
        return f"{self.name or '$'}#{self.index}" if self.name else f"${self.index}"


@dataclass(frozen=True)
class Lit(Expr):
    """A constant (``None``: NULL)."""

    value: object

    def eval(self, row):
        return self.value

    def __str__(self):
        return "NULL" if self.value is None else repr(self.value)


def _div(a, b):
    return None if b == 0 else a / b


def _mod(a, b):  # SQL's remainder takes the dividend's sign (C's fmod), not Python's
    if b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return a - b * int(a / b) if abs(a) < 2 ** 52 else int(math.fmod(a, b))
    return math.fmod(a, b)


def _concat(a, b):
    return f"{a}{b}"


_ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": _div, "%": _mod,
          "||": _concat}
_COMPARE = {"=": operator.eq, "<>": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge}


@dataclass(frozen=True)
class Binary(Expr):
    """``left OP right``: arithmetic (+ - * / %), ``||``, comparisons, ``AND``, ``OR``."""

    op: str
    left: Expr
    right: Expr

    def eval(self, row):
        op = self.op
        if op == "AND":
            a = self.left.eval(row)
            if a is False:
                return False
            b = self.right.eval(row)
            if b is False:
                return False
            return None if a is None or b is None else True
        if op == "OR":
            a = self.left.eval(row)
            if a is True:
                return True
            b = self.right.eval(row)
            if b is True:
                return True
            return None if a is None or b is None else False
        a = self.left.eval(row)
        if a is None:
            return None
        b = self.right.eval(row)
        if b is None:
            return None
        fn = _COMPARE.get(op)
        if fn is not None:
            return bool(fn(a, b))
        return _ARITH[op](a, b)

    def children(self):
        return (self.left, self.right)

    def __str__(self):
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True)
class Not(Expr):
    arg: Expr

    def eval(self, row):
        v = self.arg.eval(row)
        return None if v is None else not v

    def children(self):
        return (self.arg,)

    def __str__(self):
        return f"NOT {self.arg}"


@dataclass(frozen=True)
class Neg(Expr):
    arg: Expr

    def eval(self, row):
        v = self.arg.eval(row)
        return None if v is None else -v

    def children(self):
        return (self.arg,)

    def __str__(self):
        return f"-{self.arg}"


@dataclass(frozen=True)
class IsNull(Expr):
    """``arg IS NULL`` (``negated``: ``IS NOT NULL``); never NULL itself."""

    arg: Expr
    negated: bool = False

    def eval(self, row):
        return (self.arg.eval(row) is None) != self.negated

    def children(self):
        return (self.arg,)

    def __str__(self):
        return f"{self.arg} IS {'NOT ' if self.negated else ''}NULL"


@dataclass(frozen=True)
class Case(Expr):
    """``CASE WHEN c THEN v ... ELSE e END``: the first condition that is true (not NULL)."""

    whens: tuple  # ((condition, value), ...)
    default: Expr

    def eval(self, row):
        for cond, value in self.whens:
            if cond.eval(row) is True:
                return value.eval(row)
        return self.default.eval(row)

    def children(self):
        return tuple(e for pair in self.whens for e in pair) + (self.default,)

    def __str__(self):
        whens = " ".join(f"WHEN {c} THEN {v}" for c, v in self.whens)
        return f"CASE {whens} ELSE {self.default} END"


@dataclass(frozen=True)
class Coalesce(Expr):
    args: tuple

    def eval(self, row):
        for arg in self.args:
            v = arg.eval(row)
            if v is not None:
                return v
        return None

    def children(self):
        return self.args

    def __str__(self):
        return f"COALESCE({', '.join(map(str, self.args))})"


@dataclass(frozen=True)
class InList(Expr):
    """``arg [NOT] IN (v1, v2, ...)`` over constants, with SQL's NULL rules: NULL when no
    value matches and the argument or a value is NULL."""

    arg: Expr
    values: tuple
    negated: bool = False

    def eval(self, row):
        a = self.arg.eval(row)
        if a is None:
            return None
        found, unknown = False, False
        for value in self.values:
            v = value.eval(row)
            if v is None:
                unknown = True
            elif a == v:
                found = True
                break
        if found:
            return not self.negated
        return None if unknown else self.negated

    def children(self):
        return (self.arg,) + self.values

    def __str__(self):
        return f"{self.arg} {'NOT ' if self.negated else ''}IN ({', '.join(map(str, self.values))})"


def _substring(s, start, length=None):
    start = int(start)
    begin = start - 1 if start > 0 else (len(s) + start if start < 0 else 0)
    begin = max(begin, 0)
    return s[begin:] if length is None else s[begin:begin + max(int(length), 0)]


def _as_date(value):
    """A date from a date or a datetime (the day part)."""
    return value.date() if isinstance(value, datetime.datetime) else value


def _to_date(value):
    """TO_DATE without a format: a date, a datetime's day, or an ISO ``YYYY-MM-DD`` string."""
    if isinstance(value, str):
        return datetime.date.fromisoformat(value.strip()[:10])
    return _as_date(value)


def _date_add(value, days):
    return _as_date(value) + datetime.timedelta(days=int(days))


def _datediff(end, start):
    return (_as_date(end) - _as_date(start)).days


#: the scalar functions: name -> (Python function of non-NULL arguments, min args, max args);
#: a NULL argument makes the result NULL
FUNCTIONS = {
    "ABS": (abs, 1, 1),
    "LOWER": (str.lower, 1, 1),
    "UPPER": (str.upper, 1, 1),
    "LENGTH": (len, 1, 1),
    "TRIM": (str.strip, 1, 1),
    "SUBSTRING": (_substring, 2, 3),
    "CONCAT": (lambda *parts: "".join(map(str, parts)), 1, 99),
    "YEAR": (lambda d: d.year, 1, 1),
    "MONTH": (lambda d: d.month, 1, 1),
    "DAY": (lambda d: d.day, 1, 1),
    "DATE_ADD": (_date_add, 2, 2),
    "TO_DATE": (_to_date, 1, 1),
    "DATEDIFF": (_datediff, 2, 2),
}

#: functions that skip NULL arguments (NULL only when every argument is NULL), as Spark's
#: and DuckDB's LEAST and GREATEST do
SKIPPING_NULLS = {"LEAST": min, "GREATEST": max}


@dataclass(frozen=True)
class Func(Expr):
    """A scalar function of :data:`FUNCTIONS`; NULL if any argument is NULL."""

    name: str
    args: tuple

    def eval(self, row):
        values = [a.eval(row) for a in self.args]
        skipping = SKIPPING_NULLS.get(self.name)
        if skipping is not None:
            values = [v for v in values if v is not None]
            return skipping(values) if values else None
        if any(v is None for v in values):
            return None
        return FUNCTIONS[self.name][0](*values)

    def children(self):
        return self.args

    def __str__(self):
        return f"{self.name}({', '.join(map(str, self.args))})"


@dataclass(frozen=True)
class Like(Expr):
    """``arg [NOT] LIKE pattern`` (``%`` any run, ``_`` one character; ``insensitive``:
    ILIKE); NULL if either side is NULL."""

    arg: Expr
    pattern: Expr
    negated: bool = False
    insensitive: bool = False

    def eval(self, row):
        a, p = self.arg.eval(row), self.pattern.eval(row)
        if a is None or p is None:
            return None
        found = _like_regex(p, self.insensitive).fullmatch(a) is not None
        return found != self.negated

    def children(self):
        return (self.arg, self.pattern)

    def __str__(self):
        return (f"{self.arg} {'NOT ' if self.negated else ''}"
                f"{'ILIKE' if self.insensitive else 'LIKE'} {self.pattern}")


@functools.lru_cache(maxsize=256)
def _like_regex(pattern: str, insensitive: bool):
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL | (re.IGNORECASE if insensitive else 0))


def columns_used(expr: Expr) -> set:
    """The field indexes ``expr`` reads."""
    if isinstance(expr, Col):
        return {expr.index}
    out = set()
    for child in expr.children():
        out |= columns_used(child)
    return out


def shift(expr: Expr, mapping) -> Expr:
    """``expr`` with every ``Col(i)`` replaced by ``mapping(i)`` (an index or an Expr)."""
    if isinstance(expr, Col):
        new = mapping(expr.index)
        return new if isinstance(new, Expr) else Col(new, expr.name)
    if isinstance(expr, Lit):
        return expr
    if isinstance(expr, Binary):
        return Binary(expr.op, shift(expr.left, mapping), shift(expr.right, mapping))
    if isinstance(expr, (Not, Neg)):
        return type(expr)(shift(expr.arg, mapping))
    if isinstance(expr, IsNull):
        return IsNull(shift(expr.arg, mapping), expr.negated)
    if isinstance(expr, Case):
        return Case(tuple((shift(c, mapping), shift(v, mapping)) for c, v in expr.whens),
                    shift(expr.default, mapping))
    if isinstance(expr, Coalesce):
        return Coalesce(tuple(shift(a, mapping) for a in expr.args))
    if isinstance(expr, InList):
        return InList(shift(expr.arg, mapping), tuple(shift(v, mapping) for v in expr.values),
                      expr.negated)
    if isinstance(expr, Func):
        return Func(expr.name, tuple(shift(a, mapping) for a in expr.args))
    if isinstance(expr, Like):
        return Like(shift(expr.arg, mapping), shift(expr.pattern, mapping), expr.negated,
                    expr.insensitive)
    raise TypeError(f"unknown expression {expr!r}")
