"""What the explorer's tests share: the demo's windows of CollegeMsg, cut on Spark once per
test module."""
from __future__ import annotations

import pandas as pd
import pytest

from ddlab.sources import collegemsg_pandas


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
