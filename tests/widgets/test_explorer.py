"""The explorer driven headless (no browser): set the controls' values and check every panel
against independent oracles - the plots' sources against ``flow.stats()`` rows, the results
panel against networkx (and a pandas recount of the top labels) on the window's events."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import ddlab
from ddlab.sources import WindowFeed
from ddlab.widgets import ExplorerOptions, component_collections, explore, explore_graph
from ddlab.widgets._deps import MissingLabDependency, require_lab
from ddlab.widgets.iterations import ZERO_Y, plotted

from ddlab.sources import collegemsg_pandas, shared_data_dir

from armed import Armed

from .oracles import scc_oracle, stats_curve, stats_lattice, window_edges


def check_move(ex, events, label_events=None):
    """Every panel of the explorer against its oracle for the current position and epoch."""
    flow, feed = ex.flow, ex.feed
    epoch, pos = flow.epoch - 1, feed.position
    assert f"position {pos}" in ex.status.value and f"epoch {epoch}" in ex.status.value
    assert ex.slider.value == pos
    assert feed.span() in ex.slider.description
    # iteration plot: this move's curve is the stats' feedback rows, zeros kept at their
    # iteration and drawn on the "0" row; the line names this move's window
    cur = ex.sources["iterations"].data
    assert cur["epoch"] == [epoch] and cur["window"] == [feed.span()]
    expected = stats_curve(flow, epoch, ex.loop)
    assert [int(v) for v in cur["records"][0]] == expected
    assert [float(v) for v in cur["ys"][0]] == [float(v) if v else ZERO_Y for v in expected]
    assert list(cur["xs"][0]) == list(range(len(expected)))
    # references: only ever those of this window
    refs = ex.sources["references"].data
    assert set(refs["window"]) <= {feed.span()} and set(refs["position"]) <= {pos}
    # lattice: this epoch's cells are the stats' rows inside the loop
    lat = ex.sources["lattice"].data
    mine = {int(i): int(u) for e, i, u in zip(lat["epoch"], lat["iteration"], lat["updates"])
            if e == epoch}
    assert mine == {i: u for i, u in stats_lattice(flow, epoch, ex.loop).items()}
    # latency: engine time and retained state of this epoch from the epoch log
    lt = ex.sources["latency"].data
    log = flow.epoch_log()
    row = log[log["epoch"] == epoch].iloc[0]
    assert lt["epoch"][-1] == epoch
    assert lt["engine_ms"][-1] == pytest.approx(row["seconds"] * 1000)
    assert lt["retained"][-1] == row["retained_updates"]
    assert lt["total_ms"][-1] >= lt["engine_ms"][-1]
    # results: components and their sizes against networkx on the window's events
    edges = window_edges(events, feed.batches, pos)
    oracle = scc_oracle(edges)
    data = ex.results.read()
    assert data["count"] == len(oracle)
    assert data["nodes"] == sum(oracle.values())
    expected = sorted(oracle.items(), key=lambda kv: (-kv[1], kv[0]))
    assert list(zip(data["top"]["component"], data["top"]["size"])) == expected[:ex.results.top]
    if label_events is not None:
        check_top_labels(data["top"], label_events, feed.batches, pos, oracle)
    return data


def check_top_labels(top, label_events, batches, pos, oracle):
    """Top label per component: a pandas recount of the window's labelled records whose source
    is in the component (ties: any of the most frequent labels)."""
    recs = window_edges(label_events, batches, pos, ("src", "dst", "label"))
    g = nx.DiGraph()
    g.add_edges_from(zip(recs["src"].tolist(), recs["dst"].tolist()))
    member = {}
    for comp in nx.strongly_connected_components(g):
        if min(comp) in oracle:
            for n in comp:
                member[n] = min(comp)
    recs = recs[recs["src"].isin(member)]
    recs = recs.assign(component=recs["src"].map(member))
    counts = recs.groupby(["component", "label"]).size()
    for comp, count, label, total in zip(top["component"], top["count"], top["label"],
                                         top["total"]):
        per = counts.loc[comp]
        assert count == per.max()
        assert label in set(per[per == per.max()].index)
        assert total == per.sum(), "the share's denominator: the component's labelled records"


# -- fixtures ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def college(spark):
    from ddlab.sources import load_dataset, window_batches

    events = collegemsg_pandas()
    batches = window_batches(load_dataset("collegemsg", spark=spark), "7d", "1d")
    yield events, batches
    batches.unpersist()


def new_explorer(batches, **options):
    return explore_graph(batches, "scc", **{"settle_ms": None, **options})


# -- tests ---------------------------------------------------------------------------------------

def test_slider_forward_backward_every_panel_matches_its_oracle(college):
    events, batches = college
    ex = new_explorer(batches)
    assert ex.loop == "root/scc/reach"
    assert "ddlab-explorer" in ex.widget._dom_classes
    check_move(ex, events)
    seen = {}
    for k in (1, 2, 3, 30, 29, 12, 3, 0):
        before = ex.flow.epoch
        ex.slider.value = k
        assert ex.flow.epoch == before + 1, "each move is one epoch"
        data = check_move(ex, events)
        snapshot = (sorted(ex.views["scc"].to_dict().items()), data["top"].to_dict("list"))
        if k in seen:   # going back restores the earlier state exactly
            assert snapshot == seen[k]
        seen[k] = snapshot
    # the history holds the last moves, oldest first, each a stats curve
    past = ex.sources["iterations_history"].data
    assert len(past["epoch"]) >= 8 and past["epoch"] == sorted(past["epoch"])
    for epoch, xs, ys in zip(past["epoch"], past["xs"], past["ys"]):
        assert (list(xs), list(ys)) == plotted(stats_curve(ex.flow, epoch, ex.loop))


def test_play_direction_step_and_jump_each_move_one_epoch(college):
    events, batches = college
    ex = new_explorer(batches, references_at_start=False)
    ex.step_size.value = 3
    ex.play.value += 1
    assert ex.position == 3
    ex.direction.value = -1
    ex.step_size.value = 2
    ex.play.value += 1
    assert ex.position == 1
    ex.play.value += 1
    ex.play.playing = True
    ex.play.value += 1   # at the start: clamped to 0, then Play stops
    assert ex.position == 0
    ex.play.value += 1
    assert ex.position == 0 and ex.play.playing is False
    before = ex.flow.epoch
    ex.controls.jump_to.value = 150
    ex.jump.click()
    assert ex.position == 150 and ex.flow.epoch == before + 1, "a jump is one combined epoch"
    check_move(ex, events)
    # ticks that arrived together while a move ran: one move to where they all lead, said so
    ex.direction.value = 1
    ex.step_size.value = 1
    before = ex.flow.epoch
    ex.play.value += 3
    assert ex.position == 153 and ex.flow.epoch == before + 1
    assert ex.last_move["merged_ticks"] == 2 and "2 Play tick(s)" in ex.status.value
    check_move(ex, events)
    ex.play.value += 1
    assert ex.position == 154 and "behind" not in ex.status.value


def _scc_program():
    """A new flow with an edges input and the SCC components program on it."""
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    return flow, edges, component_collections(edges, "scc")


def test_busy_handler_coalesces_to_the_latest_target(college):
    events, batches = college
    flow, edges, program = _scc_program()
    pending = []
    holder = {}

    def during_step(_updates):   # the user drags on while the kernel is busy with a move
        while pending:
            holder["ex"].move_to(pending.pop(0))

    edges.subscribe(during_step)
    feed = WindowFeed(batches, edges, flow, step=False)
    ex = holder["ex"] = explore(feed, {"scc": program.result}, program=program)
    pending.extend([9, 40, 12])
    ex.slider.value = 5
    visited = ex.sources["latency"].data["position"]
    assert visited == [0, 5, 12], "stale targets 9 and 40 are skipped"
    assert ex.position == 12 and ex.slider.value == 12
    check_move(ex, events)


def test_a_raising_user_function_leaves_state_and_plots_as_before(college):
    events, batches = college
    flow, edges, program = _scc_program()
    armed = Armed()
    guarded = edges.filter_columns(armed.check).view()
    feed = WindowFeed(batches, edges, flow, step=False)
    ex = explore(feed, {"scc": program.result, "guarded": guarded}, program=program)
    ex.slider.value = 4
    before = {name: {k: (list(v) if not isinstance(v, list) else
                         [np.asarray(x).tolist() for x in v])
                     for k, v in src.data.items()} for name, src in ex.sources.items()}
    contents = sorted(ex.views["scc"].to_dict().items())
    results = ex.results.widget.value
    epoch = flow.epoch
    armed.on = True
    ex.slider.value = 9
    assert ex.position == 4 and ex.slider.value == 4 and flow.epoch == epoch
    assert "failed" in ex.status.value and "user function failed on purpose" in ex.status.value
    assert "position 4" in ex.status.value
    assert isinstance(ex.last_error, ddlab.OperatorError)
    after = {name: {k: (list(v) if not isinstance(v, list) else
                        [np.asarray(x).tolist() for x in v])
                    for k, v in src.data.items()} for name, src in ex.sources.items()}
    assert after == before
    assert sorted(ex.views["scc"].to_dict().items()) == contents
    assert ex.results.widget.value == results
    # still usable on the previous state
    armed.on = False
    ex.slider.value = 9
    assert ex.position == 9 and flow.epoch == epoch + 1
    check_move(ex, events)


def test_non_convergent_loop_is_one_status_line(college):
    events, batches = college
    flow = ddlab.Dataflow(max_iterations=2)
    edges = flow.input("edges", columns=["src", "dst"])
    program = component_collections(edges, "cc")
    feed = WindowFeed(batches, edges, flow, step=False)
    ex = explore(feed, {"cc": program.result}, program=program)
    assert ex.position == -1 and flow.epoch == 0
    assert "NonConvergenceError" in ex.status.value
    assert all(len(src.data[next(iter(src.data))]) == 0 for name, src in ex.sources.items()
               if name != "references")


def test_table_panel_for_any_collection(college):
    events, batches = college
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    degree = edges.project(0).count().rename("node", "out_degree")
    feed = WindowFeed(batches, edges, flow, step=False)
    ex = explore(feed, {"degree": degree}, rows=5)
    assert ex.loop is None
    ex.slider.value = 1
    html = ex.results.widget.value
    ch = ex.views["degree"].changes()
    assert f"+{int((ch['diff'] > 0).sum()):,}" in html and f"-{int((ch['diff'] < 0).sum()):,}" in html
    assert "#1a7f37" in html and "#cf222e" in html
    expected = window_edges(events, batches, 1).groupby("src").size()
    assert dict(ex.views["degree"].to_dict()) == {(int(k), int(v)): 1 for k, v in expected.items()}
    assert len(ex.sources["iterations"].data["ys"][0]) == 0   # no loop: nothing to plot
    assert "from scratch" not in ex.status.value


def test_display_bundle_and_missing_dependency_line(college):
    _, batches = college
    ex = new_explorer(batches, references_at_start=False)
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.widget.model_id
    for cls, widget in (("ddlab-slider", ex.slider), ("ddlab-status", ex.status),
                        ("ddlab-results", ex.results.widget),
                        ("ddlab-iterations", ex.iterations.widget),
                        ("ddlab-lattice", ex.lattice.widget),
                        ("ddlab-latency", ex.latency.widget)):
        assert cls in widget._dom_classes
    with pytest.raises(MissingLabDependency, match=r"pip install 'ddlab\[lab\]'"):
        require_lab(find=lambda name: None if name == "jupyter_bokeh" else object())


def test_explorer_refuses_a_collection_of_another_flow(college):
    _, batches = college
    flow, other = ddlab.Dataflow(), ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    stray = other.input("x").count()
    feed = WindowFeed(batches, edges, flow, step=False)
    with pytest.raises(ddlab.DataflowError, match="another Dataflow"):
        explore(feed, {"stray": stray})
    with pytest.raises(TypeError, match="top_labels must be a Collection or a View"):
        explore(feed, {"edges": edges}, top_labels=[1, 2])
    assert flow.epoch == 0 and feed.position == -1
    assert len(flow.operators) == 1, "a refused explorer adds no view"


# -- Twitter 24h: the Naiad demo's setting -------------------------------------------------------------

def test_twitter24h_scc_with_top_labels(spark):
    from ddlab.sources import load_dataset, window_batches

    path = shared_data_dir() / "twitter24h" / "twitter_24h.csv.gz"
    if not path.exists():
        pytest.skip(f"needs twitter24h/twitter_24h.csv.gz of the shared data folder, absent at {path}")
    raw = pd.read_csv(path)
    events = raw.rename(columns={"source": "src", "target": "dst", "type": "label"})
    batches = window_batches(load_dataset("twitter24h", spark=spark, with_type=True), "1h", "1min")
    try:
        ex = explore_graph(batches, "scc", references_at_start=False)
        assert ex.results.top_labels is not None
        check_move(ex, events, label_events=events)
        seen = {}
        for k in (1, 2, 60, 59, 2):
            ex.slider.value = k
            data = check_move(ex, events, label_events=events)
            snap = data["top"].to_dict("list")
            if k in seen:
                assert snap == seen[k]
            seen[k] = snap
    finally:
        batches.unpersist()


def _find_high(obj, mapper_id):
    """The ``high`` of model ``mapper_id`` inside a serialized bokeh document."""
    if isinstance(obj, dict):
        if obj.get("id") == mapper_id and "attributes" in obj:
            return obj["attributes"].get("high")
        for v in obj.values():
            found = _find_high(v, mapper_id)
            if found is not None:
                return found
    elif isinstance(obj, list):
        for v in obj:
            found = _find_high(v, mapper_id)
            if found is not None:
                return found
    return None


def test_showing_the_explorer_carries_the_moves_made_before_it(college):
    """The front end applies plot patches only to a view that exists: what was drawn before
    display (the first window at least) must be in the render bundle when it is shown."""
    _, batches = college
    ex = new_explorer(batches, references_at_start=False)
    ex.slider.value = 40
    mapper = ex.lattice.mapper
    assert _find_high(ex.lattice.widget.render_bundle, mapper.id) != mapper.high
    ex._repr_mimebundle_()
    assert _find_high(ex.lattice.widget.render_bundle, mapper.id) == mapper.high


def test_a_self_stepping_feed_works_too(college):
    """Plain-Python users may give a WindowFeed that closes its own epochs (step=True)."""
    events, batches = college
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    program = component_collections(edges, "scc")
    feed = WindowFeed(batches, edges, flow)          # step=True: seek() runs flow.step()
    ex = explore(feed, {"scc": program.result}, program=program)
    for k in (5, 2):
        before = flow.epoch
        ex.slider.value = k
        assert flow.epoch == before + 1
        check_move(ex, events)


def test_docstring_examples_run():
    import doctest

    from ddlab.widgets import program

    result = doctest.testmod(program, extraglobs={"ddlab": ddlab})
    assert result.attempted > 0 and result.failed == 0


def test_sync_catches_up_with_epochs_closed_elsewhere(college):
    """The magics may step the same feed (``%dd step``): ``sync()`` shows that epoch."""
    events, batches = college
    ex = new_explorer(batches, references_at_start=False)
    ex.feed.forward(2)
    ex.flow.step()
    ex.sync()
    assert ex.position == 2 and ex.slider.value == 2
    check_move(ex, events)


def test_importing_without_bokeh_is_one_clear_line():
    import subprocess
    import sys

    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name.split('.')[0] in ('bokeh', 'jupyter_bokeh'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import ddlab.widgets\n"
        "assert ddlab.widgets.Progress is not None   # the progress row needs only ipywidgets\n"
        "from ddlab.widgets import explore\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ddlab.widgets._deps.MissingLabDependency: ddlab.widgets needs bokeh")
    assert "pip install 'ddlab[lab]'" in last


def test_options_name_what_is_wrong():
    with pytest.raises(TypeError, match=r"unknown option\(s\) intervall_ms; the options are .*interval_ms"):
        ExplorerOptions().updated(intervall_ms=300)
    with pytest.raises(ValueError, match="interval_ms must be a positive int, not 0"):
        ExplorerOptions(interval_ms=0)
    with pytest.raises(ValueError, match="settle_ms must be None or an int >= 0"):
        ExplorerOptions(settle_ms=-5)
    assert ExplorerOptions().updated(interval_ms=300).interval_ms == 300


def test_every_widgets_module_without_bokeh_is_importable_or_one_clear_line():
    """What ``.ci/wheel`` checks on the core install, for each module of ddlab.widgets."""
    import pkgutil
    import subprocess
    import sys

    import ddlab.widgets

    names = sorted(m.name for m in pkgutil.iter_modules(ddlab.widgets.__path__))
    code = (
        "import sys, importlib, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name.split('.')[0] in ('bokeh', 'jupyter_bokeh'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from ddlab.widgets._deps import MissingLabDependency\n"
        f"for name in {names!r}:\n"
        "    try:\n"
        "        importlib.import_module('ddlab.widgets.' + name)\n"
        "    except MissingLabDependency:\n"
        "        pass\n"
        "    except ImportError as err:\n"
        "        print(name, repr(err))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "", f"raw ImportErrors instead of the one-line message:\n{proc.stdout}"


# -- switching the plotted loop, closing ----------------------------------------------------------

def _lines(ex):
    """Every line the iteration plot draws now: (this move's, the earlier moves', the dots')."""
    cur, past, dots = (ex.sources["iterations"].data, ex.sources["iterations_history"].data,
                       ex.iterations.points.data)
    return cur, past, dots


def test_switching_the_loop_redraws_every_line_of_the_old_loop(daily):
    events, batches = daily
    ex = new_explorer(batches, references_at_start=False)
    for k in (1, 2, 3, 4, 5):
        ex.move_to(k)
    ex.settle()
    for loop, how in (("root/cc", "set_loop"), ("root/scc", "dropdown"),
                      ("root/scc/reach2", "set_loop")):
        if how == "dropdown":
            ex.loop_select.value = loop
        else:
            ex.set_loop(loop)
        assert ex.loop == loop and ex.loop_select.value == loop
        epoch = ex.flow.epoch - 1
        cur, past, dots = _lines(ex)
        expected = stats_curve(ex.flow, epoch, loop)
        assert cur["epoch"] == [epoch] and [int(v) for v in cur["records"][0]] == expected
        assert (list(cur["xs"][0]), list(cur["ys"][0])) == plotted(expected)
        assert cur["name"] == [f"differential: this move ({sum(expected):,})"]
        assert (list(dots["x"]), list(dots["y"])) == plotted(expected)
        assert dots["records"] == expected
        assert past["epoch"] == sorted(past["epoch"]) and len(past["epoch"]) == 6
        for e, xs, ys in zip(past["epoch"], past["xs"], past["ys"]):
            assert (list(xs), list(ys)) == plotted(stats_curve(ex.flow, e, loop)), (loop, e)
        # the status line's work and the plot's line count the same loop
        assert f"this move: {sum(expected):,} records of work" in ex.status_text
        refs = ex.current_references()
        shown = ex.sources["references"].data
        assert [list(r) for r in shown["records"]] == [refs.curve(n, loop) for n in
                                                         ("stateless", "incremental",
                                                          "prioritized")]
        lat = ex.sources["lattice"].data
        for e in range(epoch + 1):
            mine = {int(i): int(u) for ee, i, u in zip(lat["epoch"], lat["iteration"],
                                                        lat["updates"]) if ee == e}
            assert mine == stats_lattice(ex.flow, e, loop), (loop, e)


def test_closing_the_explorer_leaves_nothing_for_the_garbage_collector(daily, monkeypatch):
    import gc
    import sys

    _, batches = daily
    ex = new_explorer(batches, references_at_start=False)
    ex.move_to(2)
    ignored = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: ignored.append(info))
    widgets = [ex.iterations.widget, ex.lattice.widget, ex.latency.widget]
    ex.close()
    assert all(w.comm is None for w in widgets), "every plot's comm is released"
    del ex, widgets
    gc.collect()
    assert not ignored, "\n".join(f"{i.exc_type.__name__}: {str(i.exc_value)[:200]}"
                                  for i in ignored)
