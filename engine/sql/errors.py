"""The error of a SQL cell: what is wrong, at which line and column, with a caret."""
from __future__ import annotations

from ..errors import DataflowError

__all__ = ["SqlError"]


class SqlError(DataflowError, ValueError):
    """A query ddlab cannot maintain (a parse error, an unknown table or column, a construct
    outside the supported language); ``line`` and ``column`` count from 1.  Raised before
    anything is built."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None,
                 text: str = ""):
        self.reason, self.line, self.column = message, line, column
        where = f"line {line}, column {column}: " if line else ""
        caret = ""
        if line and text:
            lines = text.splitlines()
            if 0 < line <= len(lines):
                caret = f"\n  {lines[line - 1]}\n  {' ' * (max(column, 1) - 1)}^"
        super().__init__(f"{where}{message}{caret}")

    @classmethod
    def at(cls, text: str, node, message: str) -> "SqlError":
        """An error at the first position sqlglot recorded in ``node`` (or under it)."""
        line, column = position(node)
        return cls(message, line, column, text)


def position(node):
    """``(line, column)`` of the first token sqlglot kept for ``node`` or its descendants
    (sqlglot's ``col`` is the token's last character; we give its first)."""
    best = None
    walker = node.walk() if hasattr(node, "walk") else ()
    for n in walker:
        meta = getattr(n, "_meta", None) or {}
        if "line" in meta and "start" in meta:
            if best is None or meta["start"] < best["start"]:
                best = meta
    if best is None:
        return None, None
    width = best["end"] - best["start"] + 1
    return best["line"], max(best["col"] - width + 1, 1)
