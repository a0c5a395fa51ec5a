"""How the explorer paces itself and how much it shows: one dataclass instead of a dozen keyword
arguments threaded through its constructor.

What the explorer shows (the feed, the collections, the components program) is given apart;
these are the knobs a user turns after that.  ``explore(feed, collections, interval_ms=300)``
and ``explore(..., options=ExplorerOptions(interval_ms=300))`` are the same.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

__all__ = ["ExplorerOptions"]


@dataclass(frozen=True)
class ExplorerOptions:
    """The explorer's pacing and sizes.

    - ``start``: the position the explorer loads when the feed is still empty (``None``:
      stay empty);
    - ``interval_ms``: Play's interval; keep it above a move's p99 (a slower move merges the
      ticks that arrived meanwhile into one move and says so);
    - ``settle_ms``: the from-scratch reference lines are computed for the window the moves
      landed on once no move came for this long (and when Play stops); ``None``: only when
      :meth:`~ddlab.widgets.Explorer.settle` is called;
    - ``references_at_start``: compute them for the first window right away;
    - ``top``, ``rows``: components listed, table rows shown;
    - ``history``: earlier moves drawn faded behind the current one;
    - ``lattice_epochs``, ``lattice_cells``: epochs in view and cells kept by the lattice;
    - ``latency_epochs``: epochs kept by the latency plots.
    """

    start: int | None = 0
    interval_ms: int = 400
    settle_ms: int | None = 600
    references_at_start: bool = True
    top: int = 10
    rows: int = 12
    history: int = 20
    lattice_epochs: int = 60
    lattice_cells: int = 4000
    latency_epochs: int = 300

    def __post_init__(self):
        for name in ("interval_ms", "top", "rows", "history", "lattice_epochs",
                     "lattice_cells", "latency_epochs"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"ExplorerOptions: {name} must be a positive int, not {value!r}")
        if self.settle_ms is not None and (not isinstance(self.settle_ms, int)
                                           or self.settle_ms < 0):
            raise ValueError(f"ExplorerOptions: settle_ms must be None or an int >= 0, not "
                             f"{self.settle_ms!r}")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def updated(self, **changes) -> "ExplorerOptions":
        """A copy with ``changes``; an unknown name is one clear error listing the known ones."""
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise TypeError(f"explore: unknown option(s) {', '.join(unknown)}; the options are "
                            f"{', '.join(self.names())}")
        return replace(self, **changes)
