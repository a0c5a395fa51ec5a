"""``demo()``: the explorer in one call, its first screen one step of the window with the
references of that same window, on CollegeMsg (always there) and, one parameter away, on
Travian with each component's top alliance (skipped without the shared data folder)."""
from __future__ import annotations

import zipfile

import networkx as nx
import pandas as pd
import pytest

from ddlab.sources import DatasetNotFound, collegemsg_pandas, shared_data_dir
from ddlab.widgets import DEMO_DATA, demo

from .oracles import scc_oracle, scratch_oracle, stateless_oracle, window_edges

pytestmark = pytest.mark.spark


@pytest.fixture
def cache(tmp_path, monkeypatch, spark):
    monkeypatch.setenv("DDLAB_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_the_default_demo_opens_on_one_step_below_the_stateless_line(cache):
    ex = demo(progress=False)
    spec = DEMO_DATA["collegemsg"]
    assert ex.position == spec.position and ex.last_move["from"] == spec.position - 1
    assert ex.controls.play.interval == spec.interval_ms
    events = collegemsg_pandas()
    edges = window_edges(events, ex.batches, ex.position)
    assert ex.results.read()["count"] == len(scc_oracle(edges))
    refs = ex.current_references()
    assert refs is not None and refs.window == ex.feed.span() == ex.last_move["window"]
    loop = ex.loop
    assert refs.curve("stateless", loop) == stateless_oracle(edges)[loop]
    assert refs.curve("incremental", loop) == scratch_oracle(edges, loop, prioritized=False)
    shown = ex.sources["references"].data
    assert shown["window"] == [ex.feed.span()] * 3
    differential = ex.sources["iterations"].data
    assert differential["window"] == [ex.feed.span()]
    work, stateless = sum(differential["records"][0]), refs.totals(loop)["stateless"]
    assert 0 < work < stateless, "the papers' story: one step costs less than recomputing"
    assert "this data has no labels" not in ex.results.widget.value   # it says why instead
    assert "CollegeMsg has no labels" in ex.results.widget.value
    # the windows were stored: the second demo reads them (no Spark) and shows the same
    again = demo(progress=False)
    assert again.batches.stored.startswith("cached")
    assert again.status_text.splitlines()[0].split(" · ")[:2] == \
        ex.status_text.splitlines()[0].split(" · ")[:2]


def test_demo_names_what_is_missing(monkeypatch, tmp_path, cache):
    with pytest.raises(ValueError, match="unknown data 'twiter'.*collegemsg"):
        demo("twiter", progress=False)
    monkeypatch.setenv("DDLAB_DATA_DIR", str(tmp_path / "nothing"))
    with pytest.raises(DatasetNotFound, match=r"demo\('travian'\) needs the shared data folder.*"
                                              r"CollegeMsg"):
        demo("travian", progress=False)


TRAVIAN = shared_data_dir() / "travian"


def test_travian_shows_each_components_top_alliance_and_its_share(cache):
    if not (TRAVIAN / "travian-communities.zip").exists():
        pytest.skip(f"the labelled demo needs travian/travian-messages.zip and "
                    f"travian-communities.zip of the shared data folder, absent at {TRAVIAN}")
    from ddlab.sources import travian_alliances

    ex = demo("travian", progress=False)
    start, end = ex.feed.window
    day = pd.Timestamp(start - 5 * 3600, unit="s").strftime("%Y-%m-%d")
    assert end - start == 86400, "the demo's window is one Travian day"
    alliances = travian_alliances()
    of_day = {p: a for d, p, a in alliances.itertuples(index=False) if d == day}
    with zipfile.ZipFile(TRAVIAN / "travian-messages.zip") as zf:
        name = next(n for n in zf.namelist() if day in n)
        msgs = pd.read_csv(zf.open(name), header=None, names=["time", "src", "dst"])
    msgs = msgs[(msgs.time >= start) & (msgs.time < end)]
    msgs["label"] = [of_day.get(s, "no alliance") for s in msgs.src]
    recs = msgs[["src", "dst", "label"]].drop_duplicates()
    g = nx.DiGraph()
    g.add_edges_from(zip(recs.src, recs.dst))
    member = {}
    for comp in nx.strongly_connected_components(g):
        if len(comp) > 1:
            member.update({n: min(comp) for n in comp})
    recs = recs[recs.src.isin(member)].assign(component=lambda f: f.src.map(member))
    counts = recs.groupby(["component", "label"]).size()
    top = ex.results.read()["top"]
    assert len(top) == ex.results.top
    for comp, count, label, total in zip(top["component"], top["count"], top["label"],
                                         top["total"]):
        per = counts.loc[comp]
        assert count == per.max() and label in set(per[per == per.max()].index)
        assert total == per.sum()
    html = ex.results.widget.value
    assert "top alliance" in html and "share" in html
    first = top.iloc[0]
    assert f"{first['count'] / first['total']:.0%}" in html
