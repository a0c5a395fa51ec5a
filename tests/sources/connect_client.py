"""Run by test_connect.py in a fresh Python process: the window pipeline against a Connect URL.

A separate process because PySpark keeps one mode per process: once a Connect session exists,
``pyspark.sql.functions`` build Connect columns, which the test run's classic session rejects.
Exit status 0 and a final "OK" line mean every check passed.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from ddlab.sources import build_session, is_connect, load_dataset, stateless_cc, window_batches  # noqa: E402
from tests.sources.conftest import accumulate, collegemsg_pandas, window_reference  # noqa: E402


def main(url: str) -> None:
    remote = build_session(remote=url)
    try:
        assert is_connect(remote), type(remote)
        assert remote.conf.get("spark.sql.session.timeZone") == "UTC"
        df, report = load_dataset("collegemsg", spark=remote)
        assert report.ok and report.rows_loaded == 59_835, report
        events = collegemsg_pandas()
        for multigraph in (False, True):
            wb = window_batches(df, "7d", "1d", multigraph=multigraph, rows_per_chunk=20_000)
            assert wb.steps == 188 and is_connect(wb.df.sparkSession)
            batches, rng = [], np.random.default_rng(5)
            positions = set(rng.integers(0, wb.steps, 4).tolist()) | {wb.steps - 1}
            for k in range(wb.steps):
                batches.append(wb.batch(k))
                if k in positions:
                    start, end = wb.window(k)
                    assert accumulate(batches) == window_reference(events, start, end, multigraph), (multigraph, k)
            wb.unpersist()
        # the stateless baseline through Connect (a small graph: each iteration is a round trip)
        edges = pd.DataFrame({"src": [1, 2, 4, 6], "dst": [2, 3, 5, 6]})
        result = stateless_cc(remote.createDataFrame(edges))
        assert result.converged and sorted(map(sorted, result.component_sets())) == [[1, 2, 3], [4, 5], [6]]
    finally:
        remote.stop()
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1])
