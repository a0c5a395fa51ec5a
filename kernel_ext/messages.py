"""How the kernel extension speaks to people: one error type, one "did you mean", one hint.

Why a module of its own: every command reports a user mistake the same way (what was wrong,
then a hint how to fix it, one line each), and the same three helpers build those lines
everywhere.  The magics turn a :class:`SessionError` into IPython's one-line ``UsageError``.
"""
from __future__ import annotations

import difflib

__all__ = ["SessionError", "suggest", "hint", "first_line", "plural"]


class SessionError(Exception):
    """A user mistake: ``message`` says what was wrong, ``hint`` how to fix it (one line each).

    >>> str(SessionError("no collection 'edgs'.", "Did you mean 'edges'?"))
    "no collection 'edgs'. Hint: Did you mean 'edges'?"
    """

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message + (f" Hint: {self.hint}" if self.hint else "")


def suggest(word: str, candidates, what: str = "") -> str | None:
    """``"did you mean 'edges'?"`` for the closest candidate (or a case-insensitive match),
    or ``None``.

    >>> suggest("edgs", ["edges", "cc"])
    "did you mean 'edges'?"
    >>> suggest("xyz", ["edges"]) is None
    True
    """
    cands = [str(c) for c in candidates]
    close = difflib.get_close_matches(str(word), cands, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in cands}
        if str(word).lower() in lowered:
            close = [lowered[str(word).lower()]]
    if not close:
        return None
    return f"did you mean {what}{close[0]!r}?"


def hint(suggestion: str | None, rest: str = "") -> str:
    """A hint line: the suggestion (if any) as a sentence, then ``rest``.

    >>> hint(suggest("edgs", ["edges"]), "Declared: edges.")
    "Did you mean 'edges'? Declared: edges."
    >>> hint(None, "Declared: edges.")
    'Declared: edges.'
    """
    if not suggestion:
        return rest
    return suggestion[0].upper() + suggestion[1:] + (" " + rest if rest else "")


def first_line(err: BaseException) -> str:
    """The first line of an error's text (its type's name when it has none).

    >>> first_line(ValueError("bad row\\nmore detail")), first_line(KeyError())
    ('bad row', 'KeyError')
    """
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def plural(n: int, word: str) -> str:
    """``"1 record"``, ``"2 records"``, with thousands separators.

    >>> plural(1, "epoch"), plural(1200, "update")
    ('1 epoch', '1,200 updates')
    """
    return f"{n:,} {word if n == 1 else word + 's'}"
