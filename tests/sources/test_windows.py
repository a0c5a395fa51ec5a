"""Window update batches on Spark: replayed batches equal the window computed directly."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ddlab
from ddlab.sources import WindowFeed, load_dataset, window_batches

from .conftest import accumulate, collegemsg_pandas, twitter_pandas, window_reference

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("error::FutureWarning")]


def as_dict(batch: pd.DataFrame, columns=("src", "dst")) -> dict:
    return {tuple(int(v) if isinstance(v, np.integer) else v for v in r[:-1]): int(r[-1])
            for r in batch[list(columns) + ["diff"]].itertuples(index=False)}


def test_small_example_exact_batches(spark):
    events = pd.DataFrame({"src": [1, 1, 2, 1, 3], "dst": [2, 2, 3, 2, 4], "time": [0, 5, 12, 25, 31]})
    simple = window_batches(events, width=10, step=5)
    assert (simple.steps, simple.origin) == (6, 0)
    assert [simple.window(k) for k in (0, 5)] == [(0, 10), (25, 35)]
    assert [as_dict(b) for b in simple] == [
        {(1, 2): 1}, {(2, 3): 1}, {(1, 2): -1}, {(2, 3): -1}, {(1, 2): 1}, {(3, 4): 1}]
    multi = window_batches(events, width=10, step=5, multigraph=True)
    assert [as_dict(b) for b in multi] == [
        {(1, 2): 2}, {(1, 2): -1, (2, 3): 1}, {(1, 2): -1}, {(2, 3): -1}, {(1, 2): 1}, {(3, 4): 1}]
    assert list(multi.batch(1).columns) == ["src", "dst", "diff"]
    assert multi.batch(1)["diff"].dtype == np.int64 and multi.batch(1)["src"].dtype == np.int64
    # start/end: windows from t=10 until one contains t=20 ("1h"-style strings work too)
    cut = window_batches(events, "10s", "5s", start=10, end=20)
    assert [cut.window(k) for k in range(cut.steps)] == [(10, 20), (15, 25)]
    assert [as_dict(b) for b in cut] == [{(2, 3): 1}, {(2, 3): -1}]


def test_a_load_result_windows_with_its_reported_range_and_no_job_of_its_own(spark, tmp_path):
    """The loader's report carries the time range, so windowing a LoadResult spends no job
    finding it; the batches equal those of the bare DataFrame (whose range is computed)."""
    from ddlab.sources import load_events, window_updates

    path = tmp_path / "e.csv"
    path.write_text("s,d,t\n1,2,0\n1,2,5\n2,3,12\n1,2,25\n3,4,31\n")
    loaded = load_events(str(path), src="s", dst="d", time="t", time_format="unix")
    assert loaded.report.time_range == (0, 31)
    jobs = spark.sparkContext.statusTracker()
    spark.sparkContext.setJobGroup("ddlab-range", "window_updates on a LoadResult")
    try:
        plan = window_updates(loaded, 10, 5)
        assert list(jobs.getJobIdsForGroup("ddlab-range")) == []
    finally:
        spark.sparkContext.setJobGroup("", "")
    assert (plan.origin, plan.steps) == (0, 6)
    with_report = window_batches(loaded, 10, 5)
    bare = window_batches(loaded.df, 10, 5)
    assert (with_report.steps, with_report.origin) == (bare.steps, bare.origin)
    assert [as_dict(b) for b in with_report] == [as_dict(b) for b in bare] == [
        {(1, 2): 1}, {(2, 3): 1}, {(1, 2): -1}, {(2, 3): -1}, {(1, 2): 1}, {(3, 4): 1}]


def test_labels_are_part_of_the_record(spark):
    events = pd.DataFrame({"src": [1, 1, 1], "dst": [2, 2, 2], "time": [0, 1, 2], "label": ["m", "r", "m"]})
    wb = window_batches(events, width=10, step=5)
    assert wb.columns == ("src", "dst", "label")
    assert as_dict(wb.batch(0), wb.columns) == {(1, 2, "m"): 1, (1, 2, "r"): 1}
    assert as_dict(window_batches(events, 10, 5, label=False).batch(0)) == {(1, 2): 1}


def check_replay(wb, events: pd.DataFrame, multigraph: bool, positions) -> None:
    """Sum batches 0..k in pandas (forward), and subtract going back: equal to the direct window."""
    batches = []
    for k in range(wb.steps):
        batches.append(wb.batch(k))
        if k in positions:
            start, end = wb.window(k)
            assert accumulate(batches) == window_reference(events, start, end, multigraph), f"position {k}"
    # backward from the end to a random position is the negation of the batches passed
    k = sorted(positions)[len(positions) // 2]
    undo = [b.assign(diff=-b["diff"]) for b in batches[k + 1:]]
    start, end = wb.window(k)
    assert accumulate(batches + undo) == window_reference(events, start, end, multigraph)


@pytest.fixture(scope="module")
def collegemsg(spark):
    return load_dataset("collegemsg").df.cache(), collegemsg_pandas()


@pytest.fixture(scope="module")
def twitter(spark):
    expected = twitter_pandas()  # skips when the shared data is absent
    return load_dataset("twitter24h").df.cache(), expected


@pytest.mark.parametrize("multigraph", [False, True], ids=["simple", "multigraph"])
def test_collegemsg_replay_equals_direct_window(collegemsg, multigraph):
    df, events = collegemsg
    wb = window_batches(df, "7d", "1d", multigraph=multigraph, rows_per_chunk=5_000)  # many chunks
    assert wb.steps == 188 and len(wb._chunks) > 5
    rng = np.random.default_rng(1)
    check_replay(wb, events, multigraph, set(rng.integers(0, wb.steps, 8).tolist()) | {0, wb.steps - 1})
    wb.unpersist()


@pytest.mark.parametrize("multigraph", [False, True], ids=["simple", "multigraph"])
def test_twitter_replay_equals_direct_window(twitter, multigraph):
    df, events = twitter
    wb = window_batches(df, "1h", "1min", multigraph=multigraph, rows_per_chunk=40_000)
    assert wb.steps == 1381
    rng = np.random.default_rng(2)
    check_replay(wb, events, multigraph, set(rng.integers(0, wb.steps, 8).tolist()) | {0, wb.steps - 1})
    wb.unpersist()


def check_feed(wb, events: pd.DataFrame, multigraph: bool, seed: int) -> None:
    flow = ddlab.Dataflow()
    edges = flow.input("edges")
    view = edges.view()
    feed = WindowFeed(wb, edges)
    assert feed.position == -1 and feed.window is None

    def check():
        start, end = feed.window
        assert (feed.start, feed.end) == (start, end)
        assert view.to_dict() == window_reference(events, start, end, multigraph), f"position {feed.position}"

    rng = np.random.default_rng(seed)
    stops = sorted(set(rng.integers(0, wb.steps, 5).tolist()))
    for k in stops:  # forward, one epoch per position
        feed.forward(k - feed.position)
        assert feed.position == k
        check()
    feed.backward(17)  # backward = negated batches
    check()
    epochs = feed.epochs
    feed.seek(int(rng.integers(0, wb.steps)), combine=True)  # a slider jump: one epoch
    assert feed.epochs == epochs + 1
    check()
    feed.seek(max(0, feed.position - 3))
    check()
    assert feed.forward(10 * wb.steps) == wb.steps - 1 and feed.at_end
    check()
    feed.seek(-1)
    assert view.to_dict() == {} and flow.epoch == feed.epochs


@pytest.mark.parametrize("multigraph", [False, True], ids=["simple", "multigraph"])
def test_collegemsg_feed_into_engine(collegemsg, multigraph):
    df, events = collegemsg
    check_feed(window_batches(df, "7d", "1d", multigraph=multigraph), events, multigraph, seed=3)


@pytest.mark.parametrize("multigraph", [False, True], ids=["simple", "multigraph"])
def test_twitter_feed_into_engine(twitter, multigraph):
    df, events = twitter
    check_feed(window_batches(df, "1h", "1min", multigraph=multigraph), events, multigraph, seed=4)


@pytest.mark.spark
def test_feed_can_stage_moves_for_one_epoch(spark):
    """With step=False a feed only stages its batches; the caller closes one epoch."""
    events = collegemsg_pandas()
    batches = window_batches(events, width="7d", step="1d", spark=spark)
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    view = edges.view()
    feed = WindowFeed(batches, edges, step=False)
    feed.forward(3)
    assert flow.epoch == 0 and edges.pending_count > 0
    flow.step()
    start, end = batches.window(2)
    assert view.to_dict() == window_reference(events, start, end, multigraph=False)
