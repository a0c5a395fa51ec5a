"""The explorer on a flow with several workers (issue 31): each lattice cell's hover splits its
updates by worker and the latency plot draws each worker's busy time, both checked against
pandas over the raw ``flow.stats()`` rows (its ``worker`` column); with one worker the plots
are exactly as before and a move reads no more statistics than before."""
from __future__ import annotations

import re

import pandas as pd
import pytest
from bokeh.models import HoverTool

from ddlab.widgets import explore_graph
from ddlab.widgets.latency import busy_column

from .oracles import stats_lattice

#: forward, back and a jump: a few epochs with cells in several iterations
MOVES = (1, 2, 3, 2, 6)


@pytest.fixture(scope="module", params=[2, 3], ids=lambda n: f"{n}-workers")
def workers_explorer(request, daily):
    """An explorer whose flow runs on 2 or 3 workers, moved through :data:`MOVES`; its
    worker processes are stopped after the module's tests."""
    _, batches = daily
    ex = explore_graph(batches, "scc", settle_ms=None, workers=request.param)
    try:
        assert ex.flow.workers == request.param
        for k in MOVES:
            ex.slider.value = k
        yield ex
    finally:
        ex.close()
        ex.flow.close()


def hover_numbers(text: str) -> dict[int, int]:
    """``{worker: updates}`` read back from a cell's "by worker" hover text."""
    found = re.findall(r"worker (\d+): ([\d,]+)", text)
    assert " · ".join(f"worker {w}: {n}" for w, n in found) == text, text
    return {int(w): int(n.replace(",", "")) for w, n in found}


def pandas_split(flow, epoch: int, loop: str) -> dict[int, dict[int, int]]:
    """``{iteration: {worker: updates}}``: pandas' groupby over ``flow.stats(epoch)``'s rows
    inside ``loop``, by the loop's own coordinate (a plain loop's, as in these programs)."""
    st = flow.stats(epoch)
    inside = st[(st["scope"] == loop) | st["scope"].str.startswith(loop + "/")]
    depth = loop.count("/")
    inside = inside.assign(cell=[int(t[depth]) for t in inside["time"]])
    sums = inside.groupby(["cell", "worker"])["out"].sum()
    out: dict[int, dict[int, int]] = {}
    for (cell, worker), n in sums.items():
        out.setdefault(int(cell), {})[int(worker)] = int(n)
    return out


def check_lattice_hover(ex, loop: str) -> int:
    """Every cell in the grid: its per-worker numbers are pandas' and sum to its total (which
    is ``flow.lattice``'s); returns the cells checked."""
    flow, workers = ex.flow, ex.flow.workers
    data = ex.sources["lattice"].data
    assert len(data["workers"]) == len(data["updates"])
    checked = 0
    oracle: dict[int, dict] = {}
    for epoch, it, total, text in zip(data["epoch"], data["iteration"], data["updates"],
                                      data["workers"]):
        if epoch not in oracle:
            oracle[epoch] = pandas_split(flow, epoch, loop)
            assert {i: sum(ws.values()) for i, ws in oracle[epoch].items()} == \
                stats_lattice(flow, epoch, loop)
        shown = hover_numbers(text)
        assert list(shown) == list(range(workers)), "one number per worker, in order"
        expected = oracle[epoch].get(it, {})
        assert shown == {w: expected.get(w, 0) for w in range(workers)}, (epoch, it)
        assert sum(shown.values()) == total, (epoch, it)
        checked += 1
    return checked


def test_lattice_hover_splits_each_cell_by_worker(workers_explorer):
    ex = workers_explorer
    assert check_lattice_hover(ex, ex.loop) > 0
    # the first window (the explorer's start) and every move
    assert set(ex.sources["lattice"].data["epoch"]) == set(range(len(MOVES) + 1))
    # the work is really split: some cell has updates from more than one worker
    assert any(sum(1 for n in hover_numbers(t).values() if n) > 1
               for t in ex.sources["lattice"].data["workers"])
    tips = dict(ex.lattice.figure.select_one(HoverTool).tooltips)
    assert tips["by worker"] == "@workers"


def test_switching_the_loop_splits_the_redrawn_cells_too(workers_explorer):
    ex = workers_explorer
    first = ex.loop
    other = next(loop for loop in ex.loops if loop != first)
    try:
        ex.set_loop(other)
        assert check_lattice_hover(ex, other) > 0
    finally:
        ex.set_loop(first)


def test_latency_plot_draws_each_workers_busy_time(workers_explorer):
    ex = workers_explorer
    flow, workers = ex.flow, ex.flow.workers
    data = ex.sources["latency"].data
    assert data["epoch"] == list(range(len(MOVES) + 1))
    for i, epoch in enumerate(data["epoch"]):
        busy = flow.stats(epoch).groupby("worker")["seconds"].sum()
        assert sorted(busy.index) == list(range(workers))
        for w in range(workers):
            assert data[busy_column(w)][i] == pytest.approx(busy[w] * 1000.0), (epoch, w)
    time_fig = ex.latency.figures[0]
    labels = [item.label["value"] for item in time_fig.legend[0].items]
    assert labels == ["end to end", "engine"] + [f"worker {w} busy" for w in range(workers)]
    tips = dict(time_fig.select_one(HoverTool).tooltips)
    assert [tips[f"worker {w} busy"] for w in range(workers)] == \
        [f"@{busy_column(w)}{{0.0}} ms" for w in range(workers)]
    assert f"{workers} workers" in ex.widget.children[0].value


def test_one_worker_explorer_is_unchanged_and_reads_no_more(daily, monkeypatch):
    _, batches = daily
    ex = explore_graph(batches, "scc", settle_ms=None, workers=1)
    try:
        calls = []
        real = type(ex.flow).stats
        monkeypatch.setattr(type(ex.flow), "stats",
                            lambda self, *a, **k: calls.append(a) or real(self, *a, **k))
        for k in MOVES:
            ex.slider.value = k
        assert calls == [], "with one worker a move reads no per-worker statistics"
        monkeypatch.undo()
        lattice = ex.sources["lattice"].data
        assert list(lattice) == ["epoch", "iteration", "updates", "operators"]
        assert [n for n, _ in ex.lattice.figure.select_one(HoverTool).tooltips] == \
            ["epoch", "iteration", "updates", "by operator"]
        latency = ex.sources["latency"].data
        assert list(latency) == ["epoch", "engine_ms", "total_ms", "retained", "position"]
        time_fig = ex.latency.figures[0]
        assert [item.label["value"] for item in time_fig.legend[0].items] == \
            ["end to end", "engine"]
        assert "worker" not in ex.widget.children[0].value
        assert isinstance(ex.flow.stats(ex.flow.epoch - 1), pd.DataFrame)
    finally:
        ex.close()
