"""Errors of the rules compiler: each says what is wrong, where (line, column, the line with a
caret under the place), and what to do.

Why a class per kind: tests and tools can tell them apart (``except UnstratifiableError``),
and the notebook shows the whole message (``str(err)``), which is written for a person.
All but one are raised before any operator exists, so a failing cell declares nothing; the one
raised while the flow runs (:class:`RulesRuntimeTypeError`: values of a type a comparison or
an operator cannot take) reaches the person inside the engine's ``OperatorError``, the epoch
rolled back.
"""
from __future__ import annotations

from .ast import Pos


class RulesError(ValueError):
    """Base of every rules-compiler error.  ``line``/``column`` locate it (or are None)."""

    kind = "error"
    #: a machine-readable name of the error class (tools and conformance suites match on it)
    code = "rules_error"

    def __init__(self, message: str, text: str | None = None, pos: Pos | None = None,
                 hint: str | None = None):
        self.message, self.pos, self.hint = message, pos, hint
        self.line = pos.line if pos else None
        self.column = pos.column if pos else None
        super().__init__(render(message, text, pos, hint))


class RulesSyntaxError(RulesError):
    """The text does not parse (the message names what was expected)."""

    kind = "syntax error"
    code = "syntax_error"


class UnknownRelationError(RulesError):
    """A relation is used but has no rules, facts or ``.input``; or an ``.input`` names a
    collection that was not given; or an ``.output`` names nothing defined."""

    kind = "unknown relation"
    code = "unknown_relation"


class ArityError(RulesError):
    """A relation is used with different numbers of fields (or differs from its input)."""

    kind = "arity mismatch"
    code = "arity_mismatch"


class UnsafeRuleError(RulesError):
    """A variable is not bound by a positive atom: only in the head, only under negation,
    or only in a comparison."""

    kind = "unsafe rule"
    code = "unbound_variable"


class UnstratifiableError(RulesError):
    """A cycle of the dependency graph goes through a negation (no stratification)."""

    kind = "unstratifiable"
    code = "cyclic_negation"


class AggregateError(RulesError):
    """An aggregate is misused: ``count``/``sum`` inside recursion (not monotone), two in one
    head, an unknown aggregate, or a count/sum relation with several rules."""

    kind = "aggregate"
    code = "aggregate_misuse"


class RulesTypeError(RulesError):
    """A constant does not fit a ``.decl`` type (a string in a ``number`` field, ...)."""

    kind = "type mismatch"
    code = "type_mismatch"


class RulesRuntimeTypeError(RulesError):
    """While the flow ran, a comparison or an arithmetic operator met values it cannot take
    together (a symbol compared with a number): the message names the rule's line and column,
    the expression and the two types."""

    kind = "type mismatch at run time"
    code = "runtime_type_mismatch"


class UnknownFunctorError(RulesError):
    """A call names no functor (or gives it the wrong number of arguments)."""

    kind = "unknown functor"
    code = "unknown_functor"


class UnsupportedError(RulesError):
    """A construct of Soufflé's language that ddlab does not run: the message names it, the
    place, and the way to write the program without it."""

    kind = "not supported"
    code = "unsupported"


def render(message: str, text: str | None, pos: Pos | None, hint: str | None) -> str:
    """``line L, column C: message``, the source line, a caret under the column, the hint."""
    head = f"line {pos.line}, column {pos.column}: {message}" if pos else message
    parts = [head]
    if pos and text is not None:
        lines = text.splitlines()
        if 1 <= pos.line <= len(lines):
            src = lines[pos.line - 1].replace("\t", " ")
            width = 1
            if pos.end_column and pos.end_column > pos.column:
                width = pos.end_column - pos.column
            parts.append(f"    {src}")
            parts.append("    " + " " * (pos.column - 1) + "^" * width)
    if hint:
        parts.append(f"Hint: {hint}")
    return "\n".join(parts)
