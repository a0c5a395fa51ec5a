"""Input collections: where updates enter a dataflow (``insert``, ``remove``, ``update``).

Why a module of its own: an input is the one collection a user writes to; its rows are checked
and encoded here (arity, types, the ``diff`` column), before any operator sees them, so a bad
row is refused while every collection still reads as before.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .batch import Batch, unify_kinds
from .collection import Collection
from .columns import KIND_NAMES, decode_rows, encode_frame, encode_rows
from .errors import InputError, SchemaError


class InputCollection(Collection):
    """An input: ``insert``, ``remove`` or ``update`` rows, then ``flow.step()``."""

    def __init__(self, op, columns=None):
        super().__init__(op, columns)
        if columns:
            op.kinds = None
        self._arity = len(columns) if columns else None

    def insert(self, rows) -> None:
        """Add records (a list of tuples, or a pandas DataFrame).

        >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"]); v = edges.view()
        >>> edges.insert([(1, 2), (2, 3)]); _ = flow.step(); v.to_dict()
        {(1, 2): 1, (2, 3): 1}
        """
        self._add(rows, +1)

    def remove(self, rows) -> None:
        """Remove records; removing an absent record makes its multiplicity negative.

        >>> flow = Dataflow(); xs = flow.input("xs"); v = xs.view()
        >>> xs.insert([1, 2]); xs.remove([2, 3]); _ = flow.step(); v.to_dict()
        {1: 1, 3: -1}
        """
        self._add(rows, -1)

    def update(self, updates) -> None:
        """Add ``(record, diff)`` pairs, or a DataFrame whose ``diff`` column holds the diffs.

        >>> import pandas as pd
        >>> flow = Dataflow(); xs = flow.input("xs", columns=["x"]); v = xs.view()
        >>> xs.update([(1, 2), (5, 1)]); xs.update(pd.DataFrame({"x": [5], "diff": [-1]}))
        >>> _ = flow.step(); v.to_dict()
        {1: 2}
        """
        where = f"input {self.op.name!r}"
        if isinstance(updates, pd.DataFrame):
            if "diff" not in updates.columns:
                raise InputError(f"{where}: update() needs a 'diff' column; got columns "
                                 f"{list(updates.columns)}")
            diffs = updates["diff"].to_numpy()
            if diffs.dtype.kind not in "iu":
                raise InputError(f"{where}: the 'diff' column must hold integers, not {diffs.dtype}")
            self._add(updates.drop(columns=["diff"]), diffs.astype(np.int64))
            return
        updates = list(updates)
        for i, u in enumerate(updates):
            if not (isinstance(u, tuple) and len(u) == 2 and isinstance(u[1], (int, np.integer))
                    and not isinstance(u[1], bool)):
                raise InputError(f"{where}: update {i} {u!r} is not a (record, diff) pair with "
                                 f"an integer diff")
        self._add([u[0] for u in updates],
                  np.fromiter((u[1] for u in updates), dtype=np.int64, count=len(updates)))

    def _add(self, rows, diffs) -> None:
        where = f"input {self.op.name!r}"
        interner = self.flow.interner
        if isinstance(rows, pd.DataFrame):
            if self.columns and list(rows.columns) != self.columns:
                if set(self.columns) <= set(rows.columns):
                    rows = rows[self.columns]
                else:
                    missing = [c for c in self.columns if c not in rows.columns]
                    raise InputError(f"{where}: the DataFrame lacks column(s) {missing}; it has "
                                     f"{list(rows.columns)}")
            if not len(rows):
                return
            cols, kinds = encode_frame(rows, interner, where)
            if self.columns is None:
                self.columns = [str(c) for c in rows.columns]
        else:
            rows = list(rows)
            if not rows:
                return
            cols, kinds = encode_rows(rows, interner, where, self._arity)
        if self._arity is None:
            self._arity = len(cols)
        elif len(cols) != self._arity:
            raise InputError(f"{where}: rows have {len(cols)} fields, expected {self._arity}")
        n = len(cols[0])
        if isinstance(diffs, int):
            diffs = np.full(n, diffs, dtype=np.int64)
        if self.op.kinds is not None and kinds != self.op.kinds:
            try:
                unified = unify_kinds([self.op.kinds, kinds], where)
            except SchemaError:
                for j, (old, new) in enumerate(zip(self.op.kinds, kinds)):
                    if old != new:
                        raise InputError(
                            f"{where}: column {j} held {KIND_NAMES[old]} values and these rows "
                            f"give {KIND_NAMES[new]} values (first row: "
                            f"{decode_rows(cols, kinds, interner)[0]!r}); one column must keep "
                            f"one type") from None
                raise
            if unified != self.op.kinds:
                raise InputError(f"{where}: column types {kinds} do not fit the earlier "
                                 f"{self.op.kinds}")
            cols = [c.astype(np.float64) if k == "f" else c for c, k in zip(cols, unified)]
            kinds = unified
        self.op.kinds = kinds
        self.op.pending.append(Batch(cols, kinds, diffs))

    def pending_updates(self) -> list:
        """The ``(record, diff)`` updates given since the last step (applied by the next;
        those of epochs closed by ``advance`` first).

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> xs.insert([1]); xs.remove([2])
        >>> xs.pending_updates(), xs.pending_count
        ([(1, 1), (2, -1)], 2)
        >>> _ = flow.step(); xs.pending_count
        0
        """
        out = []
        for b in [b for batches in self.op.epoch_batches() for b in batches]:
            rows = decode_rows(b.cols, b.kinds, self.flow.interner)
            out.extend(zip(rows, b.diffs.tolist()))
        return out

    @property
    def pending_count(self) -> int:
        """How many updates wait for the next step."""
        return sum(len(b) for batches in self.op.epoch_batches() for b in batches)
