"""Sliding-window update batches, computed on Spark in one job and streamed to the kernel in chunks.

Why: moving a window one step is one epoch of input changes for the engine: ``+1`` for what
enters, ``-1`` for what leaves.  Spark computes every step's batch at once (the bulk work),
keeps them cached keyed by step index, and the kernel fetches ranges of steps as Arrow-backed
pandas DataFrames on demand, never the whole table in one collect.

Window position ``k`` (``0 <= k < steps``) covers the half-open interval
``[origin + k*step, origin + k*step + width)``.  Batch ``k`` moves the input from position
``k-1`` to ``k``; position ``-1`` is the empty input, so batch 0 loads the first window.
Sliding backward from ``k`` to ``k-1`` is the negation of batch ``k``.

An event at offset ``d = time - origin`` lies in positions ``floor((d-width)/step)+1 ..
floor(d/step)``: an interval.  Multigraph mode emits ``+1`` where that interval starts and
``-1`` after it ends, summed per (step, record).  Simple-graph mode first merges the
overlapping or adjacent intervals of each record, so a record is present (multiplicity 1)
while at least one of its events is in the window.
"""
from __future__ import annotations

import bisect
from collections import OrderedDict
from datetime import timedelta
from typing import NamedTuple

import numpy as np
import pandas as pd

from .loaders import LoadResult
from .session import get_spark, require_pyspark

__all__ = ["SlidingWindows", "WindowBatches", "WindowPlan", "window_batches", "window_updates", "to_seconds",
           "events_in_window", "format_duration", "format_span"]


def to_seconds(value) -> int:
    """Seconds from an int/float, a ``timedelta`` or a string such as ``"1h"``, ``"7d"``, ``"90s"``."""
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, str):
        seconds = pd.Timedelta(value).total_seconds()
    else:
        seconds = float(value)
    if seconds != int(seconds) or seconds <= 0:
        raise ValueError(f"window width and step must be a positive whole number of seconds, got {value!r}")
    return int(seconds)


def format_duration(seconds: int) -> str:
    """The inverse of :func:`to_seconds` for display: ``604800 -> "1w"``, ``86400 -> "1d"``,
    ``5400 -> "90min"``, ``61 -> "61s"``."""
    for unit, n in (("w", 604800), ("d", 86400), ("h", 3600), ("min", 60)):
        if seconds % n == 0:
            return f"{seconds // n}{unit}"
    return f"{seconds}s"


#: Times below this many seconds are offsets from the data's start, not dates (Twitter 24h
#: counts seconds within its day): shown as ``day D HH:MM`` instead of 1970 dates.
RELATIVE_TIME_LIMIT = 366 * 86400


def format_span(start: int, end: int, width: int) -> str:
    """``[2004-04-15, 2004-04-22)``: dates when the window is whole days, else minutes;
    relative times (offsets below a year) as ``[00:00, 01:00)`` or ``[day 1 23:00, day 2 00:00)``.

    >>> format_span(1081954800, 1082559600, 7 * 86400)
    '[2004-04-14 15:00, 2004-04-21 15:00)'
    >>> format_span(60, 3660, 3600)
    '[00:01, 01:01)'
    >>> format_span(86400 - 1800, 86400 + 1800, 3600)
    '[day 0 23:30, day 1 00:30)'
    """
    if end <= RELATIVE_TIME_LIMIT:
        days = end > 86400 or start >= 86400
        return f"[{_offset(start, days)}, {_offset(end, days)})"
    unit = "D" if width % 86400 == 0 and start % 86400 == 0 else "min"
    fmt = "%Y-%m-%d" if unit == "D" else "%Y-%m-%d %H:%M"
    a = pd.Timestamp(start, unit="s").strftime(fmt)
    b = pd.Timestamp(end, unit="s").strftime(fmt)
    return f"[{a}, {b})"


def _offset(seconds: int, days: bool) -> str:
    d, rest = divmod(int(seconds), 86400)
    clock = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}"
    return f"day {d} {clock}" if days else clock


def _as_spark_df(events, spark):
    if isinstance(events, LoadResult):  # (not hasattr: a Connect DataFrame has every attribute)
        events = events.df
    if isinstance(events, pd.DataFrame):
        return (spark or get_spark()).createDataFrame(events)
    return events


