"""Antichains of times: frontiers.

A frontier is an *antichain*: a set of times none of which is ``<=`` another (product order).
It stands for every time in advance of one of its elements; a time ``t`` is *complete* for a
frontier when no element is ``<= t``.  :class:`MutableAntichain` keeps counts per time (several
pointstamps may hold one time) and the frontier of the times whose count is positive.
"""
from __future__ import annotations

from ...lattice import leq


class Antichain:
    """The minimal elements of the times inserted (duplicates and dominated times dropped).

    >>> f = Antichain([(2, 1), (1, 3), (2, 4)])
    >>> sorted(f), f.less_equal((2, 3)), f.less_equal((0, 5))
    ([(1, 3), (2, 1)], True, False)
    """

    __slots__ = ("elements",)

    def __init__(self, times=()):
        self.elements: list[tuple] = []
        for t in times:
            self.insert(t)

    def insert(self, t: tuple) -> bool:
        """Add ``t`` unless an element is already ``<=`` it; drop the elements it is ``<=``.
        Returns whether the antichain changed."""
        for e in self.elements:
            if leq(e, t):
                return False
        self.elements = [e for e in self.elements if not leq(t, e)]
        self.elements.append(t)
        return True

    def less_equal(self, t: tuple) -> bool:
        """Whether some element is ``<= t``: ``t`` could still occur (it is not complete)."""
        for e in self.elements:
            if leq(e, t):
                return True
        return False

    def dominates(self, other: "Antichain") -> bool:
        """Whether every element of ``other`` is in advance of this frontier (this frontier
        is at or before ``other``): frontiers only ever move forward."""
        return all(self.less_equal(t) for t in other.elements)

    def __iter__(self):
        return iter(sorted(self.elements))

    def __len__(self) -> int:
        return len(self.elements)

    def __bool__(self) -> bool:
        return bool(self.elements)

    def __eq__(self, other) -> bool:
        return isinstance(other, Antichain) and sorted(self.elements) == sorted(other.elements)

    def __repr__(self) -> str:
        return f"Antichain({sorted(self.elements)})"


class MutableAntichain:
    """Counts per time and the frontier of the times whose count is positive.

    Counts may pass through negative values while deltas from several sources are applied in
    any order (a worker may hear of a message's consumption before its creation); the frontier
    only ever reads positive counts.

    >>> m = MutableAntichain(); m.update((1, 0), 1); m.update((0, 3), 2)
    >>> sorted(m.frontier())
    [(0, 3), (1, 0)]
    >>> m.update((0, 3), -2); sorted(m.frontier())
    [(1, 0)]
    """

    __slots__ = ("counts", "_frontier")

    def __init__(self):
        self.counts: dict[tuple, int] = {}
        self._frontier: Antichain | None = Antichain()

    def update(self, t: tuple, delta: int) -> None:
        if not delta:
            return
        n = self.counts.get(t, 0) + delta
        if n:
            self.counts[t] = n
        else:
            del self.counts[t]
        self._frontier = None

    def frontier(self) -> Antichain:
        if self._frontier is None:
            self._frontier = Antichain(t for t, n in self.counts.items() if n > 0)
        return self._frontier

    def less_equal(self, t: tuple) -> bool:
        return self.frontier().less_equal(t)

    def is_empty(self) -> bool:
        return not any(n > 0 for n in self.counts.values())
