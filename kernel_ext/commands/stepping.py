"""``%dd step``, ``%dd insert``, ``%dd remove``: closing epochs.

Why together: each closes one or more epochs of the session's flow (moving the windows, or
applying rows the user gives) and answers with a
:class:`~ddlab.kernel_ext.display.results.StepSummary`, one line per epoch.
"""
from __future__ import annotations

import ast

from IPython.core.magic_arguments import argument, magic_arguments

from ..display.results import StepSummary
from ..epochs import StepResult
from ..messages import SessionError, hint, plural, suggest

__all__ = ["step", "insert", "remove"]


@magic_arguments(name="dd step")
@argument("n", nargs="?", type=int, default=1,
          help="window positions to move (negative: backward; 0: apply queued rows only); "
               "one epoch per position")
@argument("--to", type=int, metavar="K", help="jump every window to position K in one "
                                             "epoch (-1: empty)")
def step(magics, line, ns):
    """Close epochs: move the windows (one epoch per position) or apply queued rows.

    Each epoch reports one line: per declared collection its additions and
    retractions, and the time taken.  Example: %dd step 3   (or %dd step -1)
    """
    args = magics.parse(step, line)
    if args is None:
        return None
    s = magics.session
    if not s.names:
        raise SessionError("nothing to step: no collection is declared.",
                           "Start with %dd input NAME --from SOURCE.")
    with magics.progress_row("%dd step") as progress:
        if args.to is not None:
            result = s.seek(args.to, progress)
        else:
            result = s.step(args.n, progress)
    return StepSummary(result)


@magic_arguments(name="dd insert")
@argument("name", help="an input collection")
@argument("rows", nargs="*", help="a Python literal such as [(1, 2), (2, 3)], or the "
                                  "name of a DataFrame/list variable")
@argument("--no-step", action="store_true", help="only queue the rows (the next step "
                                                 "applies them with everything else)")
def insert(magics, line, ns):
    """Insert rows into an input and close one epoch.  Example:
    %dd insert edges [(1, 2), (2, 3)]     or     %dd insert edges new_edges_df
    """
    return _change(magics, insert, line, ns, +1)


@magic_arguments(name="dd remove")
@argument("name", help="an input collection")
@argument("rows", nargs="*", help="a Python literal such as [(1, 2)], or the name of a "
                                  "DataFrame/list variable")
@argument("--no-step", action="store_true", help="only queue the removal")
def remove(magics, line, ns):
    """Remove rows from an input and close one epoch.  Example:
    %dd remove edges [(2, 3)]
    """
    return _change(magics, remove, line, ns, -1)


def _change(magics, command, line, ns, diff):
    args = magics.parse(command, line)
    if args is None:
        return None
    verb = "insert" if diff > 0 else "remove"
    s = magics.session
    if args.name not in s.inputs and args.name not in s.derived:
        raise s.unknown(args.name, "input")
    if not args.rows:
        raise SessionError(f"%dd {verb} {args.name}: no rows given.",
                           f"E.g. %dd {verb} {args.name} [(1, 2), (2, 3)], or a DataFrame "
                           "variable.")
    arity = len(s.inputs[args.name].columns) if args.name in s.inputs else 0
    rows = read_rows(" ".join(args.rows), ns, f"%dd {verb} {args.name}", arity)
    result = s.insert(args.name, rows, diff, step=not args.no_step)
    if result is None:
        result = StepResult([], f"{plural(len(rows), 'row')} queued on {args.name} "
                                f"({s.pending(args.name):,} updates queued in all); "
                                f"%dd step applies them")
    return StepSummary(result)


def read_rows(text: str, ns: dict, where: str, arity: int):
    """The rows a command names: a DataFrame or list variable of ``ns``, or a Python literal
    (one tuple of ``arity`` fields counts as one row).

    >>> read_rows("[(1, 2), [2, 3]]", {}, "%dd insert e", 2)
    [(1, 2), (2, 3)]
    >>> read_rows("(1, 2)", {}, "%dd insert e", 2), read_rows("7", {}, "%dd insert n", 1)
    ([(1, 2)], [7])
    """
    import pandas as pd

    text = text.strip()
    if text.isidentifier():
        if text not in ns:
            pool = [k for k, v in ns.items() if isinstance(v, (pd.DataFrame, list))
                    and not k.startswith("_")]
            raise SessionError(f"{where}: no variable {text!r}.",
                               hint(suggest(text, pool), "Give a DataFrame/list variable or a "
                                                         "literal like [(1, 2)]."))
        value = ns[text]
    else:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            raise SessionError(f"{where}: cannot read the rows {text[:60]!r}.",
                               "Write a Python literal such as [(1, 2), (2, 3)] (or "
                               "(1, 2) for one row).") from None
    if isinstance(value, pd.DataFrame):
        return value
    if isinstance(value, tuple) and arity > 1 and len(value) == arity and not any(
            isinstance(v, (tuple, list)) for v in value):
        return [value]                               # one row, e.g. (1, 2)
    if isinstance(value, (list, tuple, set)):
        return [tuple(v) if isinstance(v, list) else v for v in value]
    if arity == 1:
        return [value]
    raise SessionError(f"{where}: rows must be a list of tuples or a DataFrame, "
                       f"not {type(value).__name__}.", "E.g. [(1, 2), (2, 3)].")
