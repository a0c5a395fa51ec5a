"""The logical plan: relational algebra over named, boxed columns (see :mod:`.values`).

A plan is a tree (a DAG where a CTE is read twice) of these nodes; every node knows its
output ``columns``.  Multiset semantics throughout (SQL's bags); :class:`Distinct` makes a
set.  Front ends produce plans (:mod:`ddlab.engine.sql` now; the rules compiler could: a
rule body is a :class:`Join` chain with :class:`Filter`\\ s and a :class:`Project` for the
head, negation an ``anti`` :class:`SemiJoin`, a stratum's relations a :class:`Fix`);
:mod:`.lower` turns a plan into engine operators, once.
"""
from __future__ import annotations

from dataclasses import dataclass

from .expr import Expr

__all__ = ["Node", "Scan", "Filter", "Project", "Join", "SemiJoin", "Aggregate", "AggCall",
           "Distinct", "SetOp", "TopK", "Ref", "Fix", "FixGroup", "walk"]


class Node:
    """A plan node: ``columns`` (output names) and ``inputs`` (child nodes)."""

    columns: list

    @property
    def inputs(self) -> tuple:
        return ()

    def describe(self) -> str:
        """One line: what this node does (children not included)."""
        raise NotImplementedError


@dataclass(eq=False)
class Scan(Node):
    """The collection ``source`` (its records boxed), fields named ``columns``."""

    source: str
    columns: list

    def describe(self):
        return f"Scan {self.source} ({', '.join(self.columns)})"


@dataclass(eq=False)
class Filter(Node):
    """The rows of ``child`` for which ``predicate`` is true (not false, not NULL)."""

    child: Node
    predicate: Expr

    @property
    def columns(self):
        return self.child.columns

    @property
    def inputs(self):
        return (self.child,)

    def describe(self):
        return f"Filter {self.predicate}"


@dataclass(eq=False)
class Project(Node):
    """One output row per row of ``child``: the values of ``exprs``."""

    child: Node
    exprs: list
    columns: list

    @property
    def inputs(self):
        return (self.child,)

    def describe(self):
        return "Project " + ", ".join(f"{e} AS {n}" for e, n in zip(self.exprs, self.columns))


@dataclass(eq=False)
class Join(Node):
    """``left ⋈ right`` on ``left_keys[i] = right_keys[i]`` (field indexes; a NULL key never
    matches), then ``residual`` over the concatenated row; ``kind`` inner, left, right or
    full (outer joins pad the unmatched side's fields with NULL).  Output: left's fields, then
    right's."""

    left: Node
    right: Node
    left_keys: list
    right_keys: list
    kind: str = "inner"
    residual: Expr | None = None

    @property
    def columns(self):
        return self.left.columns + self.right.columns

    @property
    def inputs(self):
        return (self.left, self.right)

    def describe(self):
        on = " AND ".join(f"{self.left.columns[a]}#{a} = {self.right.columns[b]}#{b}"
                          for a, b in zip(self.left_keys, self.right_keys)) or "true"
        extra = f" AND {self.residual}" if self.residual is not None else ""
        return f"Join {self.kind} ON {on}{extra}"


@dataclass(eq=False)
class SemiJoin(Node):
    """The rows of ``left`` with (``anti``: without) a row of ``right`` whose
    ``right_keys`` equal its ``left_keys`` (EXISTS / IN; NOT EXISTS).  ``null_aware``: SQL's
    ``NOT IN`` over one key: no row at all when ``right`` holds a NULL key, every row when
    ``right`` is empty, and a NULL left key never kept otherwise."""

    left: Node
    right: Node
    left_keys: list
    right_keys: list
    anti: bool = False
    null_aware: bool = False

    @property
    def columns(self):
        return self.left.columns

    @property
    def inputs(self):
        return (self.left, self.right)

    def describe(self):
        kind = "NOT IN" if self.null_aware else ("Anti" if self.anti else "Semi")
        on = " AND ".join(f"#{a} = right#{b}" for a, b in zip(self.left_keys, self.right_keys))
        return f"{kind} join ON {on or 'true'}"