def _floor_div(x, n: int):
    """Exact integer floor division of a long column by a positive constant (negatives too)."""
    from pyspark.sql import functions as F

    return ((x - F.pmod(x, F.lit(n))) / F.lit(n)).cast("long")


def events_in_window(events: pd.DataFrame, start: int, end: int, columns=("src", "dst"),
                     multigraph: bool = False) -> pd.DataFrame:
    """Pandas reference: the window ``[start, end)``'s records with their multiplicity as ``diff``."""
    inside = events[(events["time"] >= start) & (events["time"] < end)]
    counts = inside.groupby(list(columns), dropna=False).size().rename("diff").reset_index()
    if not multigraph:
        counts["diff"] = 1
    return counts.astype({"diff": "int64"})


class SlidingWindows:
    """What every kind of window batches answers alike: ``steps`` positions of ``width``
    seconds every ``step`` from ``origin``; ``window(k)``, ``len``, ``batches[k]`` and
    iteration over :meth:`batch`, which a subclass provides."""

    origin: int
    width: int
    step: int
    steps: int

    def __len__(self) -> int:
        return self.steps

    def window(self, k: int) -> tuple[int, int]:
        """Position ``k``'s half-open interval ``(start, end)`` in unix seconds."""
        self._check(k)
        start = self.origin + k * self.step
        return start, start + self.width

    def _check(self, k: int) -> None:
        if not 0 <= k < self.steps:
            raise IndexError(f"window position {k} out of range 0..{self.steps - 1}")

    def batch(self, k: int) -> pd.DataFrame:   # pragma: no cover - every subclass has one
        raise NotImplementedError

    def __getitem__(self, k: int) -> pd.DataFrame:
        return self.batch(k)

    def __iter__(self):
        for k in range(self.steps):
            yield self.batch(k)

    @staticmethod
    def _rows(frame: pd.DataFrame, i: int, j: int) -> pd.DataFrame:
        """Rows ``i:j`` of ``frame`` as a fresh DataFrame indexed from 0."""
        out = frame.iloc[i:j]
        out.index = pd.RangeIndex(len(out))
        return out.copy()


