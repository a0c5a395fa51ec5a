"""Materialized views: what a collection holds now, exact after every step."""
from __future__ import annotations

import pandas as pd

from .columns import decode_column, decode_rows


def unique_names(names, reserved=()) -> list[str]:
    """``names`` with repeats (and clashes with ``reserved``) suffixed ``_2``, ``_3``, ...

    >>> unique_names(["v", "v", "multiplicity"], reserved=("multiplicity",))
    ['v', 'v_2', 'multiplicity_2']
    """
    taken = set(reserved)
    out = []
    for name in map(str, names):
        candidate, i = name, 1
        while candidate in taken or (candidate != name and candidate in names):
            i += 1
            candidate = f"{name}_{i}"
        taken.add(candidate)
        out.append(candidate)
    return out


class View:
    """The accumulated contents of a collection (record -> multiplicity).

    Records whose multiplicity went negative (removing what was never inserted is legal, as in
    the papers) are listed with that negative multiplicity."""

    def __init__(self, sink, collection=None):
        self._sink = sink
        self._collection = collection

    @property
    def columns(self) -> list[str] | None:
        """Field names, when the collection knows them (inputs declared or fed a DataFrame)."""
        return self._collection.columns if self._collection is not None else None

    @property
    def label(self) -> str:
        """The label of the operator whose output this view holds.

        >>> flow = Dataflow(); xs = flow.input("xs", columns=["x"]); v = xs.distinct().view()
        >>> v.label, v.columns, v.epoch
        ('distinct#2', ['x'], 0)
        """
        return self._sink.inputs[0].label

    @property
    def epoch(self) -> int:
        """The number of completed epochs the view reflects."""
        return self._sink.flow.epoch

    def _names(self, arity: int, extra: str = "multiplicity") -> list[str]:
        """Display names of ``arity`` fields, unique and distinct from ``extra`` (the
        multiplicity/diff column): a repeated name (``b.join(b, select=(1, 2))`` gives
        ``['v', 'v']``) becomes ``v``, ``v_2``, so no field is ever dropped from a frame."""
        names = list(self.columns) if self.columns and len(self.columns) == arity else [
            f"c{j}" for j in range(arity)]
        return unique_names(names, reserved=(extra,))

    def to_dict(self) -> dict:
        """``{record: multiplicity}`` (a record is a tuple, or a bare value for one field).

        >>> flow = Dataflow(); edges = flow.input("edges"); v = edges.view()
        >>> edges.insert([(1, 2), (1, 2)]); _ = flow.step(); v.to_dict()
        {(1, 2): 2}
        """
        contents = self._sink.contents()
        if contents is None:
            return {}
        cols, kinds, mult = contents
        rows = decode_rows(cols, kinds, self._sink.flow.interner)
        return dict(zip(rows, mult.tolist()))

    def to_pandas(self, limit: int | None = None) -> pd.DataFrame:
        """One row per record with its fields and a ``multiplicity`` column (the first
        ``limit`` records in record order, when given: only those are decoded).

        >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"]); v = edges.view()
        >>> edges.insert([(1, 2), (1, 2), (2, 3)]); _ = flow.step()
        >>> print(v.to_pandas().to_string(index=False))
         src  dst  multiplicity
           1    2             2
           2    3             1
        """
        data = self.to_arrays(limit)
        if data is None:
            names = self._names(len(self.columns)) if self.columns else []
            return pd.DataFrame(columns=names + ["multiplicity"])
        return pd.DataFrame(data)

    def to_arrays(self, limit: int | None = None) -> dict | None:
        """:meth:`to_pandas`'s columns as ``{name: numpy array}`` (``None`` when empty),
        without building a DataFrame: what a live panel reads on every move.

        >>> flow = Dataflow(); xs = flow.input("xs", columns=["x"]); v = xs.view()
        >>> xs.insert([3, 3, 5]); _ = flow.step()
        >>> {k: a.tolist() for k, a in v.to_arrays().items()}
        {'x': [3, 5], 'multiplicity': [2, 1]}
        """
        contents = self._sink.contents()
        if contents is None:
            return None
        cols, kinds, mult = contents
        if limit is not None:
            cols, mult = [c[:limit] for c in cols], mult[:limit]
        interner = self._sink.flow.interner
        data = {name: decode_column(c, k, interner)
                for name, c, k in zip(self._names(len(cols)), cols, kinds)}
        data["multiplicity"] = mult
        return data

    def changes(self) -> pd.DataFrame:
        """The updates of the last completed epoch (fields and ``diff``).

        >>> flow = Dataflow(); xs = flow.input("xs", columns=["x"]); v = xs.view()
        >>> xs.insert([1, 2]); _ = flow.step(); xs.remove([1]); xs.insert([3]); _ = flow.step()
        >>> print(v.changes().to_string(index=False))
         x  diff
         1    -1
         3     1
        """
        batch = self._sink.epoch_changes
        if batch is None or not len(batch):
            names = self._names(len(self.columns), "diff") if self.columns else []
            return pd.DataFrame(columns=names + ["diff"])
        interner = self._sink.flow.interner
        data = {name: decode_column(c, k, interner)
                for name, c, k in zip(self._names(batch.arity, "diff"), batch.cols, batch.kinds)}
        data["diff"] = batch.diffs
        return pd.DataFrame(data)

    def __len__(self) -> int:
        contents = self._sink.contents()
        return 0 if contents is None else len(contents[2])

    def __repr__(self) -> str:
        return f"<View of {self.label}: {len(self)} records after {self.epoch} epochs>"
