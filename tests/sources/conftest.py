"""Spark test helpers: shared-data paths and oracles (the one local[2] session for the whole
run is the ``spark`` fixture of ``tests/conftest.py``).

Spark tests are marked ``spark`` (run a fast loop with ``-m "not spark"``) and skip with the
reason when Java 17+ or pyspark is missing.  Arrow fallback is off, so an Arrow problem fails
loudly instead of silently converting row by row.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"


def shared_file(relative: str) -> Path:
    """A file of ``../shared/data``; skips the test (saying which file) when it is absent."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"needs {relative} from the shared data folder, not present at {path}")
    return path


def collegemsg_pandas() -> pd.DataFrame:
    """The oracle's CollegeMsg, parsed by pandas (independently of Spark): src, dst, time."""
    from ddlab.sources import DatasetNotFound
    from ddlab.sources import collegemsg_pandas as read

    try:
        return read()
    except DatasetNotFound as err:
        pytest.skip(str(err))


def twitter_pandas() -> pd.DataFrame:
    raw = pd.read_csv(shared_file("twitter24h/twitter_24h.csv.gz"))
    return raw.rename(columns={"source": "src", "target": "dst"})[["src", "dst", "time"]]


def window_reference(events: pd.DataFrame, start: int, end: int, multigraph: bool, columns=("src", "dst")) -> dict:
    """The window ``[start, end)`` computed directly: record tuple -> multiplicity."""
    inside = events[(events["time"] >= start) & (events["time"] < end)]
    counts = inside.groupby(list(columns)).size()
    return {tuple(int(v) if isinstance(v, (np.integer,)) else v for v in (k if isinstance(k, tuple) else (k,))):
            (int(n) if multigraph else 1) for k, n in counts.items()}


def accumulate(batches: list[pd.DataFrame], columns=("src", "dst")) -> dict:
    """Sum update batches in pandas: record tuple -> accumulated multiplicity (zeros dropped)."""
    nonempty = [b for b in batches if len(b)]
    if not nonempty:
        return {}
    total = pd.concat(nonempty, ignore_index=True).groupby(list(columns))["diff"].sum()
    return {tuple(int(v) if isinstance(v, np.integer) else v for v in (k if isinstance(k, tuple) else (k,))): int(n)
            for k, n in total.items() if n != 0}
