"""The differential dataflow engine: collections of ``(data, time, diff)`` updates.

Public API: :class:`Dataflow` (inputs, ``step()``, ``stats()``), :class:`Collection` (the
operators), :class:`Loop` (mutual recursion), :class:`View`, the errors, and the lattice
helpers.  Nothing here knows about Jupyter.
"""
from .collection import Collection
from .dataflow import Dataflow, StepReport
from .input import InputCollection
from .loops import DEFAULT_MAX_ITERATIONS, Loop, Variable
from .errors import (DataflowError, InputError, NonConvergenceError, OperatorError, SchemaError,
                     StepInProgress, SubscriberError)
from .budget import BudgetExceeded, DEFAULT_MAX_ROWS_PER_EPOCH
from .checkpoint import CheckpointError
from .view import View
from .operators.choose import SizeChoice
from . import lattice
from . import why  # noqa: F401  (installs flow.why, flow.why_loop, flow.why_cost)
from .operators import explode  # noqa: F401  (installs Collection.explode)

__all__ = [
    "Dataflow", "Collection", "InputCollection", "Loop", "Variable", "View", "StepReport",
    "DataflowError", "InputError", "NonConvergenceError", "OperatorError", "SchemaError", "SubscriberError",
    "StepInProgress", "BudgetExceeded", "DEFAULT_MAX_ROWS_PER_EPOCH",
    "CheckpointError",
    "lattice", "DEFAULT_MAX_ITERATIONS", "SizeChoice",
]
