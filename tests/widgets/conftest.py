"""What the explorer's tests share: the demo's windows of CollegeMsg, cut on Spark once per
test module, and a month of daily windows cut with pandas for the tests that need no Spark."""
from __future__ import annotations

import pandas as pd
import pytest

from ddlab.sources import collegemsg_pandas

from pandas_windows import pandas_windows


@pytest.fixture(scope="module")
def hourly(spark):
    """CollegeMsg in 7-day windows moving one hour per step (the demo's windows), with the
    events themselves for the oracles."""
    from ddlab.sources import load_dataset, window_batches

    events = collegemsg_pandas()
    start = int(pd.Timestamp("2004-04-15", tz="UTC").timestamp())
    batches = window_batches(load_dataset("collegemsg", spark=spark), "7d", "1h", start=start)
    yield events, batches
    batches.unpersist()


@pytest.fixture(scope="module")
def daily():
    """CollegeMsg's first month in 7-day windows moving one day, cut with pandas (no Spark),
    with the events themselves for the oracles."""
    events = collegemsg_pandas()
    return events, pandas_windows(events, steps=30)
