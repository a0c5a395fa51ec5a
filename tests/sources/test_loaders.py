"""Loading on Spark: sources, column mapping, time parsing, the malformed-row report."""
from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest

from ddlab.sources import LoadError, load_events

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("error::FutureWarning")]


def rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.toPandas().itertuples(index=False))


def test_bad_csv_rows_are_counted_and_shown(spark, tmp_path):
    path = tmp_path / "messages.csv"
    path.write_text(
        "who,whom,when,kind\n"
        "1,2,4/15/04 2:56 PM,a\n"
        "4,5\n"                              # too few fields
        "6,7,4/15/04 3:56 PM,x,9\n"          # too many fields
        ",1,4/15/04 2:56 PM,b\n"             # empty id
        "3,4,not a time,c\n"                 # unparseable time
        "5,6,,d\n"                           # empty time
        "7,8,4/16/04 1:00 AM,\n"             # fine (empty label is just null)
    )
    df, report = load_events(str(path), src="who", dst="whom", time="when", label="kind")
    assert rows(df) == [(1, 2, 1082040960, "a"), (7, 8, 1082077200, None)]
    assert df.dtypes == [("src", "bigint"), ("dst", "bigint"), ("time", "bigint"), ("label", "string")]
    assert (report.rows_read, report.rows_loaded, report.malformed_total) == (7, 2, 5)
    assert report.malformed == {"wrong field count": 2, "empty id": 1, "unparseable time": 1, "empty time": 1}
    assert report.time_format == "M/d/yy h:mm a" and report.time_format_detected
    shown = repr(report)
    assert "7 rows read, 2 loaded, 5 malformed" in shown and "messages.csv" in shown
    assert "'4,5' (wrong field count)" in shown and "'3,4,not a time,c' (unparseable time)" in shown
    assert all(ex["file"] == "messages.csv" for ex in report.examples)
    assert not report.ok


def test_headerless_gzip_files_with_unix_float_seconds(spark, tmp_path):
    for day, text in (("d1", "1,2,5,1289241911.7\n3,4,1,1289241941.2\n"), ("d2", "5,6,-1,oops\n7,8,2,1289243140\n")):
        with gzip.open(tmp_path / f"{day}.csv.gz", "wt") as f:
            f.write(text)
    df, report = load_events(
        [str(tmp_path / "d1.csv.gz"), str(tmp_path / "d2.csv.gz")], columns=["s", "d", "rating", "ts"],
        header=False, src="s", dst="d", time="ts", label="rating", label_type="int",
    )
    assert rows(df) == [(1, 2, 1289241911, 5), (3, 4, 1289241941, 1), (7, 8, 1289243140, 2)]
    assert report.malformed == {"unparseable time": 1}
    assert report.examples == [{"file": "d2.csv.gz", "reason": "unparseable time", "row": "5,6,-1,oops"}]


def test_json_lines_with_a_broken_line(spark, tmp_path):
    path = tmp_path / "events.jsonl"
    lines = [json.dumps({"a": "x", "b": "y", "t": "2020-01-01T00:00:00Z"}), "{not json",
             json.dumps({"a": "y", "b": "z", "t": "2020-01-01 00:01:00"})]
    path.write_text("\n".join(lines) + "\n")
    df, report = load_events(str(path), src="a", dst="b", time="t")
    assert rows(df) == [("x", "y", 1577836800), ("y", "z", 1577836860)]
    assert report.id_type == "string" and report.time_format == "iso"
    assert report.malformed == {"unparseable line": 1}
    assert report.examples[0]["row"] == "{not json"


