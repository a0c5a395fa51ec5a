"""Named datasets: CollegeMsg always; the shared-data ones when ../shared/data is present."""
from __future__ import annotations

import pytest

from ddlab.sources import DatasetNotFound, load_dataset

from .conftest import collegemsg_pandas, shared_file

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("error::FutureWarning")]


def test_collegemsg_matches_pandas_parse(spark):
    df, report = load_dataset("collegemsg")
    assert report.ok and report.rows_loaded == 59_835
    got = df.toPandas().sort_values(["time", "src", "dst"], ignore_index=True)
    expected = collegemsg_pandas().sort_values(["time", "src", "dst"], ignore_index=True)
    assert got.dtypes.tolist() == expected.dtypes.tolist()
    assert got.equals(expected)
    assert got["src"].nunique() <= 1_899 and (got["time"].max() - got["time"].min()) // 86_400 == 193


def test_twitter24h(spark):
    shared_file("twitter24h/twitter_24h.csv.gz")
    df, report = load_dataset("twitter24h", with_type=True)
    assert report.ok and report.rows_loaded == 130_360
    lo, hi = df.selectExpr("min(time)", "max(time)").first()
    assert 4 <= lo and hi <= 86_399
    assert sorted(r[0] for r in df.select("label").distinct().collect()) == ["m", "r"]


def test_travian_all_kinds_as_one_graph(spark):
    shared_file("travian/travian-messages.zip")
    everything = load_dataset("travian", kind="all", label=True)
    assert everything.report.rows_loaded == 451_589 + 270_815 + 632_800
    assert everything.report.ok
    per_kind = {r["label"]: r["count"] for r in everything.df.groupBy("label").count().collect()}
    assert per_kind == {"messages": 451_589, "trades": 270_815, "attacks": 632_800}


def test_enron_topics_and_bogus_times(spark):
    shared_file("enron/igraphdata_enron_edges.csv.gz")
    df, report = load_dataset("enron")
    assert report.rows_read == 125_409 and report.malformed == {"time out of range": 174}
    assert dict(df.dtypes)["label"] == "int"
    assert tuple(df.selectExpr("min(label)", "max(label)").first()) == (-1, 32)


def test_bitcoinotc(spark):
    shared_file("bitcoinotc/soc-sign-bitcoinotc.csv.gz")
    df, report = load_dataset("bitcoinotc", with_rating=True)
    assert report.ok and report.rows_loaded == 35_592
    assert df.agg({"label": "min"}).first()[0] == -10


def test_missing_file_names_the_path(tmp_path):
    missing = tmp_path / "nowhere.csv.gz"
    with pytest.raises(DatasetNotFound) as err:
        load_dataset("twitter24h", path=missing)
    assert str(missing) in str(err.value) and "path=" in str(err.value)


def test_default_path_follows_ddlab_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DDLAB_DATA_DIR", str(tmp_path))
    with pytest.raises(DatasetNotFound, match=str(tmp_path / "enron")):
        load_dataset("enron")
    with pytest.raises(ValueError, match="unknown dataset 'nope'"):
        load_dataset("nope")
