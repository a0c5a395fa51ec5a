"""The runaway-epoch budget: a cap on the rows one operator may produce in one epoch.

Why: a join whose keys explode (every record matching every other) can produce tens of
millions of rows in one epoch; in a notebook the process then grows until the kernel is killed
and the whole session is lost.  With a budget the operator stops *before* materialising such an
output (a join counts its matches from the index before gathering them), raises
:class:`BudgetExceeded` naming the operator, the rows and the limit, and the epoch is rolled
back like any failed epoch.

``Dataflow(max_rows_per_epoch=N)`` sets it (``None`` lifts it); the default,
:data:`DEFAULT_MAX_ROWS_PER_EPOCH`, is far above what a notebook session handles
interactively and far below what fills this machine's memory (a row of a few int64 columns
with its time and diff costs ~50 bytes, several times over while it is sorted and merged).

>>> import ddlab
>>> flow = ddlab.Dataflow(max_rows_per_epoch=1_000)
>>> x = flow.input("x")
>>> _ = x.join(x).view()
>>> x.insert([(0, i) for i in range(100)])   # 100 x 100 = 10,000 matches on key 0
>>> try:
...     flow.step()
... except ddlab.BudgetExceeded as err:
...     print(err.operator, err.rows, err.limit, flow.epoch)
join#2 10000 1000 0
"""
from __future__ import annotations

from .errors import DataflowError

#: Rows one operator may produce in one epoch unless ``Dataflow(max_rows_per_epoch=...)``
#: says otherwise.
DEFAULT_MAX_ROWS_PER_EPOCH = 20_000_000


class BudgetExceeded(DataflowError, MemoryError):
    """An operator would produce more rows in one epoch than ``max_rows_per_epoch`` allows;
    raised before they are materialised.  The epoch is rolled back."""

    def __init__(self, message: str, operator: str | None = None, rows: int = 0,
                 limit: int | None = None):
        super().__init__(message)
        self.operator, self.rows, self.limit = operator, rows, limit


def charge(op, rows: int, what: str = "emit") -> None:
    """Count ``rows`` against ``op``'s budget for the running step; raise if over it.

    The count restarts with every step attempt (``flow.step_serial``), so a rolled-back
    epoch does not spend the next one's budget."""
    flow = op.flow
    limit = flow.max_rows_per_epoch
    if limit is None:
        return
    serial = flow._step_serial
    if op.budget_serial != serial:
        op.budget_serial, op.budget_rows = serial, 0
    total = op.budget_rows + rows
    if total > limit:
        raise BudgetExceeded(
            f"{op.label} in {op.scope.path!r} would {what} {total:,} rows in epoch {flow.epoch}, "
            f"over the budget of {limit:,} rows per operator per epoch "
            f"(Dataflow(max_rows_per_epoch=...)). The epoch was rolled back before memory ran "
            f"out. Look for a join whose keys match too widely (many records with one key), "
            f"or raise the budget (None lifts it).", operator=op.label, rows=total, limit=limit)
    if what == "emit":
        op.budget_rows = total


def check_pending(op, rows: int, what: str) -> None:
    """Raise if producing ``rows`` more would exceed ``op``'s budget (nothing is charged:
    the rows are charged when emitted)."""
    if rows and op.flow.max_rows_per_epoch is not None:
        charge(op, rows, what)
