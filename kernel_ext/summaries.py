"""Tables the inspection commands derive from the engine's public data (pandas group-bys).

Why a module of its own: ``%dd stats`` groups ``flow.stats()`` per operator or per loop
iteration, ``%dd trace`` groups a trace's updates per time, the step lines count additions
and retractions.  That is analysis, kept apart from parsing (the commands) and from HTML
(``display/``), and testable on plain frames.
"""
from __future__ import annotations

import pandas as pd

__all__ = ["stats_table", "trace_by_time", "change_counts"]


def _totals(groups) -> pd.DataFrame:
    return pd.DataFrame({"runs": groups.size(), "in": groups["in"].sum(),
                         "out": groups["out"].sum(),
                         "ms": groups["ms"].sum().round(3)}).reset_index()


def stats_table(raw: pd.DataFrame, by: str) -> pd.DataFrame:
    """``flow.stats()`` rows (with an ``ms`` column) grouped ``by`` ``"operator"`` (slowest
    first), ``"iteration"`` (per loop, epoch and iteration) or ``"time"`` (not grouped).

    >>> raw = pd.DataFrame({"operator": ["a", "a", "b"], "kind": ["map"] * 3,
    ...                     "scope": ["root"] * 3, "time": ["0"] * 3, "epoch": [0] * 3,
    ...                     "iteration": [None] * 3, "in": [1, 2, 3], "out": [1, 2, 0],
    ...                     "ms": [0.5, 0.25, 2.0]})
    >>> stats_table(raw, "operator")[["operator", "runs", "in", "ms"]].to_dict("list")
    {'operator': ['b', 'a'], 'runs': [1, 2], 'in': [3, 3], 'ms': [2.0, 0.75]}
    """
    if by == "operator":
        frame = _totals(raw.groupby(["operator", "kind", "scope"], sort=False))
        frame = frame.sort_values("ms", ascending=False, kind="stable")
    elif by == "iteration":
        inner = raw[raw["iteration"].notna()]
        frame = _totals(inner.groupby(["scope", "epoch", "iteration"]))
        if len(frame):
            frame["iteration"] = frame["iteration"].astype(int)
    elif by == "time":
        frame = raw[["operator", "kind", "scope", "time", "in", "out", "ms"]]
    else:
        raise ValueError(f"stats_table: by={by!r}; use 'operator', 'iteration' or 'time'")
    return frame.reset_index(drop=True)


def trace_by_time(history: pd.DataFrame) -> pd.DataFrame:
    """A trace's updates (``Collection.history()``) counted per time: ``time, updates,
    additions, retractions``, times in order.

    >>> h = pd.DataFrame({"a": [1, 2, 3], "time": [(0,), (1,), (1,)], "diff": [1, 1, -1]})
    >>> trace_by_time(h).to_dict("list")
    {'time': [(0,), (1,)], 'updates': [1, 2], 'additions': [1, 1], 'retractions': [0, 1]}
    """
    if not len(history):
        return pd.DataFrame(columns=["time", "updates", "additions", "retractions"])
    keyed = history.assign(_time=history["time"].map(tuple),
                           _plus=(history["diff"] > 0).astype("int64"),
                           _minus=(history["diff"] < 0).astype("int64"))
    g = keyed.groupby("_time")
    return pd.DataFrame({"time": list(g.size().index), "updates": g.size().to_numpy(),
                         "additions": g["_plus"].sum().to_numpy(),
                         "retractions": g["_minus"].sum().to_numpy()})


def change_counts(changes: pd.DataFrame) -> tuple[int, int]:
    """``(additions, retractions)`` of a frame of changes with a ``diff`` column.

    >>> change_counts(pd.DataFrame({"x": [1, 2, 3], "diff": [1, -2, 1]}))
    (2, 1)
    """
    if not len(changes) or "diff" not in changes:
        return 0, 0
    d = changes["diff"]
    return int((d > 0).sum()), int((d < 0).sum())
