"""Every figure and table a notebook shows survives the README's export recipe (``jupyter
nbconvert --to html --execute --ExecutePreprocessor.store_widget_state=False``, read from the
README by ``tests/support/export_recipe.py``).

Each notebook is executed top to bottom once (nbmake's run of this session, or one here), with
the recipe's ``ExecutePreprocessor`` options (``executed.RecipeClient``: a notebook the recipe
cannot run fails there), saved as the recipe leaves it (no widget state) and converted by the
recipe's own command less ``--execute``; the whole command as written runs once, on the
README's own notebook (lesson 08), so the suite pays one extra execution, not sixteen.
Headless Chromium opens the file with every network request refused and counts, per code
cell, the bokeh plots that were drawn (a canvas with pixels on it) and the tables, SVG and
images of the widgets' static snapshots.

The oracle is independent of the snapshots: the widget state nbclient recorded while the
notebook ran (each displayed widget tree: its bokeh plots, its HTML widgets' tables, SVG and
images) and bokeh's own ``show()`` outputs.  Not counted: what an ``Output`` widget captured
in the front end (the kernel does not see it, see ``ddlab.widgets.snapshot``).
"""
from __future__ import annotations

import copy
import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("playwright", reason="the browser tests need playwright (pip install -e '.[test]')")
nbconvert = pytest.importorskip("nbconvert", reason="the export test needs nbconvert (pip install -e '.[test]')")

import nbformat  # noqa: E402  (nbconvert's dependency)
from executed import executed  # noqa: E402
from export_recipe import command, export_command, recipe  # noqa: E402

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


def export_html(nb, folder: Path, name: str) -> Path:
    """The executed notebook ``nb`` as the README's recipe writes it: saved without widget state
    (the recipe's ``store_widget_state=False``), converted by the recipe's command less
    ``--execute``; the HTML file's path."""
    saved = copy.deepcopy(nb)
    saved.metadata.pop("widgets", None)
    executed_file = folder / name
    nbformat.write(saved, str(executed_file))
    _convert(export_command(executed_file), folder)
    return executed_file.with_suffix(".html")


def _convert(cmd: list[str], folder: Path) -> None:
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(cmd[1:])} failed:\n{done.stderr[-3000:]}"


def shown_figures(page, html_file: Path, expected: list[Counter]) -> tuple[list[dict], list[str]]:
    """Per code cell, what the exported page shows (after BokehJS has drawn every plot it will),
    and the page's errors; the page refuses every request but the file's own."""
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
    return shown, errors


def check_page(page, notebook: str, html_file: Path, expected: list[Counter], artifacts_dir) -> None:
    shown, errors = shown_figures(page, html_file, expected)
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


@pytest.mark.parametrize("notebook", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_every_figure_survives_the_export(notebook, page, tmp_path, artifacts_dir, request):
    nb = executed(NOTEBOOKS / notebook, request.config)
    html_file = export_html(nb, tmp_path, notebook)
    check_page(page, notebook, html_file, expected_figures(nb), artifacts_dir)


def test_the_readme_recipe_as_written(page, tmp_path, artifacts_dir, request):
    """The README's command, word for word, on its own notebook (a copy, so the HTML is not
    written into the repository), executing it itself; the figures counted against this
    session's run of the same notebook."""
    notebook = Path(recipe()[-1])
    source = NOTEBOOKS.parent / notebook
    copy_dir = tmp_path / notebook.parent
    copy_dir.mkdir(parents=True)
    (copy_dir / notebook.name).write_bytes(source.read_bytes())
    _convert(command(notebook), tmp_path)
    expected = expected_figures(executed(source, request.config))
    check_page(page, notebook.name, tmp_path / notebook.with_suffix(".html"), expected, artifacts_dir)
