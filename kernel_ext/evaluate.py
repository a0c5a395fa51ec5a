"""Evaluating a ``%%dd NAME`` cell body: Python whose last expression is the collection.

Why a module of its own: the body runs in a namespace built for one flow (declared names
bound to that flow's collections, ``ddlab.algorithms`` available, collections of other flows
masked), and every way it can fail becomes a one-line :class:`SessionError`.
"""
from __future__ import annotations

import ast

from ddlab.engine import DataflowError

from .messages import SessionError, first_line, hint, suggest

__all__ = ["evaluate", "Unavailable", "algorithm_names"]

_ALGOS: dict | None = None


def algorithm_names() -> dict:
    """``ddlab.algorithms``' public names, visible in every cell body (a fresh dict)."""
    global _ALGOS
    if _ALGOS is None:
        from ddlab.engine import algorithms

        _ALGOS = {n: getattr(algorithms, n) for n in algorithms.__all__}
    return dict(_ALGOS)


class Unavailable:
    """Stands in, while a body is evaluated, for a namespace collection that is not a
    declaration of the flow being built; any use raises a clear SessionError.

    ``python_built``: it is a collection of the running flow made in plain Python (so the
    hint says to declare it), rather than a dropped or stale one."""

    def __init__(self, name: str, building: str, python_built: bool):
        self._name, self._building, self._python = name, building, python_built

    def _fail(self):
        if self._python:
            return SessionError(
                f"{self._building}: {self._name!r} is a collection of the running dataflow "
                f"built in Python; a %%dd body can only use declared collections.",
                f"Declare it with %%dd {self._name} (its expression as the body), then use it.")
        return SessionError(
            f"{self._building}: {self._name!r} is not a declared collection here (dropped, "
            f"declared later, or from another dataflow).",
            "Use the declared collections (see %dd status).")

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise self._fail()

    def __repr__(self):
        return f"<unavailable collection {self._name}>"


def evaluate(body: str, ns: dict, name: str):
    """Run the cell body in ``ns``; its value is the last expression (or what it assigned to
    ``name``).

    >>> evaluate("x = 2\\nx * 21", {}, "answer")
    42
    >>> evaluate("answer = 7", {}, "answer")
    7
    """
    where = f"<%%dd {name}>"
    try:
        tree = ast.parse(body, filename=where)
    except SyntaxError as err:
        at = f"line {err.lineno}" if err.lineno else "the body"
        raise SessionError(f"{name}: syntax error at {at}: {err.msg}.",
                           "The cell body is Python: an expression such as "
                           "connected_components(edges).") from None
    if not tree.body:
        raise SessionError(f"{name}: the cell body is empty.",
                           "Write an expression over declared collections, e.g. "
                           "connected_components(edges).")
    last = tree.body[-1]
    try:
        if isinstance(last, ast.Expr):
            head = ast.Module(body=tree.body[:-1], type_ignores=[])
            exec(compile(head, where, "exec"), ns)
            return eval(compile(ast.Expression(last.value), where, "eval"), ns)
        exec(compile(tree, where, "exec"), ns)
    except SessionError:
        raise
    except NameError as err:
        missing = err.name
        pool = [k for k in ns if not k.startswith("_")]
        raise SessionError(f"{name}: the cell body raised NameError: {err}.",
                           hint(suggest(missing, pool) if missing else None,
                                "Collections declared later, or dropped, are not visible.")
                           ) from err
    except DataflowError as err:
        raise SessionError(f"{name}: the engine refused the body: {first_line(err)}",
                           "Nothing was declared.") from err
    except Exception as err:
        raise SessionError(f"{name}: the cell body raised {type(err).__name__}: "
                           f"{first_line(err)}", "Nothing was declared; fix the body and "
                           "run the cell again.") from err
    if name in ns:
        return ns[name]
    raise SessionError(f"{name}: the cell must end with an expression (or assign {name}).",
                       "E.g. end the cell with connected_components(edges).")
