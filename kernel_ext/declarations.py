"""What the user declared: the session's source of truth, from which every flow is built.

Why: a declaration records *where* an input's records come from, or the *source text* of a
derived collection, never live engine objects.  So the session can rebuild the dataflow from
them at any time (a redefinition, a drop, ``%dd rebuild``) beside the running one.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import pandas as pd

__all__ = ["InputDecl", "DerivedDecl", "RESERVED", "mentions"]  # noqa: F822  (RESERVED: __getattr__)



def __getattr__(name):
    """``RESERVED``: the words that are commands of ``%dd`` (and ``help``) and so cannot name a
    collection, from the command table itself (computed on first use: the commands import
    this module)."""
    if name == "RESERVED":
        from .commands import CELL_COMMANDS, COMMANDS

        return frozenset(COMMANDS) | frozenset(CELL_COMMANDS) | {"help"}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class InputDecl:
    """Where an input's records come from.

    ``initial``: the records loaded at declaration (fields + ``diff``), queued for the first
    step; ``batches``: a Spark window (``WindowBatches``) fed one position per epoch.
    """

    name: str
    columns: list[str]
    source: str = "empty"              # one line for humans: "collegemsg (Spark)", "DataFrame df"
    kind: str = "empty"                # empty | pandas | spark
    initial: pd.DataFrame | None = None
    batches: Any = None
    report: Any = None                 # a sources LoadReport, when Spark loaded it
    seconds: float = 0.0               # how long loading took
    request: dict | None = None        # the %dd input options, when they name a dataset, a
                                       # path or SQL (so %dd load can read the source again)

    @property
    def windowed(self) -> bool:
        return self.batches is not None

    def release(self) -> None:
        """Free what loading kept on Spark (the window's cached batches), if anything."""
        if self.batches is not None:
            try:
                self.batches.unpersist()
            except Exception:  # pragma: no cover - Spark already gone
                pass


@dataclass
class DerivedDecl:
    """A collection defined by the source text of an engine expression."""

    name: str
    body: str
    arrange: bool = True
    #: declarations sharing a group share one evaluation of ``body`` per build, whose value
    #: maps each member's name to its collection (a ``%%dd rules`` cell's outputs)
    group: str | None = None


def mentions(body: str, name: str) -> bool:
    """Whether a cell body uses the Python name ``name`` (text search if it does not parse).

    >>> mentions("connected_components(edges)", "edges"), mentions("cc2 + 1", "cc")
    (True, False)
    """
    try:
        return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(ast.parse(body)))
    except SyntaxError:
        return name in body