class WindowBatches(SlidingWindows):
    """Every step's update batch of one sliding window, cached on Spark, fetched in chunks of steps.

    ``batches[k]`` (or ``batch(k)``) is a pandas DataFrame ``src, dst[, label], diff``;
    iterating yields them in step order.  ``window(k)`` gives position ``k``'s ``(start, end)``.
    """

    def __init__(self, df, events, *, origin, width, step, steps, multigraph, columns, sizes,
                 rows_per_chunk, max_cached_chunks=4):
        self.df = df  # Spark: step, *columns, diff (cached)
        self.events = events  # Spark: the canonical events the batches came from
        self.origin, self.width, self.step, self.steps = int(origin), int(width), int(step), int(steps)
        self.multigraph = bool(multigraph)
        self.columns = tuple(columns)
        self.sizes = np.asarray(sizes, dtype=np.int64)  # update rows per step
        self.total_rows = int(self.sizes.sum())
        self._chunks = self._plan_chunks(rows_per_chunk)
        self._chunk_starts = [lo for lo, _ in self._chunks]
        self._cache: OrderedDict[int, tuple[pd.DataFrame, np.ndarray]] = OrderedDict()
        self._max_cached = max(1, int(max_cached_chunks))

    # -- fetching -------------------------------------------------------------------------
    def _plan_chunks(self, rows_per_chunk: int) -> list[tuple[int, int]]:
        chunks, lo, rows = [], 0, 0
        for k, n in enumerate(self.sizes.tolist()):
            if rows and rows + n > rows_per_chunk:
                chunks.append((lo, k))
                lo, rows = k, 0
            rows += n
        chunks.append((lo, self.steps))
        return chunks

    def _chunk(self, index: int) -> tuple[pd.DataFrame, np.ndarray]:
        if index in self._cache:
            self._cache.move_to_end(index)
            return self._cache[index]
        from pyspark.sql import functions as F

        lo, hi = self._chunks[index]
        part = self.df.where((F.col("step") >= lo) & (F.col("step") < hi))
        frame = part.toArrow().to_pandas()  # Arrow end to end (classic and Connect alike)
        steps = frame["step"].to_numpy()
        if len(steps) > 1 and np.any(steps[1:] < steps[:-1]):
            frame = frame.sort_values("step", kind="stable")
            steps = frame["step"].to_numpy()
        frame = frame.drop(columns="step").reset_index(drop=True)
        for col in ("src", "dst"):
            if col in frame and frame[col].dtype.kind in "iu":
                frame[col] = frame[col].astype("int64", copy=False)
        frame["diff"] = frame["diff"].astype("int64", copy=False)
        bounds = np.searchsorted(steps, np.arange(lo, hi + 1), side="left")
        self._cache[index] = (frame, bounds)
        while len(self._cache) > self._max_cached:
            self._cache.popitem(last=False)
        return self._cache[index]

    def batch(self, k: int) -> pd.DataFrame:
        """The update batch that moves the input from position ``k-1`` to ``k`` (fresh DataFrame)."""
        self._check(k)
        index = bisect.bisect_right(self._chunk_starts, k) - 1
        frame, bounds = self._chunk(index)
        lo = self._chunks[index][0]
        return self._rows(frame, bounds[k - lo], bounds[k - lo + 1])

    def prefetch(self) -> None:
        """Fetch every chunk now (only for data that fits in memory)."""
        self._max_cached = max(self._max_cached, len(self._chunks))
        for index in range(len(self._chunks)):
            self._chunk(index)

    def to_pandas(self) -> pd.DataFrame:
        """All batches in one pandas DataFrame with a ``step`` column (small data only)."""
        return self.df.orderBy("step").toPandas()

    # -- references -----------------------------------------------------------------------
    def window_records(self, k: int):
        """Spark DataFrame of position ``k``'s records with their multiplicity as ``diff``."""
        from pyspark.sql import functions as F

        start, end = self.window(k)
        inside = self.events.where((F.col("time") >= start) & (F.col("time") < end))
        counts = inside.groupBy(*self.columns).agg(F.count(F.lit(1)).alias("diff"))
        if not self.multigraph:
            counts = counts.withColumn("diff", F.lit(1).cast("long"))
        return counts

    def unpersist(self) -> None:
        """Release the cached batches on Spark and in the kernel."""
        self._cache.clear()
        try:
            self.df.unpersist()
        except Exception:
            pass

    def __repr__(self) -> str:
        mode = "multigraph" if self.multigraph else "simple graph"
        return (
            f"WindowBatches({self.steps:,} steps of {self.step:,} s, window {self.width:,} s, {mode}, "
            f"records {'/'.join(self.columns)}, {self.total_rows:,} update rows in {len(self._chunks)} chunk(s))"
        )


def window_batches(events, width, step, *, multigraph: bool = False, start: int | None = None,
                   end: int | None = None, label: bool | None = None, rows_per_chunk: int = 250_000,
                   spark=None) -> WindowBatches:
    """Compute every step's update batch of a sliding window on Spark.

    ``events``: the canonical table (a Spark DataFrame, a ``LoadResult`` or pandas) with
    ``src, dst, time`` (+ ``label``).  ``width`` and ``step``: seconds (or ``"1h"``, timedelta).
    ``multigraph=False`` deduplicates each record per window (present while any of its events is
    inside); ``True`` counts every event.  ``start``/``end`` (unix seconds): the first window's
    start (default: the first event) and a time the last window must contain (default: the last
    event; a ``LoadResult`` knows both, so no job is spent finding them).  ``label``: include
    the ``label`` column in the records (default: when present).
    """
    plan = window_updates(events, width, step, multigraph=multigraph, start=start, end=end,
                          label=label, spark=spark)
    # Sorted within partitions, so cached column statistics let a step-range fetch skip batches.
    # (No repartitionByRange: its sampling pass would run the whole plan twice.)
    batches = plan.updates.sortWithinPartitions("step").cache()
    counts = batches.groupBy("step").count().collect()  # materialises the cache: the one big job
    sizes = np.zeros(plan.steps, dtype=np.int64)
    for row in counts:
        sizes[row["step"]] = row["count"]
    return WindowBatches(
        batches, plan.events, origin=plan.origin, width=plan.width, step=plan.step,
        steps=plan.steps, multigraph=multigraph, columns=plan.columns, sizes=sizes,
        rows_per_chunk=rows_per_chunk,
    )


