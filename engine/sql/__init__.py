"""SQL over collections: ``sql(text, inputs)`` parses a query with sqlglot (Spark's dialect
by default), translates it to a logical plan (:mod:`ddlab.engine.plan`) and lowers the plan
onto the inputs' flow; the result is an ordinary collection, kept up to date step by step.

The language: SELECT / FROM / WHERE; inner, LEFT, RIGHT and FULL joins; [NOT] EXISTS and
[NOT] IN subqueries (correlated through equalities; NOT IN with SQL's NULL rules); GROUP BY
(columns, expressions, positions, aliases) with COUNT, COUNT(DISTINCT), SUM, MIN, MAX, AVG;
HAVING; DISTINCT; UNION [ALL], EXCEPT [ALL], INTERSECT [ALL]; arithmetic, comparisons,
AND / OR / NOT with three-valued logic, IS [NOT] NULL, BETWEEN, IN (list), LIKE / ILIKE,
CASE, IF, COALESCE, ABS, LOWER, UPPER, LENGTH, TRIM, SUBSTRING, CONCAT and ``||``, LEAST,
GREATEST, YEAR, MONTH, DAY, DATE_ADD / DATE_SUB, DATEDIFF, TO_DATE; WITH and WITH RECURSIVE
(mutually recursive CTEs share one engine loop; the recursion must be monotone and use
UNION); ORDER BY ... LIMIT k (a maintained top-k) and ``ROW_NUMBER() OVER (PARTITION BY ...
ORDER BY ...)`` read with ``rn <= k``.  Anything else raises :class:`SqlError` naming the
construct, its line and column, before anything is built.  Division or remainder by zero
gives NULL (Spark's non-ANSI rule).

Values: every number of a SQL result is *boxed* (it prints and compares as the plain
number); NULL is ``None``; see :mod:`ddlab.engine.plan.values` for why.  An input column
holding NULLs beside numbers must be given boxed rows (``box_row``).  Results are multisets
(SQL's bags): a maintained collection has no order, so ORDER BY matters only with LIMIT.
"""
from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from ..collection import Collection
from ..errors import DataflowError
from ..plan import Lowering, explain as explain_plan
from ..plan.values import NULL, box_row, plain
from .errors import SqlError
from .translate import Translator

__all__ = ["sql", "parse", "SqlQuery", "SqlError", "NULL", "box_row", "plain"]


def parse(text: str, inputs: dict, dialect: str = "spark"):
    """The logical plan of ``text`` over ``inputs`` (name -> field names), building
    nothing; raises :class:`SqlError`.  Returns ``(plan, translator)``."""
    try:
        statements = [s for s in sqlglot.parse(text, read=dialect) if s is not None]
    except (ParseError, TokenError) as err:
        info = (getattr(err, "errors", None) or [{}])[0]
        raise SqlError(f"cannot parse: {info.get('description') or err}",
                       info.get("line"), info.get("col"), text) from None
    if len(statements) != 1:
        raise SqlError(f"a SQL cell holds one query, not {len(statements)}", 1, 1, text)
    tree = statements[0]
    if not isinstance(tree, (exp.Select, exp.Union, exp.Except, exp.Intersect, exp.Subquery)):
        raise SqlError.at(text, tree, f"the statement {tree.key.upper()} is not supported in "
                                      "SQL cells (only queries)")
    tr = Translator(text, inputs)
    return tr.query(tree), tr


def sql(text: str, inputs: dict, *, dialect: str = "spark", name: str = "sql") -> "SqlQuery":
    """Maintain the query ``text`` over ``inputs`` (table name -> collection with named
    columns); returns a :class:`SqlQuery` whose ``.result`` is the answer's collection.

    >>> from ddlab import Dataflow
    >>> flow = Dataflow(); emp = flow.input("emp", columns=["name", "dept", "pay"])
    >>> q = sql("SELECT dept, COUNT(*) AS n, SUM(pay) AS total FROM emp "
    ...         "GROUP BY dept HAVING COUNT(*) > 1", {"emp": emp})
    >>> view = q.result.view()
    >>> emp.insert([("ann", "eng", 10), ("bob", "eng", 20), ("cy", "ops", 5)]); _ = flow.step()
    >>> view.to_dict()
    {('eng', 2, 30): 1}
    """
    inputs = dict(inputs or {})
    for key, coll in inputs.items():
        if not isinstance(coll, Collection):
            raise TypeError(f"input {key!r} is a {type(coll).__name__}, not a Collection")
        if coll.scope.parent is not None:
            raise DataflowError(f"input {key!r} is inside a loop; leave() it first")
    flows = {id(c.flow): c.flow for c in inputs.values()}
    if len(flows) != 1:
        raise DataflowError("SQL needs inputs from exactly one Dataflow" if flows else
                            "SQL needs at least one input collection")
    columns = {}
    for key, coll in inputs.items():
        if not coll.columns:
            raise DataflowError(f"input {key!r} has no column names; declare them "
                                f"(flow.input(..., columns=[...]) or .rename(...))")
        columns[key] = list(coll.columns)
    plan, tr = parse(text, columns, dialect)
    flow = next(iter(flows.values()))
    lowering = Lowering(flow, {k: inputs[k] for k in tr.used}, prefix=f"{name}: ")
    result = lowering.lower(plan)
    return SqlQuery(text, plan, lowering, result, flow, name)


class SqlQuery:
    """A maintained query: ``result`` (the collection), ``plan``, :meth:`explain`,
    ``loops`` (the engine loops of its recursive CTEs).  ``query[name]`` is ``result``
    too (``name`` as given to :func:`sql`): how ``%%dd sql NAME`` reads it."""

    def __init__(self, text, plan, lowering, result, flow, name="sql"):
        self.text, self.plan, self.result, self.flow = text, plan, result, flow
        self.name = name
        self._lowering = lowering

    def __getitem__(self, name: str) -> Collection:
        if name != self.name:
            raise KeyError(f"this query is named {self.name!r}, not {name!r}")
        return self.result

    @property
    def used(self) -> list:
        """The input names the query reads."""
        return sorted(self._lowering.inputs)

    @property
    def columns(self) -> list:
        return list(self.plan.columns)

    @property
    def loops(self) -> list:
        return list(self._lowering.loops)

    def explain(self) -> str:
        """The plan as a tree, each node with the engine operators it became."""
        return explain_plan(self.plan, self._lowering.operators,
                            fused=self._lowering.fused)

    def __repr__(self) -> str:
        return f"<SqlQuery {', '.join(self.columns)}; loops {', '.join(self.loops) or 'none'}>"
