"""The demo's explorer on two workers in a real browser (issue 31): hovering a lattice cell shows
the updates each worker emitted there, summing to the cell's, and the latency plot carries a busy
line per worker.  Screenshots land in tests/ui/artifacts/ (workers-*.png).

Uses the session fixtures of tests/ui/conftest.py (``lab``: a throwaway JupyterLab serving a copy
of notebooks/, into which this test writes its own small notebook; the system Chromium through
pytest-playwright).
"""
from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("playwright", reason="the browser tests need playwright (pip install -e '.[test]')")
from playwright.sync_api import Page, expect  # noqa: E402

from .conftest import KERNEL_IDLE as _KERNEL_IDLE, RUN_STATE as _RUN_STATE  # noqa: E402
from .conftest import wait_for as _wait, watch_console  # noqa: E402

pytestmark = pytest.mark.spark   # the demo's windows are cut on Spark

NOTEBOOK = "explorer-workers.ipynb"
CELLS = [
    "from ddlab.widgets import demo\nex = demo(workers=2)\nex",
    "ex.forward(3); print(ex.flow.workers, 'workers, epoch', ex.flow.epoch - 1)",
]

# The latency plot's source, read back from BokehJS: each worker's busy milliseconds per move.
_BUSY = """() => {
  const get = (d, k) => (d instanceof Map ? d.get(k) : d[k]);
  for (const doc of (window.Bokeh ? window.Bokeh.documents : [])) {
    for (const m of doc.all_models) {
      const engine = m.data && get(m.data, 'engine_ms');
      if (!engine) continue;
      return {engine: Array.from(engine), busy0: Array.from(get(m.data, 'busy_ms_0') || []),
              busy1: Array.from(get(m.data, 'busy_ms_1') || [])};
    }
  }
  return null;
}"""


def _notebook() -> str:
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": src} for src in CELLS]
    return json.dumps({"cells": cells, "metadata": {"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5})


def _tooltip_over_a_cell(page: Page, canvas) -> str:
    """Move the mouse over the lattice grid until a cell's tooltip shows; its text."""
    canvas.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    box = canvas.bounding_box()
    # (bokeh's tooltip box keeps its rows in a shadow root of its own: read its content)
    tooltip = page.locator(".bk-tooltip-content", has_text="by worker").first
    for fy in (0.85, 0.75, 0.65, 0.55, 0.45, 0.35, 0.25):
        for fx in (0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75):
            page.mouse.move(box["x"] + fx * box["width"], box["y"] + fy * box["height"], steps=4)
            page.wait_for_timeout(150)
            if tooltip.count() and tooltip.is_visible():
                return tooltip.inner_text()
    raise AssertionError(f"no lattice cell's tooltip showed 'by worker' anywhere on the grid "
                         f"(the canvas at {box})")


def test_two_workers_hover_and_busy_lines(page: Page, lab, artifacts_dir):
    console = watch_console(page)
    (lab.root / NOTEBOOK).write_text(_notebook())
    page.goto(lab.url(NOTEBOOK))
    _wait(page, "() => !!window.jupyterapp", 60, "JupyterLab to start")
    _wait(page, _KERNEL_IDLE, 90, "the notebook's kernel to be idle")
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_timeout(1000)
    state = _wait(page, f"() => {{ const s = ({_RUN_STATE})(); return (s.done || s.errors.length) && s; }}",
                  300, "the notebook to run")
    assert not state["errors"], "errors in the outputs:\n" + "\n".join(state["errors"])
    explorer = page.locator(".ddlab-explorer").first
    expect(explorer).to_contain_text("2 workers")
    lattice = explorer.locator(".ddlab-lattice canvas").first
    expect(lattice).to_be_visible(timeout=30_000)
    _wait(page, _KERNEL_IDLE, 60, "the kernel to go idle")
    explorer.scroll_into_view_if_needed()
    page.wait_for_timeout(1500)

    text = _tooltip_over_a_cell(page, lattice)
    explorer.screenshot(path=str(artifacts_dir / "workers-explorer-hover.png"))
    total = int(re.search(r"updates:?\s*([\d,]+)", text)[1].replace(",", ""))
    split = {int(w): int(n.replace(",", ""))
             for w, n in re.findall(r"worker (\d+): ([\d,]+)", text)}
    assert sorted(split) == [0, 1], text
    assert sum(split.values()) == total, text

    busy = page.evaluate(_BUSY)
    # the demo's first window, its step and the notebook's forward(3): three epochs
    assert busy and len(busy["busy0"]) == len(busy["engine"]) == len(busy["busy1"]) == 3, busy
    assert all(b > 0 for b in busy["busy0"] + busy["busy1"]), busy
    page.mouse.move(0, 0)
    page.wait_for_timeout(300)
    explorer.locator(".ddlab-latency").first.screenshot(path=str(artifacts_dir / "workers-latency.png"))
    explorer.screenshot(path=str(artifacts_dir / "workers-explorer.png"))
    assert not console, "browser console errors:\n" + "\n".join(console)