@dataclass(frozen=True)
class AggCall:
    """``func(field arg)`` (``arg`` None for COUNT(*)); ``distinct``: over distinct values."""

    func: str  # COUNT, SUM, MIN, MAX, AVG
    arg: int | None
    distinct: bool = False

    def __str__(self):
        inner = "*" if self.arg is None else f"#{self.arg}"
        return f"{self.func}({'DISTINCT ' if self.distinct else ''}{inner})"


@dataclass(eq=False)
class Aggregate(Node):
    """Per distinct value of the ``groups`` fields, one row: the group's fields, then each
    aggregate (NULLs skipped; COUNT of nothing is 0, any other aggregate of nothing NULL).
    No groups: exactly one row, even over an empty input."""

    child: Node
    groups: list
    aggs: list
    columns: list

    @property
    def inputs(self):
        return (self.child,)

    def describe(self):
        groups = ", ".join(f"#{g}" for g in self.groups) or "()"
        return f"Aggregate by {groups}: {', '.join(map(str, self.aggs))}"


@dataclass(eq=False)
class Distinct(Node):
    child: Node

    @property
    def columns(self):
        return self.child.columns

    @property
    def inputs(self):
        return (self.child,)

    def describe(self):
        return "Distinct"


@dataclass(eq=False)
class SetOp(Node):
    """``kind`` union, except or intersect of two inputs of one arity; ``all``: as
    multisets (UNION ALL adds, EXCEPT ALL subtracts, INTERSECT ALL takes the smaller),
    otherwise as sets."""

    kind: str
    left: Node
    right: Node
    all: bool = False

    @property
    def columns(self):
        return self.left.columns

    @property
    def inputs(self):
        return (self.left, self.right)

    def describe(self):
        return f"{self.kind.capitalize()}{' all' if self.all else ''}"


@dataclass(eq=False)
class TopK(Node):
    """Per distinct value of the ``partition`` fields, the first ``k`` rows in ``order``
    (``(field, descending, nulls_first)``, then the whole row to break ties).
    ``rank_column``: append each row's position (1, 2, ...), ROW_NUMBER()."""

    child: Node
    partition: list
    order: list
    k: int
    rank_column: str | None = None

    @property
    def columns(self):
        return self.child.columns + ([self.rank_column] if self.rank_column else [])

    @property
    def inputs(self):
        return (self.child,)

    def describe(self):
        order = ", ".join(f"#{f} {'DESC' if d else 'ASC'} NULLS {'FIRST' if n else 'LAST'}"
                          for f, d, n in self.order)
        part = ", ".join(f"#{p}" for p in self.partition)
        return f"TopK {self.k} by {order}" + (f" per {part}" if part else "")


@dataclass(eq=False)
class Ref(Node):
    """A relation of the enclosing :class:`Fix` (read inside its loop)."""

    name: str
    columns: list

    def describe(self):
        return f"Ref {self.name}"


class FixGroup:
    """Mutually recursive relations: ``seeds[n]`` (no :class:`Ref`; None: empty) and
    ``steps[n]`` (may read any relation of the group through :class:`Ref`); each relation is
    the least set with ``r = distinct(seed ∪ step(r...))``, its fields named ``columns[n]``.
    Lowered as one engine loop, one variable per relation."""

    def __init__(self, seeds: dict, steps: dict, columns: dict):
        self.seeds, self.steps, self.columns = dict(seeds), dict(steps), dict(columns)


@dataclass(eq=False)
class Fix(Node):
    """Relation ``result`` of a :class:`FixGroup` (every Fix of one group shares its loop)."""

    group: FixGroup
    result: str

    @property
    def columns(self):
        return self.group.columns[self.result]

    @property
    def inputs(self):
        return tuple(s for s in self.group.seeds.values() if s is not None) + tuple(
            s for s in self.group.steps.values() if s is not None)

    def describe(self):
        return (f"Fix {self.result} of {{{', '.join(self.group.seeds)}}}: one loop, one "
                "variable per relation, r = distinct(seed ∪ step)")


def walk(node: Node, seen=None):
    """Every node once, children before parents."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        return
    seen.add(id(node))
    for child in node.inputs:
        yield from walk(child, seen)
    yield node
