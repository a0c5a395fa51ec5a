"""How engine and sources objects display: views, collections, dataflows, load reports."""
from __future__ import annotations

import ddlab
from ddlab.kernel_ext.display import objects, tables

from ..conftest import html_of
from .flows import small_flow


def test_plain_view_renders_without_a_session(ip):
    flow, edges, (scc_view, cc_view) = small_flow()
    html = html_of(cc_view)
    assert "3 records" in html and "after epoch 0" in html and "fields node, label" in html
    text = ip.display_formatter.format(cc_view)[0]["text/plain"]
    assert "3 records" in text and "node" in text
    assert "Dataflow" in html_of(flow) and "4 loop scopes" in html_of(flow)


def test_negative_multiplicities_are_marked():
    flow = ddlab.Dataflow()
    xs = flow.input("xs", columns=["x"])
    view = xs.view()
    xs.remove([5])
    flow.step()
    html = objects.render_view(view, "xs")
    assert "1 negative" in html and tables.DEL in html


def test_sources_objects_render():
    from ddlab.sources.loaders import LoadReport

    rep = LoadReport("f.csv", 10, 8, {"empty id": 2},
                     [{"file": "f.csv", "row": "1,,3", "reason": "empty id"}])
    html = objects.render_load_report(rep)
    assert "10 rows read" in html and "2 malformed" in html and "empty id: 2" in html
    assert "10 rows read" in html_of(rep)
