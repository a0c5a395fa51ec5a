"""``%%dd sql NAME``: a SQL query over declared collections, maintained as they change;
``%dd explain NAME``: the plan of a SQL (or rules) collection and the operators it became.

Why thin, like ``%%dd rules``: the translator and the lowering are ``ddlab.engine.sql``; this
command checks the query against the declared collections (an error shows its line, column
and caret before anything is built), then declares NAME as a derived collection whose body
is ``sql(TEXT, {...declared inputs...}, name=NAME)``, so rebuilds, window moves, ``%dd
drop``, ``%dd why`` and ``%dd save`` treat it like any ``%%dd NAME`` collection.
"""
from __future__ import annotations

from html import escape

from IPython.core.magic_arguments import argument, magic_arguments

from ddlab.engine.sql import SqlError, parse

from ..declarations import DerivedDecl
from ..display.results import Declared, ShowResult, StepSummary
from ..messages import SessionError

__all__ = ["sql_cell", "explain"]


@magic_arguments(name="%dd sql")
@argument("name", help="the result's name (a declared collection and a Python variable)")
@argument("--dialect", default="spark",
          help="sqlglot dialect of the query (default: spark)")
@argument("--no-step", action="store_true",
          help="do not run the first step even if updates are queued")
def sql_cell(magics, line, cell, ns):
    """A SQL query (Spark's dialect) over declared collections, kept up to date as they
    change and windows move; its result is the declared collection NAME.

    %%dd sql per_dept
    SELECT dept, COUNT(*) AS n FROM emp GROUP BY dept

    Tables are the declared collections (their columns as declared).  Joins (inner and
    outer), [NOT] EXISTS / IN, GROUP BY with COUNT/SUM/MIN/MAX/AVG, HAVING, DISTINCT, set
    operations, CASE, COALESCE, WITH [RECURSIVE], ORDER BY ... LIMIT (a maintained top-k)
    and ROW_NUMBER() OVER (...) <= k: see help(ddlab.engine.sql).
    """
    args = magics.parse(sql_cell, line)
    if args is None:
        return None
    if not cell.strip():
        raise SessionError("%%dd sql: the cell is empty.",
                           "Write a query, e.g. SELECT dept, COUNT(*) AS n FROM emp GROUP BY dept")
    s = magics.session
    name = args.name
    available = {n: list(h.collection.columns or ()) for n, h in s.state.handles.items()
                 if h.collection.columns}
    try:
        plan, tr = parse(cell, available, args.dialect)
    except SqlError as err:
        raise SessionError(f"%%dd sql {name}: {err}") from err
    if name in s.inputs:
        raise SessionError(f"%%dd sql: {name!r} is a declared input.",
                           "Give the query's result another name.")
    s.check_name(name, derived=True)
    magics.check_free(name)
    old = s.derived.get(name)
    group = old.group if old is not None and old.group else f"sql-{name}"
    decl = DerivedDecl(name, _body(cell, sorted(tr.used), name, args.dialect), group=group)
    old_epoch = s.flow.epoch
    with magics.progress_row(f"%%dd sql {name}") as progress:
        _, result = s.declare_derived(decl, ns, progress, first_step=not args.no_step)
    magics.publish(name)
    h = s.handle(name)
    text = [f"sql: {name} ({', '.join(plan.columns)}) from {', '.join(sorted(tr.used))}",
            f"built {h.info.summary()}; loops: "
            f"{', '.join(p.split('/', 1)[1] for p in h.info.loops) or 'none'}; "
            f"%dd explain {name} shows the plan"]
    if old_epoch > 0:
        text.append(f"the flow was rebuilt and brought back to epoch {old_epoch - 1} by "
                    "replaying the inputs")
    html = [f"<b>{escape(name)}</b> \u2190 sql \u00b7 derived"] + [escape(t) for t in text[1:]]
    first = StepSummary(result) if result else None
    show = ShowResult(name, h.view.to_pandas(), h.view.epoch, min(10, magics.display_limit))
    return Declared(name, html, text, first=first, show=show)


def _body(text: str, sources, name: str, dialect: str) -> str:
    """The Python body the session evaluates: the query over the declared collections."""
    inputs = "{" + ", ".join(f"{n!r}: {n}" for n in sources) + "}"
    return (f"from ddlab.engine.sql import sql\nSQL = {text!r}\n"
            f"sql(SQL, {inputs}, dialect={dialect!r}, name={name!r})")


@magic_arguments(name="dd explain")
@argument("name", help="a collection declared by %%dd sql (or %%dd rules)")
def explain(magics, line, ns):
    """The plan of a %%dd sql (or %%dd rules) collection and the engine operators it
    became (their labels are those of %dd graph and %dd stats)."""
    args = magics.parse(explain, line)
    if args is None:
        return None
    s = magics.session
    handle = s.handle(args.name)
    program = handle.group_value
    if program is None or not hasattr(program, "explain"):
        raise SessionError(f"{args.name} was not declared by %%dd sql or %%dd rules; it has "
                           "no plan to explain.", "%dd graph shows its operators.")
    return Explained(args.name, program.explain())


class Explained:
    """``%dd explain``'s answer: the plan as indented text."""

    def __init__(self, name: str, text: str):
        self.name, self.text = name, text

    def __repr__(self) -> str:
        return f"{self.name}:\n{self.text}"

    def _repr_html_(self) -> str:
        return f"<b>{escape(self.name)}</b><pre>{escape(self.text)}</pre>"
