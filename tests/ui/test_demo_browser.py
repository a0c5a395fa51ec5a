"""The demo notebook in a real browser: it runs top to bottom in JupyterLab, the explorer
renders (slider, bokeh canvases), Play and the slider change the plots and the results panel,
and the browser console stays free of errors.  Screenshots land in tests/ui/artifacts/.

The explorer's contract (ddlab.widgets): a VBox with class ``ddlab-explorer`` holding a Play
button, an IntSlider ``ddlab-slider`` (the window position), an HTML ``ddlab-status`` ("position
K ... epoch N"), an HTML ``ddlab-results`` and bokeh plots ``ddlab-iterations``,
``ddlab-lattice`` and ``ddlab-latency``.
"""
from __future__ import annotations

import os
import re
import time

import pytest

pytest.importorskip("playwright", reason="the browser tests need playwright (pip install -e '.[test]')")
from playwright.sync_api import Page, expect  # noqa: E402

NOTEBOOK = os.environ.get("DDLAB_UI_NOTEBOOK", "demo.ipynb")
PLOTS = ("ddlab-iterations", "ddlab-lattice", "ddlab-latency")
RUN_TIMEOUT_S = 240  # Spark's start, the window batches and the first epochs

# JS: the open notebook's state, read from JupyterLab itself (--expose-app-in-browser).
_KERNEL_IDLE = """() => {
  const nb = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = nb && nb.sessionContext && nb.sessionContext.session && nb.sessionContext.session.kernel;
  return !!(kernel && kernel.status === 'idle' && nb.context.isReady);
}"""
_RUN_STATE = """() => {
  const nb = window.jupyterapp.shell.currentWidget;
  const kernel = nb.sessionContext.session && nb.sessionContext.session.kernel;
  const cells = nb.content.widgets.filter(c => c.model.type === 'code');
  const errors = [];
  cells.forEach((c, i) => c.model.outputs.toJSON().forEach(o => {
    if (o.output_type === 'error') errors.push(`code cell ${i}: ${o.ename}: ${o.evalue}`);
  }));
  const done = cells.every(c => c.model.executionCount !== null && c.model.executionState !== 'running');
  return {errors, done: done && !!kernel && kernel.status === 'idle',
          executed: cells.filter(c => c.model.executionCount !== null).length, total: cells.length};
}"""


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1100}}


def _wait(page: Page, script: str, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = page.evaluate(script)
        if value:
            return value
        page.wait_for_timeout(250)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def _run_all(page: Page, lab) -> dict:
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while True:
        state = page.evaluate(_RUN_STATE)
        if state["errors"] or state["done"]:
            return state
        if time.monotonic() > deadline:
            raise AssertionError(f"the notebook did not finish in {RUN_TIMEOUT_S} s "
                                 f"({state['executed']}/{state['total']} code cells ran)\n{lab.log_tail()}")
        page.wait_for_timeout(500)


def _position(page: Page) -> int:
    text = page.locator(".ddlab-explorer .ddlab-status").inner_text()
    match = re.search(r"position\s+(-?\d+)", text)
    assert match, f"the status should say 'position K', it says {text!r}"
    return int(match[1])


def _plot_pixels(page: Page) -> dict[str, bytes]:
    return {cls: page.locator(f".ddlab-explorer .{cls}").first.screenshot() for cls in PLOTS}


def _settle(page: Page):
    """Wait for the kernel to finish the move and the browser to draw what it sent."""
    _wait(page, _KERNEL_IDLE, 60, "the kernel to go idle after the move")
    page.wait_for_timeout(1000)


def test_demo_runs_renders_and_responds(page: Page, lab, artifacts_dir):
    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console_errors.append(f"page error: {e}"))

    page.goto(lab.url(NOTEBOOK))
    _wait(page, "() => !!window.jupyterapp", 60, "JupyterLab to start")
    _wait(page, _KERNEL_IDLE, 90, "the notebook's kernel to be idle")

    state = _run_all(page, lab)
    page.screenshot(path=str(artifacts_dir / "demo-after-run.png"))
    assert not state["errors"], "error outputs in the notebook:\n" + "\n".join(state["errors"])

    # The explorer rendered: its controls and a canvas in every plot.
    explorer = page.locator(".ddlab-explorer").first
    expect(explorer).to_be_visible(timeout=30_000)
    explorer.scroll_into_view_if_needed()
    expect(explorer.locator(".ddlab-slider")).to_be_visible()
    expect(explorer.locator(".widget-play")).to_be_visible()
    for cls in PLOTS:
        expect(explorer.locator(f".{cls} canvas").first).to_be_visible(timeout=30_000)
    status, results = explorer.locator(".ddlab-status"), explorer.locator(".ddlab-results")
    expect(status).to_contain_text("epoch")
    expect(results).not_to_be_empty()
    page.wait_for_timeout(1000)
    explorer.screenshot(path=str(artifacts_dir / "demo-explorer.png"))

    # Play: the window moves, and the plots and the results follow.
    start, pixels, shown = _position(page), _plot_pixels(page), results.inner_text()
    explorer.locator(".widget-play button").first.click()
    _wait(page, f"""() => {{
        const m = document.querySelector('.ddlab-explorer .ddlab-status').innerText.match(/position\\s+(-?\\d+)/);
        return m && Number(m[1]) >= {start + 2};
    }}""", 90, "Play to move the window two positions")
    explorer.locator(".widget-play button").first.click()  # the same button pauses
    _settle(page)
    played = _position(page)
    assert played >= start + 2
    after = _plot_pixels(page)
    assert after["ddlab-iterations"] != pixels["ddlab-iterations"], "the iterations plot did not change on Play"
    assert after["ddlab-latency"] != pixels["ddlab-latency"], "the latency plot did not change on Play"
    assert results.inner_text() != shown, "the results panel did not change on Play"
    explorer.screenshot(path=str(artifacts_dir / "demo-after-play.png"))

    # The slider: keyboard steps on its handle move the window too.
    pixels, shown = after, results.inner_text()
    handle = explorer.locator(".ddlab-slider .noUi-handle").first
    handle.focus()
    for _ in range(3):
        handle.press("ArrowRight")
    _wait(page, f"""() => {{
        const m = document.querySelector('.ddlab-explorer .ddlab-status').innerText.match(/position\\s+(-?\\d+)/);
        return m && Number(m[1]) > {played};
    }}""", 60, "the slider to move the window")
    _settle(page)
    after = _plot_pixels(page)
    assert _position(page) > played
    assert after["ddlab-iterations"] != pixels["ddlab-iterations"], "the iterations plot did not change on the slider"
    assert results.inner_text() != shown, "the results panel did not change on the slider"
    explorer.screenshot(path=str(artifacts_dir / "demo-after-slider.png"))
    page.screenshot(path=str(artifacts_dir / "demo-page.png"))

    assert not console_errors, "browser console errors:\n" + "\n".join(console_errors)
