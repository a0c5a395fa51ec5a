"""Count deltas that consolidate: what a worker accumulates and broadcasts.

Each worker applies its own count changes at once and accumulates them for the others; changes
to one pointstamp that cancel (a batch queued and consumed before the next broadcast) never
travel.  Two workers' batches sum: the global count of a pointstamp is the sum of every
worker's deltas, in any order.
"""
from __future__ import annotations


class ChangeBatch:
    """``{key: delta}`` with zero sums dropped.

    >>> a = ChangeBatch(); a.update(("map", (0,)), 1); a.update(("map", (0,)), -1)
    >>> a.is_empty()
    True
    >>> a.update(("reduce", (0, 2)), 1); b = ChangeBatch({("reduce", (0, 2)): 2})
    >>> a.extend(b); a.drain()
    [(('reduce', (0, 2)), 3)]
    """

    __slots__ = ("deltas",)

    def __init__(self, deltas: dict | None = None):
        self.deltas: dict = {k: v for k, v in (deltas or {}).items() if v}

    def update(self, key, delta: int) -> None:
        if not delta:
            return
        n = self.deltas.get(key, 0) + delta
        if n:
            self.deltas[key] = n
        else:
            del self.deltas[key]

    def extend(self, other: "ChangeBatch") -> None:
        for key, delta in other.deltas.items():
            self.update(key, delta)

    def drain(self) -> list:
        """The deltas (sorted by key where keys compare), leaving the batch empty."""
        items = list(self.deltas.items())
        self.deltas = {}
        try:
            items.sort()
        except TypeError:
            pass
        return items

    def is_empty(self) -> bool:
        return not self.deltas

    def __len__(self) -> int:
        return len(self.deltas)

    def __repr__(self) -> str:
        return f"ChangeBatch({self.deltas})"
