"""Window batches computed once on Spark and kept on disk, so opening the demo again does not
start a JVM and re-window the data.

Why: a notebook's "Run All" on a fresh kernel spends most of its time starting Spark and
running its first jobs (measured in ``benchmarks/RESULTS.md``), although the window batches
of a dataset never change.  :func:`cached_windows` looks them up by everything they depend on
(the dataset's files with their size and modification time, the loader's options, width,
step, simple or multigraph, ddlab's version); a miss loads and windows on Spark as usual,
fetches every batch once and stores them as Parquet; a hit reads that file with pyarrow.  Both
give a :class:`StoredWindows`, which answers like :class:`~ddlab.sources.WindowBatches`
(``steps``, ``window(k)``, ``batch(k)``, ...) from memory.

The cache lives in ``$DDLAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/ddlab``, else
``~/.cache/ddlab`` (``windows/`` inside); deleting it is always safe.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
import warnings
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .._version import __version__
from .caches import cache_dir
from .catalog import DATASETS, load_dataset
from .datasets import TRAVIAN_KINDS, collegemsg_path, dataset_path
from .session import get_spark
from .windows import SlidingWindows, format_duration, to_seconds, window_updates

__all__ = ["StoredWindows", "cached_windows", "windows_cached", "dataset_files", "cache_dir", "CACHE_FORMAT"]

#: Bumped whenever what is stored (or how batches are computed) changes meaning.
CACHE_FORMAT = 1


class StoredWindows(SlidingWindows):
    """Every step's update batch of one sliding window, held in memory (from the cache).

    The same questions as :class:`~ddlab.sources.WindowBatches`: ``steps``, ``window(k)``,
    ``batch(k)`` (a fresh DataFrame ``src, dst[, label], diff``), ``sizes``, iteration."""

    def __init__(self, frame: pd.DataFrame, *, origin: int, width: int, step: int, steps: int,
                 multigraph: bool, columns, source: str = "", stored: str = ""):
        self.origin, self.width, self.step, self.steps = int(origin), int(width), int(step), int(steps)
        self.multigraph = bool(multigraph)
        self.columns = tuple(columns)
        self.source, self.stored = source, stored
        steps_col = frame["step"].to_numpy()
        if len(steps_col) > 1 and np.any(steps_col[1:] < steps_col[:-1]):
            frame = frame.sort_values("step", kind="stable")
            steps_col = frame["step"].to_numpy()
        self._frame = frame.drop(columns="step").reset_index(drop=True)
        self._bounds = np.searchsorted(steps_col, np.arange(self.steps + 1), side="left")
        self.sizes = np.diff(self._bounds).astype(np.int64)
        self.total_rows = int(self.sizes.sum())

    def batch(self, k: int) -> pd.DataFrame:
        """The update batch that moves the input from position ``k-1`` to ``k``."""
        self._check(k)
        return self._rows(self._frame, self._bounds[k], self._bounds[k + 1])

    def prefetch(self) -> None:
        """Nothing to fetch: everything is in memory."""

    def unpersist(self) -> None:
        """Nothing held on Spark."""

    def to_pandas(self) -> pd.DataFrame:
        """All batches in one DataFrame with a ``step`` column."""
        steps = np.repeat(np.arange(self.steps), self.sizes)
        return self._frame.assign(step=steps)[["step", *self._frame.columns]]

    def __repr__(self) -> str:
        mode = "multigraph" if self.multigraph else "simple graph"
        return (f"StoredWindows({self.steps:,} steps of {format_duration(self.step)}, window "
                f"{format_duration(self.width)}, {mode}, records {'/'.join(self.columns)}, "
                f"{self.total_rows:,} update rows{'; ' + self.stored if self.stored else ''})")


def dataset_files(name: str, path=None) -> list[Path]:
    """The files a named dataset is read from (what its cached windows depend on)."""
    key = name.lower().replace("_", "").replace(" ", "")
    if key == "collegemsg":
        return [collegemsg_path()]
    if key == "travian-alliances":
        return [dataset_path("travian/travian-messages.zip", path, "Travian messages"),
                dataset_path("travian/travian-communities.zip", None, "Travian communities")]
    if key == "travian" or key.startswith("travian-"):
        kind = key.split("-", 1)[1] if "-" in key else "messages"
        kinds = TRAVIAN_KINDS if kind == "all" else (kind,)
        return [dataset_path(f"travian/travian-{k}.zip", path, f"Travian {k}") for k in kinds]
    if key not in DATASETS or DATASETS[key].relative_path is None:
        raise ValueError(f"dataset_files: unknown dataset {name!r}")
    return [dataset_path(DATASETS[key].relative_path, path, name)]


def _fingerprint(files: list[Path]) -> list:
    out = []
    for f in files:
        st = f.stat()
        if f.is_dir():   # a folder of files: every file inside counts
            out.append([str(f.resolve()), sorted((c.name, c.stat().st_size, c.stat().st_mtime_ns)
                                                 for c in f.iterdir() if c.is_file())])
        else:
            out.append([str(f.resolve()), st.st_size, st.st_mtime_ns])
    return out


def _key(name, files, width, step, start, multigraph, variant, load_kwargs) -> tuple[str, dict]:
    material = {"format": CACHE_FORMAT, "ddlab": __version__, "dataset": name,
                "files": _fingerprint(files), "width": width, "step": step, "start": start,
                "multigraph": bool(multigraph), "variant": variant,
                "load": {k: repr(v) for k, v in sorted((load_kwargs or {}).items())}}
    digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:16]
    return digest, material


def _target(name, path, width_s, step_s, start, multigraph, variant, load_kwargs):
    files = dataset_files(name, path)
    digest, material = _key(name, files, width_s, step_s, start, multigraph, variant,
                            load_kwargs)
    return cache_dir() / "windows" / (
        f"{name}-{format_duration(width_s)}-{format_duration(step_s)}-{digest}.parquet"), material


def windows_cached(name: str, width, step, *, path=None, start: int | None = None,
                   multigraph: bool = False, variant: str = "", **load_kwargs) -> bool:
    """Whether :func:`cached_windows` with these arguments would read the cache (so a
    caller knows before asking whether Spark will be needed)."""
    target, _ = _target(name, path, to_seconds(width), to_seconds(step), start, multigraph,
                        variant, load_kwargs)
    return target.exists()


def cached_windows(name: str, width, step, *, path=None, start: int | None = None,
                   multigraph: bool = False,
                   prepare: Callable | None = None, variant: str = "", cache: bool = True,
                   progress=None, spark=None, **load_kwargs) -> StoredWindows:
    """The window batches of dataset ``name`` (see :func:`~ddlab.sources.load_dataset`),
    from the cache when they were computed before, else computed on Spark and stored.

    ``start``: position 0's start in unix seconds (default: the first event).
    ``prepare``: a function applied to the loaded Spark DataFrame before windowing (e.g. a
    filter), named by ``variant`` in the cache key.  ``cache=False`` computes without
    reading or writing the cache.  ``progress``: anything with ``phase(text)`` (e.g.
    :class:`ddlab.widgets.Progress`) to say what is happening.
    """
    width_s, step_s = to_seconds(width), to_seconds(step)
    target, material = _target(name, path, width_s, step_s, start, multigraph, variant,
                               load_kwargs)
    say = progress.phase if progress is not None else (lambda text: None)
    if cache and target.exists():
        say(f"reading the {format_duration(width_s)} windows of {name} from the cache")
        stored = _read_or_say_why(target, say)
        if stored is not None:
            return stored
    say("starting Spark (the JVM's first start takes a while)")
    session = spark or get_spark()
    say(f"loading {name} on Spark")
    events = load_dataset(name, path=path, spark=session, **load_kwargs)
    # Two jobs on a cold JVM (each costs seconds there): the loader's count, which also finds
    # the time range, and the windowing, fetched in one go.  A `prepare`d table's range is
    # unknown: one more job finds it, over the table kept on Spark meanwhile.
    source_events = events if prepare is None else prepare(events.df).cache()
    say(f"cutting every {format_duration(width_s)} window position's changes "
        f"(step {format_duration(step_s)}) on Spark")
    plan = window_updates(source_events, width_s, step_s, multigraph=multigraph, start=start,
                          spark=session)
    frame = plan.updates.toArrow().to_pandas()   # in any order: StoredWindows sorts by step
    if prepare is not None:
        source_events.unpersist()
    source = f"{name} ({events.report.rows_loaded:,} events)"
    stored = StoredWindows(frame, origin=plan.origin, width=plan.width, step=plan.step,
                           steps=plan.steps, multigraph=multigraph, columns=plan.columns,
                           source=source, stored="computed on Spark just now")
    if cache:
        _write(target, stored, material)
    return stored


def _read_or_say_why(target: Path, say: Callable) -> StoredWindows | None:
    """The cached windows in ``target``, or ``None`` after saying in one line (a warning, and
    to the progress display) why the file could not be read and that it is recomputed on
    Spark and overwritten: minutes nobody should have to wonder about."""
    try:
        return _read(target)
    except Exception as err:   # a damaged or foreign file
        reason = " ".join(f"{type(err).__name__}: {err}".split())[:200]
        text = (f"ddlab: the cached windows {target} could not be read ({reason}); computing "
                f"them again on Spark and overwriting the file")
        warnings.warn(text, RuntimeWarning, stacklevel=3)
        say(text)
        return None


def _write(target: Path, stored: StoredWindows, material: dict) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta = {"origin": stored.origin, "width": stored.width, "step": stored.step,
            "steps": stored.steps, "multigraph": stored.multigraph,
            "columns": list(stored.columns), "source": stored.source,
            "computed": time.strftime("%Y-%m-%d %H:%M"), "key": material}
    table = pa.Table.from_pandas(stored.to_pandas(), preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                           b"ddlab.windows": json.dumps(meta).encode()})
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, target)       # atomic: a reader never sees half a file
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _read(target: Path) -> StoredWindows:
    import pyarrow.parquet as pq

    table = pq.read_table(target)
    meta = json.loads(table.schema.metadata[b"ddlab.windows"])
    return StoredWindows(table.to_pandas(), origin=meta["origin"], width=meta["width"],
                         step=meta["step"], steps=meta["steps"], multigraph=meta["multigraph"],
                         columns=meta["columns"], source=meta["source"],
                         stored=f"cached {meta['computed']} in {target.parent}")
