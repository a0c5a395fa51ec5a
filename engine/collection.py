"""The fluent API: a :class:`Collection` is a handle on one operator's output.

Records are flat tuples of scalars (a one-field record is the bare value).  Keyed operators
read a record as ``(key, value...)``: the key is its first field (``key_columns`` fields when
given), the value the rest.  Every operator works at any loop depth; a collection from an
enclosing scope used inside a loop is brought in automatically (``enter``), sharing its
arrangement rather than copying it.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from .columns import decode_column
from .errors import DataflowError
from .operators import aggregates as agg
from .operators.arrange import Arrange
from .operators.choose import Decide, SizeChoice
from .operators.io import SubscribeSink, ViewSink
from .operators.join import Join
from .operators.linear import (Concat, Consolidate, Filter, FilterColumns, FlatMap, Inspect, Map,
                               MapColumns, Negate, Project)
from .operators.loops import Enter, Leave
from .operators.reduce import Reduce
from .view import View, unique_names

#: ``key_columns`` value meaning "the whole record is the key" (distinct, set operations,
#: ``arrange(0)``): an index of records by their whole value.
WHOLE_RECORD = 0
#: ``key_columns`` value of the aggregates (count, sum, min, max, top_k, reduce) and of join
#: meaning "no key field": one group, the whole collection (a global aggregate; a join on no
#: key pairs every record with every record).  The same number as WHOLE_RECORD with another
#: meaning: an aggregate keyed by the whole record would aggregate each record alone, which
#: ``distinct``/``threshold`` already do, while "the count of everything" had no spelling.
GLOBAL = 0


def _constant_key(*cols):
    """Every record with a leading key field 0: one group for :data:`GLOBAL`."""
    return (np.zeros(len(cols[0]), dtype=np.int64),) + cols


def _whole(fn):
    """``fn`` of a global reduce called with the key ``()`` instead of the constant 0."""
    def whole(key, values):
        return fn((), values)
    whole.__qualname__ = whole.__name__ = getattr(fn, "__qualname__", "reduce")
    return whole


def _drop_key(key, *rest):
    """The records of a one-group operator without the constant key field."""
    return rest if len(rest) > 1 else rest[0]


class Collection:
    """A multiset of records changing over (partially ordered) time."""

    def __init__(self, op, columns: list[str] | None = None):
        self.op = op
        self.flow = op.flow
        self.scope = op.scope
        self.columns = list(columns) if columns else None

    def __repr__(self) -> str:
        cols = f" columns={self.columns}" if self.columns else ""
        return f"<Collection {self.op.label} in {self.scope.path}{cols}>"

    @property
    def holds_set(self) -> bool:
        """Whether every record's multiplicity is known to be 0 or 1 (a ``distinct``, an
        input made with ``distinct=True``), so a consumer needing a set can use it as is."""
        return bool(getattr(self.op, "holds_set", False))

    @property
    def name(self) -> str:
        """The name of the operator producing this collection (e.g. ``"edges"``, ``"min"``)."""
        return self.op.name

    @property
    def id(self) -> int:
        """The producing operator's id: the ``id`` column of ``flow.graph()`` and the key that
        :meth:`Dataflow.stats` rows carry in ``operator`` (as ``label``)."""
        return self.op.id

    @property
    def label(self) -> str:
        """``name#id``: how statistics, errors and the graph name this collection's operator."""
        return self.op.label

    def rename(self, *columns: str) -> "Collection":
        """The same collection with named fields (names show in views and pandas output).

        >>> flow = Dataflow(); pairs = flow.input("pairs")
        >>> named = pairs.rename("src", "dst"); v = named.view()
        >>> pairs.insert([(1, 2)]); _ = flow.step()
        >>> named.columns, v.to_pandas().columns.tolist()
        (['src', 'dst'], ['src', 'dst', 'multiplicity'])
        """
        return Collection(self.op, list(columns))

    # -- linear operators --------------------------------------------------------------
    def map(self, fn: Callable, name: str | None = None) -> "Collection":
        """Apply ``fn(record) -> record`` to every record (row-wise Python).

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> tens = xs.map(lambda x: x * 10).view()
        >>> xs.insert([1, 2, 2]); _ = flow.step()
        >>> tens.to_dict()
        {10: 1, 20: 2}
        """
        return Collection(Map(self.scope, self.op, fn, name))

    def flat_map(self, fn: Callable, name: str | None = None) -> "Collection":
        """Replace every record by the records of ``fn(record)`` (an iterable).

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> out = xs.flat_map(lambda x: range(x)).view()
        >>> xs.insert([2, 3]); _ = flow.step()
        >>> out.to_dict()
        {0: 2, 1: 2, 2: 1}
        """
        return Collection(FlatMap(self.scope, self.op, fn, name))

    def filter(self, predicate: Callable, name: str | None = None) -> "Collection":
        """Keep the records for which ``predicate(record)`` is true (row-wise Python).

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> even = xs.filter(lambda x: x % 2 == 0).view()
        >>> xs.insert([1, 2, 3, 4]); _ = flow.step()
        >>> even.to_dict()
        {2: 1, 4: 1}
        """
        return Collection(Filter(self.scope, self.op, predicate, name), self.columns)

    def map_columns(self, fn: Callable, name: str | None = None,
                    columns: list[str] | None = None) -> "Collection":
        """Fast path of ``map``: ``fn(*numpy_columns) -> column or tuple of columns``.

        >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"])
        >>> flipped = edges.map_columns(lambda s, d: (d, s)).view()
        >>> edges.insert([(1, 2), (2, 3)]); _ = flow.step()
        >>> flipped.to_dict()
        {(2, 1): 1, (3, 2): 1}
        """
        return Collection(MapColumns(self.scope, self.op, fn, name), columns)

    def filter_columns(self, predicate: Callable, name: str | None = None) -> "Collection":
        """Fast path of ``filter``: ``predicate(*numpy_columns) -> boolean array``.

        >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"])
        >>> up = edges.filter_columns(lambda s, d: s < d).view()
        >>> edges.insert([(1, 2), (3, 2)]); _ = flow.step()
        >>> up.to_dict()
        {(1, 2): 1}
        """
        return Collection(FilterColumns(self.scope, self.op, predicate, name), self.columns)

    def project(self, *columns: int, name: str | None = None) -> "Collection":
        """Select / reorder / repeat fields by position, e.g. ``edges.project(1, 0)``.

        >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"])
        >>> dsts = edges.project(1).view()
        >>> edges.insert([(1, 2), (3, 2)]); _ = flow.step()
        >>> dsts.to_dict()
        {2: 2}
        """
        names = [self.columns[j] for j in columns] if self.columns and all(
            0 <= j < len(self.columns) for j in columns) else None
        return Collection(Project(self.scope, self.op, columns, name), names)

    def concat(self, *others: "Collection", name: str | None = None) -> "Collection":
        """Multiset sum (diffs add): ``a.concat(b)`` holds every record of both.

        >>> flow = Dataflow(); a = flow.input("a"); b = flow.input("b")
        >>> both = a.concat(b).view()
        >>> a.insert([1, 2]); b.insert([2]); _ = flow.step()
        >>> both.to_dict()
        {1: 1, 2: 2}
        """
        me = self
        for o in others:
            me = me._align(o)
        ops = [me.op] + [me._bring(o).op for o in others]
        return Collection(Concat(me.scope, ops, name), self.columns)

    def negate(self, name: str | None = None) -> "Collection":
        """Every multiplicity negated (``a.concat(b.negate())`` is ``a - b``).

        >>> flow = Dataflow(); a = flow.input("a"); b = flow.input("b")
        >>> a_minus_b = a.concat(b.negate()).view()
        >>> a.insert([1, 2]); b.insert([2]); _ = flow.step()
        >>> a_minus_b.to_dict()
        {1: 1}
        """
        return Collection(Negate(self.scope, [self.op], name), self.columns)

    def consolidate(self, name: str | None = None) -> "Collection":
        """At most one update per (record, time), none with diff 0.

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> seen = []; _ = xs.consolidate().inspect(lambda r, t, d: seen.append((r, d)))
        >>> xs.insert([1, 1]); xs.remove([1]); _ = flow.step()
        >>> seen
        [(1, 1)]
        """
        return Collection(Consolidate(self.scope, [self.op], name), self.columns)

    def decide(self, choice: SizeChoice, name: str | None = None) -> "Collection":
        """This collection unchanged; its first non-empty batch fixes ``choice`` (a
        :class:`~ddlab.engine.operators.choose.SizeChoice`) for good.  Operators built
        downstream read ``choice.choice`` (``"small"`` or ``"large"``) to pick a formulation
        by the size of the first load (``algorithms`` picks plain or prioritized label
        propagation this way); a rolled-back first epoch leaves it open.  The operator's name
        in ``flow.stats()`` says what was chosen and why.

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> size = SizeChoice(3, {"small": "few", "large": "many"}, what="records")
        >>> seen = xs.decide(size).view()
        >>> xs.insert([1, 2, 3]); _ = flow.step()
        >>> size.choice, size.explain(), seen.to_dict()
        ('large', 'many: first load 3 records >= 3', {1: 1, 2: 1, 3: 1})
        """
        return Collection(Decide(self.scope, self.op, choice, name), self.columns)

    def inspect(self, fn: Callable = print, name: str | None = None) -> "Collection":
        """Debugging tap: ``fn(record, time, diff)`` for every update passing by.

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> _ = xs.inspect(lambda record, time, diff: print(record, time, diff))
        >>> xs.insert([7]); _ = flow.step()
        7 (0,) 1
        """
        return Collection(Inspect(self.scope, self.op, fn, name), self.columns)

    # -- arrangements and keyed operators ----------------------------------------------
    def arrange(self, key_columns: int = 1, name: str | None = None) -> "Collection":
        """An indexed trace of this collection keyed by its first ``key_columns`` fields,
        shareable by every join and reduce that reads it (built once, cached).

        >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"])
        >>> by_src = edges.arrange(); _ = by_src.view()
        >>> edges.insert([(1, 2), (1, 3)]); _ = flow.step()
        >>> len(by_src.history()), by_src.arrange() is by_src or by_src.id == by_src.arrange().id
        (2, True)
        """
        return Collection(self._arranged(key_columns, name), self.columns)

    def _arranged(self, nkey: int, name: str | None = None):
        trace = getattr(self.op, "trace", None)
        if trace is not None and trace.nkey == nkey:
            return self.op
        arranged = self.op.arrangements.get(nkey)
        if arranged is None:
            arranged = self.op.arrangements[nkey] = Arrange(self.scope, self.op, nkey, name)
        return arranged

    def _bring(self, other: "Collection", nkey: int | None = None) -> "Collection":
        """``other`` as seen from this collection's scope (entered if it is outside)."""
        return bring_into(self.scope, other, nkey)

    def _align(self, other: "Collection", nkey: int | None = None) -> "Collection":
        """This collection as seen from the deeper of its and ``other``'s scopes: a binary
        operator of an outer collection and a loop's collection runs inside the loop (the
        outer one entered, through its arrangement when ``nkey`` is given)."""
        if (other.flow is self.flow and other.scope is not self.scope
                and other.scope.is_within(self.scope)):
            return self._bring_to(other.scope, nkey)
        return self

    def _bring_to(self, scope, nkey=None) -> "Collection":
        return bring_into(scope, self, nkey)

    def enter(self, loop) -> "Collection":
        """This collection inside ``loop`` (a :class:`Loop`, or any collection in the loop).

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> loop = flow.loop("double"); inside = xs.enter(loop)
        >>> inside.scope.path, inside.flow is flow
        ('root/double', True)
        """
        return bring_into(loop.scope, self)

    def _keyed(self, other: "Collection | None", nkey: int):
        left = self._arranged(nkey)
        if other is None:
            return [left]
        return [left, self._bring(other, nkey)._arranged(nkey)]

    def join(self, other: "Collection", select=None, key_columns: int = 1,
             name: str | None = None) -> "Collection":
        """Equi-join on the key.  The output is ``(key, left values..., right values...)``;
        ``select`` picks fields of it by position (a tuple, the fast path) or builds the
        output record with ``select(key, left_value, right_value)`` (row-wise Python).
        ``key_columns=0`` (:data:`GLOBAL`) joins on no field: every left record with every
        right record, ``(left fields..., right fields...)`` (``select`` sees the key ``()``).

        >>> flow = Dataflow()
        >>> names = flow.input("names", columns=["id", "name"])
        >>> ages = flow.input("ages", columns=["id", "age"])
        >>> joined, picked = names.join(ages).view(), names.join(ages, select=(1, 2)).view()
        >>> names.insert([(1, "ann"), (2, "bob")]); ages.insert([(1, 31)]); _ = flow.step()
        >>> joined.to_dict(), joined.columns, picked.to_dict()
        ({(1, 'ann', 31): 1}, ['id', 'name', 'age'], {('ann', 31): 1})
        """
        if key_columns == GLOBAL:
            return self._cross(other, select, name)
        me = self._align(other, key_columns)
        ins = me._keyed(other, key_columns)
        op = Join(me.scope, ins[0], ins[1], key_columns, select, name)
        names = None
        if self.columns and other.columns:
            full = self.columns + [c for c in other.columns[key_columns:]]
            names = [full[j] for j in select] if isinstance(select, tuple) else (
                full if select is None else None)
        return Collection(op, names)

    def _global(self, method: str, name: str | None, columns=None, **kw) -> "Collection":
        """``method`` with ``key_columns=GLOBAL``: every record keyed by the constant 0, the
        keyed operator over that one group, the key dropped again (records as without key)."""
        what = name or method
        keyed = self.map_columns(_constant_key, name=f"{what}: one group")
        out = getattr(keyed, method)(key_columns=1, name=name, **kw)
        return out.map_columns(_drop_key, name=f"{what}: no key", columns=columns)

    def _cross(self, other: "Collection", select, name) -> "Collection":
        """``join`` with no key field: both sides keyed by the constant 0, then joined."""
        what = name or "join"
        left = self.map_columns(_constant_key, name=f"{what}: one group")
        right = other.map_columns(_constant_key, name=f"{what}: one group")
        names = self.columns + other.columns if self.columns and other.columns else None
        if isinstance(select, tuple):
            out = left.join(right, select=tuple(j + 1 for j in select), name=name)
            return out.rename(*[names[j] for j in select]) if names else out
        if select is not None:
            fn = select
            out = left.join(right, select=lambda key, lv, rv: fn((), lv, rv), name=name)
            return out
        out = left.join(right, name=name)
        return out.map_columns(_drop_key, name=f"{what}: no key", columns=names)

    def _reduce(self, logic, nkey: int, other=None, name=None, columns=None) -> "Collection":
        me = self._align(other, nkey) if other is not None else self
        ins = me._keyed(other, nkey)
        return Collection(Reduce(me.scope, ins, logic, nkey, name), columns)

    def count(self, key_columns: int = 1, name: str | None = None) -> "Collection":
        """``(key, how many records have that key)``; for one-field records, per record.
        ``key_columns=2`` counts per pair of leading fields, and so on; ``key_columns=0``
        (:data:`GLOBAL`) counts the whole collection: one record ``count`` (none while empty).

        >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"])
        >>> out_degree = edges.count().view()
        >>> edges.insert([(1, 2), (1, 3), (2, 3)]); _ = flow.step()
        >>> out_degree.to_dict()
        {(1, 2): 1, (2, 1): 1}
        """
        if key_columns == GLOBAL:
            return self._global("count", name, ["count"])
        names = (self.columns[:key_columns] + ["count"]) if self.columns else None
        return self._reduce(agg.Count(), key_columns, name=name, columns=names)

    def sum(self, key_columns: int = 1, name: str | None = None) -> "Collection":
        """``(key, sum of values)`` over records ``(key, number)``, multiplicities counted;
        ``key_columns=0`` (:data:`GLOBAL`): the sum of one-field records ``number``, one record.

        >>> flow = Dataflow(); sales = flow.input("sales", columns=["shop", "amount"])
        >>> totals = sales.sum().view()
        >>> sales.insert([("a", 5), ("a", 5), ("b", 1)]); _ = flow.step()
        >>> totals.to_dict()
        {('a', 10): 1, ('b', 1): 1}
        """
        if key_columns == GLOBAL:
            return self._global("sum", name, self.columns)
        return self._reduce(agg.Sum(), key_columns, name=name, columns=self.columns)

    def min(self, key_columns: int = 1, name: str | None = None) -> "Collection":
        """``(key, smallest value)`` per key (values compare field by field);
        ``key_columns=0`` (:data:`GLOBAL`): the smallest record of the whole collection.

        >>> flow = Dataflow(); dist = flow.input("dist", columns=["node", "d"])
        >>> best = dist.min().view()
        >>> dist.insert([(1, 4), (1, 2), (2, 7)]); _ = flow.step()
        >>> best.to_dict()
        {(1, 2): 1, (2, 7): 1}
        """
        if key_columns == GLOBAL:
            return self._global("min", name, self.columns)
        return self._reduce(agg.Extreme(largest=False), key_columns, name=name,
                            columns=self.columns)

    def max(self, key_columns: int = 1, name: str | None = None) -> "Collection":
        """``(key, largest value)`` per key (values compare field by field);
        ``key_columns=0`` (:data:`GLOBAL`): the largest record of the whole collection.

        >>> flow = Dataflow(); dist = flow.input("dist", columns=["node", "d"])
        >>> dist.insert([(1, 4), (1, 2), (2, 7)])         # queued until the step
        >>> worst = dist.max().view(); _ = flow.step(); worst.to_dict()
        {(1, 4): 1, (2, 7): 1}
        """
        if key_columns == GLOBAL:
            return self._global("max", name, self.columns)
        return self._reduce(agg.Extreme(largest=True), key_columns, name=name,
                            columns=self.columns)

    def top_k(self, k: int, largest: bool = True, key_columns: int = 1,
              name: str | None = None) -> "Collection":
        """Per key, the ``k`` records with the largest (or smallest) values;
        ``key_columns=0`` (:data:`GLOBAL`): the ``k`` largest records of the whole collection.

        >>> flow = Dataflow(); scores = flow.input("scores", columns=["team", "points"])
        >>> best2 = scores.top_k(2).view()
        >>> scores.insert([("a", 1), ("a", 5), ("a", 3), ("b", 2)]); _ = flow.step()
        >>> sorted(best2.to_dict())
        [('a', 3), ('a', 5), ('b', 2)]
        """
        if key_columns == GLOBAL:
            return self._global("top_k", name, self.columns, k=k, largest=largest)
        return self._reduce(agg.TopK(k, largest), key_columns, name=name, columns=self.columns)

    def distinct(self, name: str | None = None) -> "Collection":
        """Every record with positive multiplicity, once.

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> once = xs.distinct().view()
        >>> xs.insert([1, 1, 2]); _ = flow.step()
        >>> once.to_dict()
        {1: 1, 2: 1}
        """
        out = self._reduce(agg.DISTINCT, WHOLE_RECORD, name=name, columns=self.columns)
        out.op.holds_set = True
        return out

    def threshold(self, fn: Callable, name: str | None = None) -> "Collection":
        """Every record with multiplicity ``fn(multiplicity)`` (numpy-vectorised ``fn``).

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> twice_or_more = xs.threshold(lambda m: (m >= 2).astype(int)).view()
        >>> xs.insert([1, 1, 2]); _ = flow.step()
        >>> twice_or_more.to_dict()
        {1: 1}
        """
        return self._reduce(agg.Threshold(fn, "threshold"), WHOLE_RECORD, name=name,
                            columns=self.columns)

    def union(self, other: "Collection", name: str | None = None) -> "Collection":
        """Multiset union: each record with the larger of its two multiplicities.

        >>> flow = Dataflow(); a = flow.input("a"); b = flow.input("b")
        >>> u = a.union(b).view()
        >>> a.insert([1, 1, 2]); b.insert([1, 3]); _ = flow.step()
        >>> u.to_dict()
        {1: 2, 2: 1, 3: 1}
        """
        return self._set_op(agg.UNION, other, name)

    def intersect(self, other: "Collection", name: str | None = None) -> "Collection":
        """Multiset intersection: each record with the smaller of its two multiplicities.

        >>> flow = Dataflow(); a, b = flow.input("a"), flow.input("b"); both = a.intersect(b)
        >>> a.insert([1, 1, 2]); b.insert([1, 3]); v = both.view(); _ = flow.step(); v.to_dict()
        {1: 1}
        """
        return self._set_op(agg.INTERSECT, other, name)

    def except_(self, other: "Collection", name: str | None = None) -> "Collection":
        """Multiset difference: multiplicity ``max(a - b, 0)`` (SQL ``EXCEPT ALL``).

        >>> flow = Dataflow(); stock, sold = flow.input("stock"), flow.input("sold")
        >>> left = stock.except_(sold).view()
        >>> stock.insert(["pen", "pen", "ink"]); sold.insert(["pen", "cap"])
        >>> _ = flow.step(); left.to_dict()
        {'pen': 1, 'ink': 1}
        """
        return self._set_op(agg.EXCEPT, other, name)

    def _set_op(self, logic, other, name):
        return self._reduce(logic, WHOLE_RECORD, other=other, name=name,
                            columns=self.columns)

    def reduce(self, fn: Callable, key_columns: int = 1, name: str | None = None) -> "Collection":
        """General per-key reducer: ``fn(key, [(value, multiplicity), ...])`` returns
        ``[(value, multiplicity), ...]``; output records are ``(key, value...)``.  With
        ``key_columns=0`` (:data:`GLOBAL`) ``fn((), [(record, multiplicity), ...])`` sees the
        whole collection and its output records are the values it returns.

        >>> flow = Dataflow(); words = flow.input("words", columns=["doc", "word"])
        >>> last = words.reduce(lambda key, vals: [(max(v for v, _ in vals), 1)]).view()
        >>> words.insert([(1, "a"), (1, "bb"), (2, "c")]); _ = flow.step()
        >>> last.to_dict()
        {(1, 'bb'): 1, (2, 'c'): 1}
        """
        if key_columns == GLOBAL:
            return self._global("reduce", name, fn=_whole(fn))
        return self._reduce(agg.UserReduce(fn), key_columns, name=name)

    group_by = reduce

    def cogroup(self, other: "Collection", fn: Callable, name: str | None = None) -> "Collection":
        """General binary reducer: ``fn(key, left_values, right_values)`` returns
        ``[(value, multiplicity), ...]`` (values as in :meth:`reduce`).

        >>> flow = Dataflow()
        >>> a, b = flow.input("a", columns=["k", "v"]), flow.input("b", columns=["k", "w"])
        >>> sizes = a.cogroup(b, lambda key, left, right: [((len(left), len(right)), 1)]).view()
        >>> a.insert([(1, 10), (1, 11)]); b.insert([(1, 20), (2, 21)]); _ = flow.step()
        >>> sizes.to_dict()
        {(1, 2, 1): 1, (2, 0, 1): 1}
        """
        return self._reduce(agg.UserCogroup(fn), 1, other=other, name=name)

    # -- loops -------------------------------------------------------------------------
    def iterate(self, body: Callable[["Collection"], "Collection"], max_iterations: int | None = None,
                name: str | None = None) -> "Collection":
        """Fixed point of ``body`` starting from this collection: ``x0 = self``,
        ``x(i+1) = body(x(i))``, returned once no update is left (nestable).

        >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"])
        >>> roots = flow.input("roots")
        >>> reach = roots.iterate(lambda r: r.concat(
        ...     r.map(lambda x: (x, 0)).join(edges, select=(2,))).distinct()).view()
        >>> edges.insert([(1, 2), (2, 3), (4, 5)]); roots.insert([1]); _ = flow.step()
        >>> sorted(reach.to_dict())
        [1, 2, 3]
        """
        loop = self.flow.loop(name or "iterate", max_iterations, within=self)
        var = loop.variable(self)
        result = var.set(body(var))  # set() enters a result built outside the loop
        return loop.leave(result)

    def prioritize(self, priority, body: Callable[["Collection"], "Collection"],
                   max_iterations: int | None = None, name: str | None = None) -> "Collection":
        """Prioritized fixed point (CIDR 2013): records enter in increasing ``priority``, each
        class starting from the fixed point reached with the classes before it; times
        ``(priority, iteration)`` compare lexicographically.  ``priority`` is a field position
        holding non-negative integers, or a column-wise ``fn(*numpy_fields) -> int array``.

        >>> flow = Dataflow(); xs = flow.input("xs", columns=["x", "p"])
        >>> out = xs.prioritize(1, lambda v: v.distinct()).view()
        >>> xs.insert([(5, 1), (6, 0)]); _ = flow.step()
        >>> out.to_dict()
        {(5, 1): 1, (6, 0): 1}
        """
        loop = self.flow.loop(name or "prioritize", max_iterations, prioritized=True, within=self)
        var = loop.variable(self, priority=priority)
        result = var.set(body(var))  # set() enters a result built outside the loop
        return loop.leave(result)

    def leave(self) -> "Collection":
        """This collection taken out of its loop: its value at the fixed point.

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> loop = flow.loop("halve"); x = loop.variable(xs)
        >>> halved = x.set(x.map(lambda v: v // 2).distinct())
        >>> out = halved.leave().view()
        >>> xs.insert([8]); _ = flow.step()
        >>> out.to_dict()
        {0: 1}
        """
        if self.scope.parent is None:
            raise DataflowError(f"{self!r} is not inside a loop")
        return Collection(Leave(self.scope.parent, self.op), self.columns)

    # -- outputs -----------------------------------------------------------------------
    def history(self):
        """The updates ``(fields..., time, diff)`` this collection's arrangement retains
        (compacted: times before the last completed epoch read as that epoch).  Inside loops
        the time shows every coordinate, e.g. ``(epoch, iteration)``: the lattice trace.

        >>> flow = Dataflow(); xs = flow.input("xs", columns=["x"])
        >>> arranged = xs.arrange(); _ = arranged.view()
        >>> xs.insert([1, 2]); _ = flow.step(); xs.remove([1]); _ = flow.step()
        >>> print(arranged.history().to_string(index=False))
         x time  diff
         2 (1,)     1
        """
        trace = getattr(self.op, "trace", None)
        if trace is None:
            arranged = next(iter(self.op.arrangements.values()), None)
            trace = arranged.trace if arranged is not None else None
        if trace is None:
            raise DataflowError(f"{self!r} keeps no trace; build it with .arrange() (before "
                                "stepping) to inspect its history")
        rows = trace.compacted_rows()
        names = self.columns if self.columns and len(self.columns) == len(rows.cols) else [
            f"c{j}" for j in range(len(rows.cols))]
        names = unique_names(names, reserved=("time", "diff"))
        interner = self.flow.interner
        data = {n: decode_column(c, k, interner)
                for n, c, k in zip(names, rows.cols, trace.kinds or ())}
        data["time"] = [self.scope.describe_time(tuple(t)) for t in rows.times.tolist()]
        data["diff"] = rows.diffs
        return pd.DataFrame(data)

    def view(self, name: str | None = None):
        """A materialized view of this collection, exact after every step.

        >>> flow = Dataflow(); xs = flow.input("xs", columns=["x"])
        >>> v = xs.view(); xs.insert([3, 3]); _ = flow.step()
        >>> v.to_dict(), len(v), v.epoch
        ({3: 2}, 1, 1)
        """
        if self.scope.parent is not None:
            raise DataflowError(f"{self!r} is inside loop {self.scope.path!r}; views read "
                                "collections outside loops (use leave() first)")
        sink = ViewSink(self.scope, self.op, name or f"view of {self.op.name}")
        self.flow.add_view(sink)
        return View(sink, self)

    def subscribe(self, fn: Callable[[list], None], name: str | None = None) -> "Collection":
        """Call ``fn(updates)`` after every step with that epoch's ``(record, time, diff)``s.

        Subscribers are called once the epoch has committed.  If ``fn`` raises, the epoch
        stands (views and ``flow.epoch`` show it), every other subscriber still receives that
        epoch's updates with their true times, and ``step()`` then raises
        :class:`~ddlab.engine.errors.SubscriberError` naming this subscriber and saying the
        epoch committed (a ``KeyboardInterrupt`` is re-raised as itself, with that note).
        The failing subscriber has been handed its updates once; it is not called again for
        that epoch.

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> _ = xs.subscribe(lambda updates: print(updates))
        >>> xs.insert([4]); _ = flow.step()
        [(4, (0,), 1)]
        """
        if self.scope.parent is not None:
            raise DataflowError(f"{self!r} is inside a loop; subscribe to it after leave()")
        sink = SubscribeSink(self.scope, self.op, fn, name or f"subscriber of {self.op.name}")
        self.flow.add_subscriber(sink)
        return self


def bring_into(scope, other: Collection, nkey: int | None = None) -> Collection:
    """``other`` as seen from ``scope``: itself, or entered if it lives in an enclosing scope
    (through its arrangement by ``nkey`` fields when a keyed operator will read it)."""
    if other.flow is not scope.flow:
        raise DataflowError(f"{other!r} belongs to another Dataflow")
    if other.scope is scope:
        return other
    if not scope.is_within(other.scope):
        raise DataflowError(
            f"{other!r} is defined inside loop {other.scope.path!r}, which is not around "
            f"{scope.path!r}; take it out of the loop with leave(), or build the loop inside "
            f"that one (enter its seed first: seed.enter(collection_in_the_loop).iterate(...))")
    source = other.arrange(nkey).op if nkey is not None else other.op
    entered = source.entered.get(id(scope))
    if entered is None:
        entered = source.entered[id(scope)] = Enter(scope, source)
    return Collection(entered, other.columns)
