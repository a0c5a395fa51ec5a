"""The Naiad demo in one call: ``demo()`` loads a dataset's sliding windows, builds the
strongly-connected-components dataflow with its components panel, loads the first screen's
window and moves it one step, and returns the explorer (a cell showing it draws it).

Why a function: the demo notebook's reader should see the explorer, not plumbing; the same
thing built by hand (public APIs only) is the notebook's second half.  Every dataset comes
with a window, a step and a first position chosen so that a move keeps up with Play on a
2-core laptop (measured: ``python -m benchmarks explore``) while the window holds enough
structure to watch; the first screen shows a move of one step, the situation of the CIDR
paper's Figure 1 ("Differential (1s change)").
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ddlab.engine import kernels
from ddlab.sources import DatasetNotFound, cached_windows, start_spark, windows_cached
from ddlab.sources.moves import running_loop
from ddlab.sources.session import QUICK_START_JAVA_OPTIONS

from .progress import NullProgress, Progress

if TYPE_CHECKING:  # pragma: no cover
    from .explorer import Explorer

__all__ = ["DemoData", "DEMO_DATA", "demo", "demo_windows"]


def _mentions_only(df):
    """Twitter 24h: the mention graph (the papers' demo), retweets left out."""
    return df.where("label = 'm'").drop("label")


@dataclass(frozen=True)
class DemoData:
    """A dataset as the demo shows it: which windows, where the first screen is, its labels.

    ``position``: the first screen's window position (the explorer loads the window before
    it, then moves one step); ``origin``: where position 0 starts (a date: whole-hour
    windows); ``prepare``: ``(variant name, function of the Spark DataFrame)`` applied before
    windowing; ``label_name``/``no_labels``: the components panel's label column and what it
    says without labels; ``interval_ms``: Play's default (above a move's measured p99)."""

    dataset: str
    width: str
    step: str
    position: int
    about: str
    origin: str | None = None
    label_name: str = "label"
    no_labels: str = "this data has no labels"
    prepare: tuple | None = None
    interval_ms: int = 400
    load: dict = field(default_factory=dict)

    def load_kwargs(self) -> dict:
        return dict(self.load)


_HASHTAG = ("the papers' demo showed each component's most popular hashtag; CollegeMsg has "
            "no labels (demo(\"travian\"): each player's alliance)")

#: The demo's datasets.  ``collegemsg`` ships with ddlab's dependencies; the others need the
#: shared data folder (``../shared/data``, or ``$DDLAB_DATA_DIR``).
DEMO_DATA = {
    "collegemsg": DemoData(
        "collegemsg", "7d", "1h", position=47 * 24 + 14, origin="2004-04-15",
        about="CollegeMsg: 59,835 messages among 1,899 students (UC Irvine, 2004); a 7-day "
              "window moving one hour per step", no_labels=_HASHTAG, interval_ms=400),
    "travian": DemoData(
        "travian-alliances", "1d", "10min", position=6 * 24 * 6, origin="2009-12-01 05:00",
        about="Travian: 451,589 in-game messages among about 4,400 players (December 2009), "
              "each labelled with its sender's alliance of that day; a 1-day window moving "
              "10 minutes per step", label_name="alliance", interval_ms=400),
    "twitter24h": DemoData(
        "twitter24h", "1h", "1min", position=12 * 60, origin=None,
        about="Twitter: 24 hours of @mentions (retweets left out); a 1-hour window moving "
              "one minute per step (the papers' data: mentions, but no hashtags)",
        no_labels="this file has no hashtags", prepare=("mentions only", _mentions_only),
        load={"with_type": True}, interval_ms=400),
}


def demo_windows(data: str = "collegemsg", *, cache: bool = True, progress=None):
    """The window batches of a demo dataset (cached after the first time: see
    :func:`~ddlab.sources.cached_windows`)."""
    spec = _spec(data)
    variant, prepare = spec.prepare if spec.prepare else ("", None)
    try:
        return cached_windows(spec.dataset, spec.width, spec.step, start=_origin(spec),
                              prepare=prepare, variant=variant, cache=cache, progress=progress,
                              **spec.load_kwargs())
    except DatasetNotFound as err:
        raise DatasetNotFound(
            f"demo({data!r}) needs the shared data folder, which is not here: {err} "
            f"(demo() runs on CollegeMsg, which ships with ddlab)") from None


def _origin(spec: DemoData) -> int | None:
    if spec.origin is None:
        return None
    import pandas as pd

    return int(pd.Timestamp(spec.origin, tz="UTC").timestamp())


def _prepare_while_spark_starts(spec: DemoData, cache: bool) -> None:
    """When the windows must be cut on Spark, boot its JVM in the background (seconds) and
    meanwhile import the explorer (bokeh) and load the engine's compiled kernels, which the
    first screen needs: the waits overlap instead of adding up on a machine's first run."""
    variant = spec.prepare[0] if spec.prepare else ""
    try:
        cached = cache and windows_cached(spec.dataset, spec.width, spec.step,
                                          start=_origin(spec), variant=variant,
                                          **spec.load_kwargs())
    except DatasetNotFound:
        return   # demo_windows says what is missing
    if not cached:
        # the demo's Spark work is one small windowing job: a JVM tuned to come up fast
        # (set DDLAB_DEMO_SPARK_DEFAULTS=1 to start it with Spark's defaults)
        quick = not os.environ.get("DDLAB_DEMO_SPARK_DEFAULTS")
        start_spark(QUICK_START_JAVA_OPTIONS if quick else "")
    from . import explorer  # noqa: F401  (bokeh and ipywidgets: a second of imports)

    kernels.active()


def _spec(data: str) -> DemoData:
    if isinstance(data, DemoData):
        return data
    if data not in DEMO_DATA:
        raise ValueError(f"demo: unknown data {data!r}; choose one of {', '.join(DEMO_DATA)}")
    return DEMO_DATA[data]


def demo(data: str | DemoData = "collegemsg", *, position: int | None = None,
         cache: bool = True, progress: bool = True, workers: int | None = None,
         **options) -> Explorer:
    """The sliding-window SCC explorer on ``data`` (``"collegemsg"``, ``"travian"``,
    ``"twitter24h"``: see :data:`DEMO_DATA`), its first screen one step after ``position - 1``
    (default: the dataset's), the reference lines of that window computed (in a kernel: as
    soon as the cell is done, when the window settles, so the explorer shows first).

    ``cache=False`` windows on Spark even if the batches were stored before; ``workers``:
    the flow's processes (default ``DDLAB_WORKERS``, else one; with more, the lattice hover
    and the latency plot show each worker's share); ``options``:
    :class:`~ddlab.widgets.ExplorerOptions` fields (``interval_ms``, ``settle_ms``, ...).

    >>> ex = demo()                      # in a notebook cell: the explorer appears  # doctest: +SKIP
    >>> ex.move_to(ex.position + 5); ex.settle(); print(ex.status.value)            # doctest: +SKIP
    """
    spec = _spec(data)
    row = Progress(f"demo on {spec.dataset}") if progress else NullProgress()
    with row:
        _prepare_while_spark_starts(spec, cache)
        batches = demo_windows(data, cache=cache, progress=row)
        first = min(spec.position if position is None else int(position), batches.steps - 1)
        row.phase(f"building the dataflow and loading the window at position {first - 1}")
        opts = {"interval_ms": spec.interval_ms, **options, "start": max(first - 1, 0),
                "references_at_start": False}
        from .explorer import explore_graph

        ex = explore_graph(batches, "scc", label_name=spec.label_name,
                           no_labels=spec.no_labels, workers=workers, **opts)
        row.phase("moving one step")
        ex.move_to(first)
        if running_loop() is None:   # in a kernel the window settles once the cell is done
            ex.settle()
    ex.data = spec
    ex.batches = batches
    return ex

