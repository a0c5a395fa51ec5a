"""The bad-input matrix: each kind of bad input gives one specific error that names what and
where, and afterwards every collection, view, feed position and statistic reads exactly as
before (or, for the one documented exception - a failing subscriber - exactly as a flow that
committed the epoch).

Append rows to ``MATRIX``: ``Row(kind, action, error type, message regex)``; the action gets a
:class:`Scenario` (a flow with two inputs, a loop, joins, reduces, views, a subscriber and a
window feed, two epochs in) and does the bad thing.  ``spark=True`` rows get the session-wide
Spark fixture as ``scn.spark`` (and skip with its reason without Java).  ``outcome="committed"``
rows compare with a scenario that stepped the same epoch successfully.
"""
from __future__ import annotations

import signal
from dataclasses import dataclass, field

import pandas as pd
import pytest

import ddlab
import ddlab.sources
from ddlab import (BudgetExceeded, CheckpointError, DataflowError, InputError,
                   NonConvergenceError, OperatorError, SchemaError, SubscriberError)
from ddlab.algorithms import connected_components

from .reliability_helpers import reading


class ListBatches:
    """Window batches held in a list (what ``WindowFeed`` reads: ``batch(k)``, ``window(k)``)."""

    width, step = 10, 10

    def __init__(self, frames):
        self.frames = frames

    def __len__(self):
        return len(self.frames)

    def batch(self, k):
        return self.frames[k].copy()

    def window(self, k):
        return (k * 10, k * 10 + 10)


@dataclass
class Scenario:
    flow: ddlab.Dataflow
    inputs: dict
    views: dict
    seen: list
    feed: object
    spark: object = None
    extra: dict = field(default_factory=dict)

    def read(self):
        return reading(self.flow, self.inputs, self.views, self.seen, [self.feed])


def scenario(subscriber=None) -> Scenario:
    flow = ddlab.Dataflow("matrix", max_iterations=50)
    edges = flow.input("edges", columns=["src", "dst"])
    names = flow.input("names", columns=["node", "name"])
    views = {"cc": connected_components(edges).view(),
             "named": edges.join(names, select=(1, 2)).view(),
             "degree": edges.project(0).count().view()}
    seen = []
    edges.subscribe(seen.append, name="log")
    if subscriber is not None:
        edges.subscribe(subscriber, name="bad subscriber")
    frames = [pd.DataFrame({"src": [1, 2], "dst": [2, 3], "diff": [1, 1]}),
              pd.DataFrame({"src": [3], "dst": [4], "diff": [1]}),
              pd.DataFrame({"src": [1], "dst": [2], "diff": [-1]})]
    feed = ddlab.sources.WindowFeed(ListBatches(frames), edges, flow)
    names.insert([(1, "ann"), (4, "dan")])
    feed.forward(2)  # two epochs in
    return Scenario(flow, {"edges": edges, "names": names}, views, seen, feed)


@dataclass
class Row:
    kind: str
    action: object
    error: type
    match: str | None
    spark: bool = False
    outcome: str = "unchanged"  # or "committed"


def _step_with(fn):
    """An action that stages one edge, then builds nothing: ``fn`` runs inside the epoch."""
    def act(scn):
        fn(scn)
        scn.flow.step()
    return act


