"""``explode``: each record becomes records *with multiplicities* (differential dataflow's
``explode``): ``fn(record) -> [(record, multiplicity), ...]``.

Why: a value can become a multiplicity, so that the keyed operators' fast paths do weighted
work: ``sales.explode(lambda s: [(s[0], s[1])]).count()`` sums each shop's amounts (a count of
records whose multiplicities are the amounts); a negative multiplicity subtracts.  It is
linear (an update ``(x, t, d)`` becomes ``(y, t, d * m)`` for each pair ``(y, m)``), so it
runs batch by batch with no state.

This module is the whole operator, as CONTRIBUTING.md's "Adding an operator" shows: the
class with its run (``process``) and the hooks the analyses call (inherited from
:class:`~.linear.MappingOperator`: ``flow.why`` and replays through it need only
:meth:`Explode.images`), and the collection method, installed on
:class:`~ddlab.engine.collection.Collection` when ``ddlab.engine`` imports this module.
"""
from __future__ import annotations

import numpy as np

from ..batch import Batch
from ..budget import check_pending
from ..collection import Collection
from ..columns import as_record, decode_rows, encode_rows, user_form
from ..errors import OperatorError
from .linear import MappingOperator, call_user

__all__ = ["Explode", "explode"]


class Explode(MappingOperator):
    """``fn(record) -> iterable of (record, multiplicity)``; output diffs are the input's
    times the multiplicities."""

    kind = "explode"
    eager = True  # (see Operator.eager)
    fusable = True

    def process(self, t, inputs):
        b = inputs[0]
        rows = decode_rows(b.cols, b.kinds, self.flow.interner)
        produced = call_user(self, lambda r: list(self.fn(r)), rows)
        pairs = [self._pairs(r, p) for r, p in zip(rows, produced)]
        counts = np.fromiter(map(len, pairs), dtype=np.int64, count=len(pairs))
        check_pending(self, int(counts.sum()), "produce")
        flat = [p for ps in pairs for p in ps]
        if not flat:
            return
        cols, kinds = encode_rows([y for y, _ in flat], self.flow.interner,
                                  f"{self.label} output")
        mults = np.fromiter((m for _, m in flat), dtype=np.int64, count=len(flat))
        self.emit(t, Batch(cols, kinds, np.repeat(b.diffs, counts) * mults))

    def _pairs(self, record, produced) -> list:
        """``fn``'s answer for ``record`` as ``[(record, int multiplicity)]``, or a clear
        error naming the record."""
        out = []
        for item in produced:
            try:
                y, m = item
                mult = int(m)
            except (TypeError, ValueError):
                raise OperatorError(f"{self.label}: explode functions return (record, "
                                    f"multiplicity) pairs; for {record!r} it gave {item!r}",
                                    operator=self.label, row=record) from None
            if mult != m:
                raise OperatorError(f"{self.label}: multiplicity {m!r} for {record!r} is not "
                                    f"an integer", operator=self.label, row=record)
            out.append((y, mult))
        return out

    # -- the one hook explanations need (MappingOperator does the rest) -----------------------
    def images(self, records):
        return [[(as_record(y), m) for y, m in self._pairs(x, self.fn(user_form(x)))]
                for x in records]


def explode(self: Collection, fn, name: str | None = None) -> Collection:
    """Replace every record by the records of ``fn(record)``, a list of ``(record,
    multiplicity)`` pairs: each output update's diff is the input's times that multiplicity.

    >>> flow = Dataflow(); sales = flow.input("sales", columns=["shop", "amount"])
    >>> totals = sales.explode(lambda s: [(s[0], s[1])]).count().view()
    >>> sales.insert([("a", 5), ("a", 5), ("b", 2)]); _ = flow.step()
    >>> totals.to_dict()
    {('a', 10): 1, ('b', 2): 1}
    """
    return Collection(Explode(self.scope, self.op, fn, name))


Collection.explode = explode