def test_parquet_pandas_sql_and_spark_sources_agree(spark, tmp_path):
    pdf = pd.DataFrame({"u": [1, 2, 3], "v": [2, 3, 1],
                        "ts": pd.to_datetime(["2021-03-01 00:00:00", "2021-03-01 00:00:30",
                                              "2021-03-01 00:01:00"])})
    expected = [(1, 2, 1614556800), (2, 3, 1614556830), (3, 1, 1614556860)]
    spark.createDataFrame(pdf).write.parquet(str(tmp_path / "ev.parquet"))
    for source, kw in [
        (str(tmp_path / "ev.parquet"), {}),
        (pdf, {}),
        (spark.createDataFrame(pdf), {}),
    ]:
        df, report = load_events(source, src="u", dst="v", time="ts", **kw)
        assert rows(df) == expected and report.ok and report.id_type == "long"
    spark.createDataFrame(pdf).createOrReplaceTempView("ddlab_test_events")
    df, report = load_events("SELECT u, v, unix_timestamp(ts) AS secs FROM ddlab_test_events", format="sql",
                             src="u", dst="v", time="secs")
    assert rows(df) == expected and report.time_format == "unix"


def test_time_format_given_as_strftime_and_ids_by_position(spark, tmp_path):
    path = tmp_path / "e.tsv"
    path.write_text("x\ty\tt\n10\t20\t15.04.2004 14:56\n11\t21\t16.04.2004 09:05\n")
    df, report = load_events(str(path), src=0, dst=1, time=2, time_format="%d.%m.%Y %H:%M")
    assert rows(df) == [(10, 20, 1082040960), (11, 21, 1082106300)]
    assert report.time_format == "d.M.yyyy H:mm" and not report.time_format_detected


def test_time_range_reports_out_of_range_rows(spark):
    pdf = pd.DataFrame({"src": [1, 2], "dst": [2, 3], "time": [315525600, 1000000000]})
    df, report = load_events(pdf, time_range=(883612800, None))
    assert rows(df) == [(2, 3, 1000000000)] and report.malformed == {"time out of range": 1}


def test_clear_errors(spark, tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("a,b,t\n1,2,3\n")
    with pytest.raises(LoadError, match=r"src column 'src' not found; the columns are \['a', 'b', 't'\]"):
        load_events(str(path))
    with pytest.raises(LoadError, match="file not found"):
        load_events(str(tmp_path / "missing.csv"), src="a", dst="b", time="t")


def test_report_time_range_is_the_loaded_rows_min_and_max(spark, tmp_path):
    """Counted in the loader's one job (windowing then needs no job to find it): only the
    rows kept count, a skipped row's time does not."""
    path = tmp_path / "t.csv"
    path.write_text("s,d,t\n1,2,100\n3,4,50\n,5,10\n6,7,900\n8,9,oops\n")
    df, report = load_events(str(path), src="s", dst="d", time="t", time_format="unix")
    times = df.toPandas()["time"]
    assert report.time_range == (int(times.min()), int(times.max())) == (50, 900)
    assert "times 50..900" in repr(report)
    empty = tmp_path / "none.csv"
    empty.write_text("s,d,t\n,1,5\n")
    assert load_events(str(empty), src="s", dst="d", time="t", time_format="unix").report.time_range is None
    merged = report.merge(load_events(str(path), src="s", dst="d", time="t",
                                      time_format="unix", time_range=(60, None)).report)
    assert merged.time_range == (50, 900)


@pytest.mark.parametrize("text", [
    "who;whom;when\n1;2;5\n",                 # another separator
    '"who","whom","when"\n1,2,5\n',           # quoted names
    "who,whom,who\n1,2,5\n",                  # a duplicate name: Spark's renaming decides
    "\ufeffwho,whom,when\n1,2,5\n",           # a byte-order mark: Spark decides
    "who,,when\n1,2,5\n",                     # an empty name: Spark decides
])
def test_header_read_without_spark_names_what_spark_names(spark, tmp_path, text):
    from ddlab.sources.loaders import _local_header

    sep = ";" if ";" in text else ","
    for name, opener in (("h.csv", open), ("h.csv.gz", gzip.open)):
        path = tmp_path / name
        with opener(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
        local = _local_header([str(path)], sep)
        spark_names = spark.read.option("sep", sep).option("header", True).csv(str(path)).columns
        assert local is None or local == spark_names, (name, local, spark_names)
        if text.startswith(("who;", '"who"')):
            assert local == ["who", "whom", "when"]
