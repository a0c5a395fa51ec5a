"""Every worker's shard of a trace, read at worker 0: what explanations need with workers.

An explanation (:mod:`~ddlab.engine.why`) reads an operator's trace by key, by field or
whole (:mod:`~ddlab.engine.why.reading`).  With several workers each holds the updates of the
keys it owns, so :class:`WholeTrace` answers the same reads with worker 0's rows and every
other worker's, asked for between epochs: one round trip per read, which each child answers
from its own replica of the operator (:func:`read_shard`).  Key codes agree across workers
(the interner is worker 0's, copied to the children), so a read's codes mean the same there.
"""
from __future__ import annotations

from ..trace.rows import Rows

#: the reads an explanation makes of a trace (``TraceReader``'s reading part)
READS = ("gather", "rows_where", "all_rows", "__len__", "shape")


class WholeTrace:
    """Operator ``op``'s history trace with every worker's shard: ``kinds``, ``nkey``,
    ``gather``, ``rows_where``, ``all_rows`` and ``len``, as one worker's trace answers them."""

    def __init__(self, team, op, local):
        self.team, self.op_id, self.local = team, op.id, local
        shapes = [(local.kinds, local.nkey)] + team.read_shards(op.id, "shape", ())
        # a worker that never saw an update of this trace knows no kinds yet
        self.kinds, self.nkey = next(((k, n) for k, n in shapes if k is not None), shapes[0])

    def gather(self, codes) -> Rows:
        return self._all("gather", codes)

    def rows_where(self, column: int, codes) -> Rows:
        return self._all("rows_where", column, codes)

    def all_rows(self) -> Rows:
        return self._all("all_rows")

    def __len__(self) -> int:
        return len(self.local) + sum(self.team.read_shards(self.op_id, "__len__", ()))

    def _all(self, method: str, *args) -> Rows:
        parts = [p for p in [_read(self.local, method, args)]
                 + self.team.read_shards(self.op_id, method, args) if p is not None]
        parts = [p for p in parts if len(p)] or parts[:1]
        if len(parts) == 1:
            return parts[0]
        return Rows.concat(parts, len(self.kinds), parts[0].times.shape[1])


def read_shard(flow, op_id: int, method: str, args):
    """A child's answer to worker 0's read of operator ``op_id``'s trace (``None``: it keeps
    none here, or has not seen an update of it)."""
    if method not in READS:
        raise ValueError(f"not a read of a trace: {method!r}")
    trace = flow.operators[op_id].history_trace()
    if trace is None:
        return (None, None) if method == "shape" else 0 if method == "__len__" else None
    return _read(trace, method, args)


def _read(trace, method: str, args):
    if method == "shape":
        return (trace.kinds, trace.nkey)
    if method == "__len__":
        return len(trace)
    if trace.kinds is None:  # no update yet: nothing to read (and no kinds to decode with)
        return None
    return getattr(trace, method)(*args)