class WindowPlan(NamedTuple):
    """Every step's updates as one Spark plan (``updates``: ``step, *columns, diff``, not yet
    run) and the geometry they were cut with."""

    updates: object
    events: object
    origin: int
    width: int
    step: int
    steps: int
    columns: list


def window_updates(events, width, step, *, multigraph: bool = False, start: int | None = None,
                   end: int | None = None, label: bool | None = None, spark=None) -> WindowPlan:
    """The plan behind :func:`window_batches` (same arguments), for a caller that fetches
    every batch at once: running it is the only job (plus one for the time range when
    neither ``start``/``end`` nor a ``LoadResult``'s report gives it)."""
    require_pyspark()
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    known = _known_range(events)
    df = _as_spark_df(events, spark)
    width, step = to_seconds(width), to_seconds(step)
    use_label = ("label" in df.columns) if label is None else bool(label)
    if use_label and "label" not in df.columns:
        raise ValueError("label=True but the events have no label column")
    columns = ["src", "dst"] + (["label"] if use_label else [])
    missing = [c for c in columns + ["time"] if c not in df.columns]
    if missing:
        raise ValueError(f"events need columns src, dst, time; missing {missing} (load them with load_events)")

    if start is None or end is None:
        if known is None:
            first = df.agg(F.min("time").alias("lo"), F.max("time").alias("hi")).first()
            known = None if first["lo"] is None else (int(first["lo"]), int(first["hi"]))
        if known is None:
            raise ValueError("no events to window")
    origin = int(known[0]) if start is None else int(start)
    last = int(known[1]) if end is None else int(end)
    # Last position: the first k whose window reaches past `last`.
    steps = max(0, (last - origin - width) // step + 1) + 1 if last >= origin else 1

    d = F.col("time") - F.lit(origin)
    ev = df.select(*columns, "time").withColumn(
        "a", F.greatest(F.lit(0).cast("long"), _floor_div(d - F.lit(width), step) + 1))
    ev = ev.withColumn("b", F.least(F.lit(steps - 1).cast("long"), _floor_div(d, step))).where(F.col("a") <= F.col("b"))
    if not multigraph:
        w = Window.partitionBy(*columns).orderBy("a", "b")
        prev_b = F.max("b").over(w.rowsBetween(Window.unboundedPreceding, -1))
        opens = F.when(prev_b.isNull() | (F.col("a") > prev_b + 1), 1).otherwise(0)
        grp = F.sum("_open").over(w.rowsBetween(Window.unboundedPreceding, Window.currentRow))
        ev = (
            ev.withColumn("_open", opens).withColumn("_grp", grp)
            .groupBy(*columns, "_grp").agg(F.min("a").alias("a"), F.max("b").alias("b"))
        )
    # One pass emits both ends of each interval (a union would compute the plan above twice).
    ends = F.explode(F.array(
        F.struct(F.col("a").cast("int").alias("step"), F.lit(1).cast("long").alias("diff")),
        F.struct((F.col("b") + 1).cast("int").alias("step"), F.lit(-1).cast("long").alias("diff")),
    )).alias("_u")
    updates = (
        ev.select(*columns, ends).select(F.col("_u.step").alias("step"), *columns, F.col("_u.diff").alias("diff"))
        .where(F.col("step") < steps)
    )
    if multigraph:  # merged intervals never put +1 and -1 on the same (step, record); events may
        updates = updates.groupBy("step", *columns).agg(F.sum("diff").alias("diff")).where(F.col("diff") != 0)
    return WindowPlan(updates, df, origin, width, step, steps, columns)


def _known_range(events) -> tuple[int, int] | None:
    """The events' time range when their load report counted it (no Spark job needed)."""
    if isinstance(events, LoadResult):
        return events.report.time_range
    return None
