"""Records with multiplicities from pandas and from Spark, against a plain recount."""
from __future__ import annotations

import doctest
from collections import Counter

import pandas as pd
import pytest

from ddlab.sources import LoadError, collect_records, dataset_names, load_events, records_with_diff
from ddlab.sources import records as records_module

FRAME = pd.DataFrame({"src": [1, 1, 2, 3, None, 2], "dst": [2, 2, 3, 1, 4, 3],
                      "w": ["a", "b", "a", "a", "a", "c"]})


def recount(frame, columns, multigraph):
    rows = [tuple(r) for r in frame[columns].dropna().itertuples(index=False)]
    counts = Counter(rows)
    return {r: (n if multigraph else 1) for r, n in counts.items()}


def as_counts(frame, columns):
    return {tuple(r[:-1]): r[-1] for r in frame[columns + ["diff"]].itertuples(index=False)}


@pytest.mark.parametrize("multigraph", [False, True])
def test_pandas_records_match_a_recount(multigraph):
    out = records_with_diff(FRAME, ["src", "dst"], multigraph=multigraph)
    assert list(out.columns) == ["src", "dst", "diff"] and out["diff"].dtype == "int64"
    assert as_counts(out, ["src", "dst"]) == recount(FRAME, ["src", "dst"], multigraph)
    empty = records_with_diff(FRAME.iloc[0:0], ["src", "dst"])
    assert len(empty) == 0 and "diff" in empty


def test_dataset_names_cover_every_loadable_name():
    names = dataset_names()
    assert "collegemsg" in names and {"travian-messages", "travian-all"} <= set(names)
    assert names == sorted(names[:5]) + names[5:]


def test_docstring_examples():
    result = doctest.testmod(records_module)
    assert result.attempted >= 2 and result.failed == 0


@pytest.mark.spark
@pytest.mark.parametrize("multigraph", [False, True])
def test_spark_records_match_the_pandas_ones(spark, multigraph):
    from ddlab.sources import spark_running

    assert spark_running()
    df = spark.createDataFrame(FRAME.dropna().astype({"src": "int64"}))
    out = collect_records(df, ["src", "dst"], multigraph=multigraph)
    assert out["src"].dtype == "int64" and out["diff"].dtype == "int64"
    assert as_counts(out, ["src", "dst"]) == recount(FRAME, ["src", "dst"], multigraph)
    df.createOrReplaceTempView("frame_records")
    by_sql = collect_records("SELECT src, dst FROM frame_records", ["src", "dst"],
                             multigraph=multigraph, spark=spark)
    assert as_counts(by_sql, ["src", "dst"]) == as_counts(out, ["src", "dst"])


@pytest.mark.spark
def test_missing_columns_are_named_in_the_error(spark, tmp_path):
    df = spark.createDataFrame(pd.DataFrame({"a": [1], "b": [2]}))
    with pytest.raises(LoadError) as err:
        collect_records(df, ["a", "c"])
    assert (err.value.role, err.value.column, err.value.columns) == ("columns", "c", ["a", "b"])
    path = tmp_path / "e.csv"
    path.write_text("a,b,t\n1,2,3\n")
    with pytest.raises(LoadError) as err:
        load_events(str(path), src="a", dst="bb", time="t")
    assert (err.value.role, err.value.column, err.value.columns) == ("dst", "bb", ["a", "b", "t"])