def _op_rows():
    """User functions of every kind, each raising inside an epoch."""
    def with_operator(build):
        def act(scn):
            # a fresh flow (operators cannot be added after data flowed): the scenario's flow
            # must stay untouched, and this one rolls back to empty
            flow = ddlab.Dataflow("fresh", max_iterations=30)
            x = flow.input("x")
            view = build(x).view()
            scn.extra["fresh"] = (flow, view)
            x.insert([(1, 0), (2, 5)])
            try:
                flow.step()
            finally:
                assert flow.epoch == 0 and view.to_dict() == {}
        return act

    boom = ZeroDivisionError
    return [
        Row("map raises", with_operator(lambda x: x.map(lambda r: r[1] / r[1] * 0 + 1 // r[1])),
            OperatorError, r"map#\d+: .* raised ZeroDivisionError: .* on record \(1, 0\)"),
        Row("filter raises", with_operator(lambda x: x.filter(lambda r: 1 // r[1])),
            OperatorError, r"filter#\d+: .* raised ZeroDivisionError"),
        Row("flat_map returns a non-iterable", with_operator(lambda x: x.flat_map(lambda r: 3)),
            OperatorError, r"flat_map#\d+: .* raised TypeError"),
        Row("map_columns returns the wrong length",
            with_operator(lambda x: x.map_columns(lambda k, v: k[:1])),
            OperatorError, r"map_columns#\d+: .* returned a column of 1 values for 2 records"),
        Row("filter_columns raises", with_operator(lambda x: x.filter_columns(lambda k, v: k[5])),
            OperatorError, r"filter_columns#\d+: .* raised IndexError"),
        Row("reduce raises", with_operator(lambda x: x.reduce(lambda k, vs: [(1 // vs[0][0], 1)])),
            OperatorError, r"reduce#\d+: .* raised ZeroDivisionError: .* for key 1"),
        Row("reduce returns a malformed result", with_operator(lambda x: x.reduce(lambda k, vs: [7])),
            OperatorError, r"reduce#\d+: .* must return \(value, multiplicity\) pairs; for key"),
        Row("cogroup raises", with_operator(lambda x: x.cogroup(x, lambda k, a, b: 1 // 0)),
            OperatorError, r"cogroup#\d+: .* raised ZeroDivisionError: .* for key"),
        Row("join selector raises",
            with_operator(lambda x: x.join(x, select=lambda k, a, b: 1 // a)),
            OperatorError, r"join#\d+: .* raised ZeroDivisionError"),
        Row("threshold function raises",
            with_operator(lambda x: x.threshold(lambda w: (_ for _ in ()).throw(boom("w")))),
            OperatorError, r"threshold#\d+: .* raised ZeroDivisionError: w on the multiplicities"),
        Row("inspect callback raises",
            with_operator(lambda x: x.inspect(lambda r, t, d: 1 // 0)),
            OperatorError, r"inspect#\d+: .* raised ZeroDivisionError: .* on update"),
        Row("priority function raises",
            with_operator(lambda x: x.prioritize(lambda k, v: k[5], lambda v: v.distinct())),
            OperatorError, r"ingress#\d+: priority function raised IndexError"),
        Row("negative priority",
            with_operator(lambda x: x.map(lambda r: (-1, r[1])).prioritize(0, lambda v: v)),
            OperatorError, r"ingress#\d+: priority of \(-1, \d\) is -1; priorities must be "
                           r"integers in 0\.\."),
        Row("non-convergent loop (a cycle)",
            with_operator(lambda x: x.iterate(lambda v: v.map(lambda r: (r[0], 1 - r[1] % 2)))),
            NonConvergenceError, r"loop 'root/iterate' did not converge within 30 iterations"),
        Row("recursion that grows without bound",
            with_operator(lambda x: x.iterate(lambda v: v.map(lambda r: (r[0], r[1] + 1))
                                              .concat(x).distinct())),
            NonConvergenceError, r"did not converge within 30 iterations"),
        Row("recursion whose rows explode",
            with_operator(lambda x: x.iterate(lambda v: v.flat_map(
                lambda r: [(r[0], r[1] * 2 + i) for i in range(2)]).concat(x))
                if not setattr(x.flow, "max_rows_per_epoch", 5_000) else None),
            BudgetExceeded, r"over the budget of 5,000 rows per operator per epoch"),
        Row("sum over strings",
            with_operator(lambda x: x.map(lambda r: (r[0], str(r[1]))).sum()),
            SchemaError, r"sum#\d+: sum needs records \(key, number\); the value columns here "
                         r"are: object"),
    ]


def _interrupt(scn):
    """The stop button (a real SIGINT) pressed while an operator inserts into a trace.
    Python's own SIGINT handler is installed for the step, whatever earlier tests or
    imported libraries left there (one that does not raise would make this row vacuous)."""
    flow = scn.flow
    from ddlab.engine.trace import Trace
    original = Trace.insert
    fired = []

    def insert(self, t, batch):
        Trace.insert = original
        fired.append(True)
        signal.raise_signal(signal.SIGINT)
        return original(self, t, batch)
    Trace.insert = insert
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        scn.inputs["edges"].insert([(7, 8)])
        flow.step()
    finally:
        Trace.insert = original
        signal.signal(signal.SIGINT, previous)
        assert fired, "the step inserted into no trace: the interrupt was never sent"


def _reentrant(scn):
    """A widget callback calling step() while a step runs (here: from inside the epoch)."""
    caught = []
    from ddlab.engine.operators.io import ViewSink
    original = ViewSink.commit

    def commit(self, epoch):
        try:
            scn.flow.step()  # what a slider's on-change handler would do
        except DataflowError as err:
            caught.append(err)
            raise
        return original(self, epoch)
    ViewSink.commit = commit
    try:
        scn.inputs["edges"].insert([(7, 8)])
        scn.flow.step()
    finally:
        ViewSink.commit = original


def _save_and_tamper(scn, tmp):
    scn.flow.save(tmp)
    manifest = tmp / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"epoch": 2', '"epoch": 3'))
    ddlab.Dataflow.load(tmp, lambda f: None)


MATRIX = [
    Row("wrong arity", lambda s: s.inputs["edges"].insert([(5, 6), (5, 6, 7)]), InputError,
        r"input 'edges': row 1 \(5, 6, 7\) has 3 fields, expected 2"),
    Row("update without a diff", lambda s: s.inputs["edges"].update([((5, 6), "1")]), InputError,
        r"input 'edges': update 0 \(\(5, 6\), '1'\) is not a \(record, diff\) pair"),
    Row("wrong type in a column", lambda s: s.inputs["edges"].insert([("5", 6)]), InputError,
        r"input 'edges': column 0 held int values and these rows give object values"),
    Row("mixed types in one batch", lambda s: s.inputs["names"].insert([(5, "e"), ("6", "f")]),
        InputError, r"input 'names': .*column 0 mixes types"),
    Row("unhashable value", lambda s: s.inputs["names"].insert([(5, ["a"])]), InputError,
        r"unhashable value \['a'\] \(list\)"),
    Row("NaN key in an int column", lambda s: s.inputs["edges"].insert([(float("nan"), 1)]),
        InputError, r"input 'edges': column types \('f', 'i'\) do not fit the earlier"),
    Row("None key", lambda s: s.inputs["edges"].insert([(None, 1)]), InputError,
        r"input 'edges': column 0 held int values and these rows give object values "
        r"\(first row: \((None|nan), 1\)\)"),
    Row("huge int", lambda s: s.inputs["edges"].insert([(2 ** 70, 1)]), InputError,
        r"column 0 held int values and these rows give object values \(first row: "
        r"\(1180591620717411303424, 1\)\)"),
    Row("empty frame missing columns", lambda s: s.inputs["edges"].insert(pd.DataFrame()),
        InputError, r"input 'edges': the DataFrame lacks column\(s\) \['src', 'dst'\]"),
    Row("float diffs", lambda s: s.inputs["edges"].update(
        pd.DataFrame({"src": [1], "dst": [2], "diff": [0.5]})), InputError,
        r"the 'diff' column must hold integers, not float64"),
    Row("join of int keys with string keys",
        _step_with(lambda s: s.inputs["names"].insert([("1", "x")])), InputError,
        r"input 'names': column 0 held int values"),
    Row("unknown input name", lambda s: s.flow.input("edges"), DataflowError,
        r"input 'edges' already exists in 'matrix'"),
    Row("feed position out of range", lambda s: s.feed.seek(9), ValueError,
        r"window position 9 out of range -1\.\.2"),
    Row("view inside a loop",
        lambda s: ddlab.Dataflow().input("x").iterate(lambda v: [v.view(), v][1]),
        DataflowError, r"is inside loop 'root/iterate\d*'; views read collections outside loops"),
    Row("operator added after data flowed", lambda s: s.inputs["edges"].count(), DataflowError,
        r"#\d+ has already sent updates \(2 epochs ran\); an operator added after it now "
        r"would miss them"),
    Row("top_k of zero", lambda s: s.inputs["edges"].top_k(0), ValueError, r"top_k needs k >= 1"),
    Row("kernel interrupt mid-epoch", _interrupt, KeyboardInterrupt, None),  # note checked below
    Row("re-entrant step() from a callback", _reentrant, ddlab.StepInProgress,
        r"'matrix': step\(\) was called while epoch 2 is still running"),
    Row("tampered checkpoint", lambda s: _save_and_tamper(s, s.extra["tmp"]), CheckpointError,
        r"manifest's checksum does not match"),
    Row("subscriber raises", lambda s: (s.inputs["edges"].insert([(7, 8)]), s.flow.step()),
        SubscriberError, r"subscriber bad subscriber#\d+ raised RuntimeError: broken display "
                         r"while receiving epoch 2\. The epoch committed and stands",
        outcome="committed"),
] + _op_rows()


# -- the Spark loaders -------------------------------------------------------------------------
def _write(tmp, name, text):
    path = tmp / name
    path.write_text(text)
    return str(path)


SPARK_ROWS = [
    Row("unknown dataset name", lambda s: ddlab.sources.load_dataset("nope", spark=s.spark),
        ValueError, r"unknown dataset 'nope'; known: .*collegemsg", spark=True),
    Row("missing file", lambda s: ddlab.sources.load_events(
        str(s.extra["tmp"] / "absent.csv"), spark=s.spark), ddlab.sources.LoadError,
        r"file not found: .*absent\.csv", spark=True),
    Row("missing dataset file", lambda s: ddlab.sources.twitter24h(
        path=s.extra["tmp"] / "no.csv.gz", spark=s.spark), ddlab.sources.DatasetNotFound,
        r"Twitter 24h: no file at .*no\.csv\.gz \(the path given\)", spark=True),
    Row("wrong column mapping", lambda s: ddlab.sources.load_events(
        _write(s.extra["tmp"], "ev.csv", "a,b,t\n1,2,100\n"), src="source", spark=s.spark),
        ddlab.sources.LoadError, r"src column 'source' not found; the columns are \['a', 'b', 't'\]",
        spark=True),
    Row("malformed rows only", lambda s: ddlab.sources.window_batches(
        ddlab.sources.load_events(_write(s.extra["tmp"], "bad.csv", "src,dst,time\nx,,zz\n,,\n"),
                                  time_format="unix", spark=s.spark), 10, 5),
        ValueError, r"no events to window", spark=True),
    Row("events lacking columns", lambda s: ddlab.sources.window_batches(
        s.spark.createDataFrame(pd.DataFrame({"src": [1], "time": [5]})), 10, 5), ValueError,
        r"events need columns src, dst, time; missing \['dst'\]", spark=True),
    Row("missing Java", lambda s: s.extra["no_java"](), ddlab.sources.SparkUnavailable,
        r"no `java` is on PATH and JAVA_HOME is unset", spark=True),
]


def _no_java(monkeypatch, tmp):
    from ddlab.sources import session

    def go():
        monkeypatch.setattr(session, "_shared", None)
        monkeypatch.setattr(session, "_shared_target", None)
        monkeypatch.delenv("SPARK_REMOTE", raising=False)
        monkeypatch.delenv("DDLAB_SPARK_MASTER", raising=False)
        monkeypatch.delenv("JAVA_HOME", raising=False)
        monkeypatch.setenv("PATH", str(tmp))
        session.get_spark()
    return go


@pytest.mark.parametrize("row", MATRIX + [pytest.param(r, marks=pytest.mark.spark)
                                          for r in SPARK_ROWS], ids=lambda r: r.kind)
def test_bad_input(row, request, tmp_path, monkeypatch):
    def broken(updates):
        if any(t == (2,) for _, t, _ in updates):  # the scenario's own epochs go through
            raise RuntimeError("broken display")

    bad_sub = broken if row.outcome == "committed" else None
    scn = scenario(bad_sub)
    scn.extra["tmp"] = tmp_path
    if row.spark:
        scn.spark = request.getfixturevalue("spark")
        scn.extra["no_java"] = _no_java(monkeypatch, tmp_path)
    before = scn.read()
    with pytest.raises(row.error, match=row.match) as info:
        row.action(scn)
    if row.error is KeyboardInterrupt:
        assert any("was rolled back" in n for n in info.value.__notes__)
    after = scn.read()
    if row.outcome == "committed":
        ref = scenario(lambda updates: None)  # the same graph, a subscriber that works
        ref.inputs["edges"].insert([(7, 8)])
        ref.flow.step()
        before = ref.read()
    assert after == before, row.kind
    # and the flow keeps working: the next window move steps and is seen
    scn.feed.forward()
    assert scn.feed.position == 2 and scn.flow.epoch == after["epoch"] + 1
    assert scn.views["degree"].to_dict() == {(2, 1): 1, (3, 1): 1} | (
        {(7, 1): 1} if row.outcome == "committed" else {})


def test_the_matrix_covers_enough_kinds():
    assert len({r.kind for r in MATRIX + SPARK_ROWS}) >= 25
