"""Helpers of the explorer tests: shared-data files (skipping with the reason when absent) and
the pandas reading of CollegeMsg that the oracles use (independent of Spark)."""
from __future__ import annotations

from pathlib import Path

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
    from ddlab.sources import DatasetNotFound
    from ddlab.sources import collegemsg_pandas as read

    try:
        return read()
    except DatasetNotFound as err:
        pytest.skip(str(err))
