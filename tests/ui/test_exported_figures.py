"""Every figure a notebook shows as a widget survives an export to HTML.

Each notebook is executed top to bottom (nbmake's run of this session, or one here), saved
without widget state (as JupyterLab saves by default) and exported with ``jupyter nbconvert
--to html``'s exporter; headless Chromium opens the file with every network request refused
and counts, per code cell, the bokeh plots that were drawn (a canvas with pixels on it) and the
tables, SVG and images of the widgets' static snapshots.

The oracle is independent of the snapshots: the widget state nbclient recorded while the
notebook ran (each displayed widget tree: its bokeh plots, its HTML widgets' tables, SVG and
images) and bokeh's own ``show()`` outputs.  Not counted: what an ``Output`` widget captured
in the front end (the kernel does not see it, see ``ddlab.widgets.snapshot``).
"""
from __future__ import annotations

import copy
import json
import re
from collections import Counter

import pytest

pytest.importorskip("playwright", reason="the browser tests need playwright (pip install -e '.[test]')")
nbconvert = pytest.importorskip("nbconvert", reason="the export test needs nbconvert (pip install -e '.[test]')")

from executed import executed  # noqa: E402

from .conftest import NOTEBOOKS  # noqa: E402

pytestmark = pytest.mark.notebooks

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
BOKEH_SHOW = "application/vnd.bokehjs_exec.v0+json"
PLOT_TYPES = ("Figure", "Plot", "GMap", "GMapPlot")
TAGS = ("table", "svg", "img")
_PLOT = re.compile(r'\\?"type\\?":\s*\\?"object\\?",\s*\\?"name\\?":\s*\\?"(?:' + "|".join(PLOT_TYPES)
                   + r')\\?"')


# -- the oracle: what each code cell shows, from the recorded widget state ---------------------------

def _widget_figures(state: dict, model_id: str, seen: set) -> Counter:
    """Plots and HTML figure parts in the widget tree under ``model_id``."""
    if model_id in seen or model_id not in state:
        return Counter()
    seen.add(model_id)
    entry = state[model_id]
    name, attrs = entry.get("model_name"), entry.get("state", {})
    found = Counter()
    if name == "BokehModel":
        bundle = attrs.get("render_bundle") or {}
        bundle = json.loads(bundle) if isinstance(bundle, str) else bundle
        found["plots"] += len(_PLOT.findall(json.dumps(bundle.get("docs_json", {}))))
    elif name in ("HTMLModel", "HTMLMathModel"):
        value = (attrs.get("value") or "").lower()
        for tag in TAGS:
            found[tag] += len(re.findall(rf"<{tag}[\s>]", value))
    elif name == "ImageModel" and attrs.get("value"):
        found["img"] += 1
    for child in attrs.get("children") or []:
        if isinstance(child, str) and child.startswith("IPY_MODEL_"):
            found += _widget_figures(state, child[len("IPY_MODEL_"):], seen)
    return found


def expected_figures(nb) -> list[Counter]:
    """Per code cell: the plots and HTML figure parts its outputs show live."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    out = []
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        found = Counter()
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data:
                found += _widget_figures(state, data[WIDGET_VIEW]["model_id"], set())
            elif BOKEH_SHOW in data:
                found["plots"] += len(_PLOT.findall(str(data.get("text/html", ""))))
        out.append(found)
    return out


# -- the page: what each code cell of the exported file shows ----------------------------------------

_SHOWN = """(tags) => {
  // bokeh draws inside shadow roots: walk them; a plot counts once its canvas has pixels
  function all(root, out) {
    root.querySelectorAll('*').forEach(el => { out.push(el); if (el.shadowRoot) all(el.shadowRoot, out); });
    return out;
  }
  function drawn(canvasHost) {
    const root = canvasHost.shadowRoot || canvasHost;
    const c = root.querySelector('canvas');
    if (!c || !c.width || !c.height) return false;
    const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const inked = i => px[i + 3] && (px[i] < 250 || px[i + 1] < 250 || px[i + 2] < 250);
    for (let i = 0; i < px.length; i += 4 * 17) if (inked(i)) return true;
    return false;
  }
  return [...document.querySelectorAll('.jp-Cell.jp-CodeCell')].map(cell => {
    const counts = {plots: all(cell, []).filter(el => el.classList.contains('bk-Canvas') && drawn(el)).length};
    const snapshots = [...cell.querySelectorAll('.ddlab-static')];
    for (const tag of tags) counts[tag] = snapshots.reduce((n, s) => n + s.querySelectorAll(tag).length, 0);
    return counts;
  });
}"""


def export_html(nb) -> str:
    """The notebook as ``jupyter nbconvert --to html`` writes it, saved without widget state
    (JupyterLab's default)."""
    saved = copy.deepcopy(nb)
    saved.metadata.pop("widgets", None)
    body, _ = nbconvert.HTMLExporter().from_notebook_node(saved)
    return body


@pytest.mark.parametrize("notebook", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_every_figure_survives_the_export(notebook, page, tmp_path, artifacts_dir, request):
    nb = executed(NOTEBOOKS / notebook, request.config)
    expected = expected_figures(nb)
    html_file = tmp_path / notebook.replace(".ipynb", ".html")
    html_file.write_text(export_html(nb), encoding="utf-8")
    # offline: only the file itself loads (the template's CDN scripts are refused)
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
               else route.abort())
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(html_file.as_uri())
    want = sum(e["plots"] for e in expected)
    shown = page.evaluate(_SHOWN, list(TAGS))
    for _ in range(60):           # BokehJS draws once the page has loaded: wait for every plot
        if sum(s["plots"] for s in shown) >= want:
            break
        page.wait_for_timeout(250)
        shown = page.evaluate(_SHOWN, list(TAGS))
    assert len(shown) == len(expected), "one exported cell per code cell"
    missing = []
    for i, (want_here, got) in enumerate(zip(expected, shown)):
        short = {k: (want_here[k], got.get(k, 0)) for k in ("plots", *TAGS)
                 if got.get(k, 0) < want_here[k]}
        if short:
            missing.append(f"code cell {i}: (expected, shown) {short}")
            page.locator(".jp-Cell.jp-CodeCell").nth(i).screenshot(
                path=str(artifacts_dir / f"export-{notebook[:-6]}-cell{i}.png"))
    assert not missing, f"{notebook}: figures missing from the exported HTML:\n" + "\n".join(missing)
    assert not errors, f"{notebook}: page errors: {errors}"
