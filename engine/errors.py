"""Errors the engine raises.  Each names what was wrong and where; after any of them the
dataflow reads exactly as it did before the call or the epoch that failed."""
from __future__ import annotations


class DataflowError(Exception):
    """Base class of every ddlab engine error."""


class InputError(DataflowError, ValueError):
    """Rows given to an input (or produced by a user function) do not fit the collection:
    wrong arity, an unhashable value, or mixed types in one column."""


class SchemaError(DataflowError, TypeError):
    """Two batches of one collection, or the two sides of a keyed operator, disagree on a
    column's type (e.g. joining integer keys with string keys)."""


class OperatorError(DataflowError):
    """A user function raised while an operator applied it; names the operator and the row.
    The epoch is rolled back; the original exception is the ``__cause__``."""

    def __init__(self, message: str, operator: str | None = None, row=None):
        super().__init__(message)
        self.operator = operator
        self.row = row


class NonConvergenceError(DataflowError):
    """A loop did not reach its fixed point within its iteration bound; the epoch is rolled back."""

    def __init__(self, message: str, loop: str | None = None, bound: int | None = None):
        super().__init__(message)
        self.loop = loop
        self.bound = bound


class SubscriberError(DataflowError):
    """A ``subscribe`` callback raised.  The epoch **stands**: it had committed (views, traces
    and ``flow.epoch`` show it) before any subscriber was called, and every other subscriber
    still received that epoch's updates with their true times.  ``failures`` lists
    ``(subscriber label, exception)``; ``report`` is the step's :class:`StepReport`."""

    def __init__(self, message: str, failures=(), report=None):
        super().__init__(message)
        self.failures = list(failures)
        self.report = report


class StepInProgress(DataflowError, RuntimeError):
    """``step()`` was called while a step of the same flow was running (re-entrant call from
    a callback); nothing was changed."""
