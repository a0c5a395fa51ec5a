"""The demo notebook in a real browser: "Run All" on a fresh kernel brings the explorer up
(timed, with an empty window cache and again with the cache filled); every reference line and
the status line name the window of the current move, and on the default demo the
differential line lies below the stateless line of that same window; Play and the slider
change the plots and the results panel; the browser console stays free of errors.
Screenshots and the timings land in tests/ui/artifacts/.

The explorer's contract (ddlab.widgets): a VBox with class ``ddlab-explorer`` holding a Play
button, an IntSlider ``ddlab-slider`` (the window position), an HTML ``ddlab-status``
("position K · window [a, b) ... from scratch on this window: S stateless / I incremental / P
prioritized records"), an HTML ``ddlab-results`` and bokeh plots ``ddlab-iterations``,
``ddlab-lattice`` and ``ddlab-latency``; the iteration plot's data sources are named
``ddlab-differential`` and ``ddlab-references`` (each line with its ``window``).
"""
from __future__ import annotations

import json
import os
import re
import time

import pytest

pytest.importorskip("playwright", reason="the browser tests need playwright (pip install -e '.[test]')")
from playwright.sync_api import Page, expect  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError  # noqa: E402

from .conftest import KERNEL_IDLE as _KERNEL_IDLE, RUN_STATE as _RUN_STATE  # noqa: E402
from .conftest import wait_for as _wait, watch_console  # noqa: E402

NOTEBOOK = os.environ.get("DDLAB_UI_NOTEBOOK", "demo.ipynb")
PLOTS = ("ddlab-iterations", "ddlab-lattice", "ddlab-latency")
RUN_TIMEOUT_S = 300  # Spark's start, the window batches and the first epochs, on a busy machine
#: Seconds after Run All at which the loading screenshots are taken.
LOADING_SHOTS_S = (2.0, 9.0)

# Every iteration plot on the page, read back from BokehJS: this move's line and the
# reference lines, each with the window it is of.
_LINES = """() => {
  const out = [];
  const get = (d, k) => (d instanceof Map ? d.get(k) : d[k]);
  const arr = x => Array.from(x || []);
  for (const doc of (window.Bokeh ? window.Bokeh.documents : [])) {
    const cur = doc.get_model_by_name('ddlab-differential');
    const refs = doc.get_model_by_name('ddlab-references');
    if (!cur || !refs) continue;
    out.push({window: arr(get(cur.data, 'window')), records: arr(get(cur.data, 'records')).map(arr),
              ref_window: arr(get(refs.data, 'window')), ref_label: arr(get(refs.data, 'label')),
              ref_records: arr(get(refs.data, 'records')).map(arr)});
  }
  return out;
}"""


def _explorer_visible(page: Page) -> bool:
    """The first explorer's status names a position and each plot shows a canvas (bokeh
    draws inside shadow roots, which Playwright's locators pierce and querySelector does not).
    An explorer whose view is being rebuilt (a later cell changed it: its output is updated)
    has no status for a moment: not visible yet."""
    explorer = page.locator(".ddlab-explorer").first
    status = explorer.locator(".ddlab-status").first
    try:
        if not explorer.count() or "position" not in (status.text_content(timeout=1000) or ""):
            return False
    except PlaywrightTimeoutError:
        return False
    return all(explorer.locator(f".{cls} canvas").first.is_visible() for cls in PLOTS)


_DEMO_CELL_DONE = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.widgets.filter(c => c.model.type === 'code');
  return cells.length > 1 && cells[1].model.executionCount !== null && cells[1].model.executionState !== 'running';
}"""


def _run_all_until_visible(page: Page, lab, artifacts_dir, tag: str, timings: dict) -> float:
    """Run All; seconds until the explorer is visible (screenshots while it loads); also
    when the demo's cell finished running."""
    start = time.monotonic()
    # not awaited: the command's promise resolves only when every cell has run
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    shot = 0
    while not _explorer_visible(page):
        elapsed = time.monotonic() - start
        if f"demo_cell_done_{tag}_s" not in timings and page.evaluate(_DEMO_CELL_DONE):
            timings[f"demo_cell_done_{tag}_s"] = round(elapsed, 1)
        if elapsed > RUN_TIMEOUT_S:
            state = page.evaluate(_RUN_STATE)
            raise AssertionError(f"no explorer {RUN_TIMEOUT_S} s after Run All ({tag}); "
                                 f"errors {state['errors']}\n{lab.log_tail()}")
        # the progress row while Spark starts and windows: two shots only, since a screenshot
        # costs Chromium CPU the kernel needs (twelve, one every 3 s, added 4-5 s to this time)
        if shot < len(LOADING_SHOTS_S) and elapsed > LOADING_SHOTS_S[shot]:
            page.locator(".jp-Notebook .jp-CodeCell").nth(1).scroll_into_view_if_needed()
            page.screenshot(path=str(artifacts_dir / f"demo-loading-{tag}-{shot:02d}.png"))
            shot += 1
        page.wait_for_timeout(100)
    return time.monotonic() - start


def _run_state(page: Page, lab) -> dict:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while True:
        state = page.evaluate(_RUN_STATE)
        if state["errors"] or state["done"]:
            return state
        if time.monotonic() > deadline:
            raise AssertionError(f"the notebook did not finish in {RUN_TIMEOUT_S} s "
                                 f"({state['executed']}/{state['total']} code cells ran)\n{lab.log_tail()}")
        page.wait_for_timeout(500)


def _status(explorer) -> str:
    return explorer.locator(".ddlab-status").inner_text()


def _position(explorer) -> int:
    match = re.search(r"position\s+(-?\d+)", _status(explorer))
    assert match, f"the status should say 'position K', it says {_status(explorer)!r}"
    return int(match[1])


def _window(text: str) -> str:
    match = re.search(r"window (\[[^)]*\))", text)
    assert match, f"the status should name the window, it says {text!r}"
    return match[1]


def _plot_pixels(explorer) -> dict[str, bytes]:
    return {cls: explorer.locator(f".{cls}").first.screenshot() for cls in PLOTS}


def _settled(page: Page, explorer, timeout_s: float = 90) -> str:
    """Wait for the kernel, then for the window to settle (the status gives the three
    from-scratch totals); returns the status text."""
    _wait(page, _KERNEL_IDLE, 60, "the kernel to go idle")
    deadline = time.monotonic() + timeout_s
    while "stateless /" not in _status(explorer):
        assert time.monotonic() < deadline, f"the window did not settle: {_status(explorer)!r}"
        page.wait_for_timeout(250)
    page.wait_for_timeout(800)   # the plot's patch follows the status in the same message batch
    return _status(explorer)


def _check_same_window(page: Page, status: str, *, everywhere: bool = False) -> dict:
    """Every reference line and the status line name the current move's window, and the
    differential line lies below the stateless line of that window (in total; with
    ``everywhere``, at every iteration)."""
    window = _window(status)
    plots = page.evaluate(_LINES)
    mine = [p for p in plots if p["window"] == [window]]
    assert mine, f"no iteration plot shows the status line's window {window}: {plots}"
    plot = mine[0]
    assert plot["ref_window"] == [window] * 3, f"reference lines of other windows: {plot}"
    assert [label.split(" from")[0] for label in plot["ref_label"]] == \
        ["stateless", "incremental", "prioritized"]
    totals = [sum(r) for r in plot["ref_records"]]
    assert (f"from scratch on this window: {totals[0]:,} stateless / {totals[1]:,} incremental "
            f"/ {totals[2]:,} prioritized records") in status
    differential, stateless = plot["records"][0], plot["ref_records"][0]
    assert f"this move: {sum(differential):,} records of work" in status
    assert sum(differential) < sum(stateless), plot
    if everywhere:
        assert all(d < s for d, s in zip(differential, stateless)), \
            f"the differential line rises above the stateless line: {differential} vs {stateless}"
    return plot


def test_demo_runs_renders_and_tells_the_story_on_one_window(page: Page, lab, artifacts_dir):
    console_errors = watch_console(page)

    page.goto(lab.url(NOTEBOOK))
    _wait(page, "() => !!window.jupyterapp", 60, "JupyterLab to start")
    _wait(page, _KERNEL_IDLE, 90, "the notebook's kernel to be idle")

    timings = {"load_average_at_start": round(os.getloadavg()[0], 1)}
    timings["run_all_to_explorer_visible_cold_s"] = round(
        _run_all_until_visible(page, lab, artifacts_dir, "cold", timings), 1)
    explorer = page.locator(".ddlab-explorer").first
    explorer.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "demo-first-screen.png"))
    state = _run_state(page, lab)
    assert not state["errors"], "error outputs in the notebook:\n" + "\n".join(state["errors"])
    # what a reader sees at the top: the title, the parameter, the call and the explorer
    page.locator(".jp-Notebook .jp-Cell").first.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifacts_dir / "demo-top.png"))

    # The explorer rendered: its controls and a canvas in every plot.
    expect(explorer.locator(".ddlab-slider")).to_be_visible()
    expect(explorer.locator(".widget-play")).to_be_visible()
    for cls in PLOTS:
        expect(explorer.locator(f".{cls} canvas").first).to_be_visible(timeout=30_000)
    results = explorer.locator(".ddlab-results")
    expect(results).to_contain_text("strongly connected components")
    expect(results).to_contain_text("no labels")      # CollegeMsg says it has none

    # After Run All: the notebook moved the demo one more step and settled it.
    status = _settled(page, explorer)
    _check_same_window(page, status, everywhere=True)
    explorer.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    explorer.screenshot(path=str(artifacts_dir / "demo-explorer.png"))

    # Play: the window moves, the plots and the results follow; when Play stops, the window
    # settles and the references are of the window Play stopped on.
    start, pixels, shown = _position(explorer), _plot_pixels(explorer), results.inner_text()
    explorer.locator(".widget-play button").first.click()
    _wait(page, f"""() => {{
        const m = document.querySelector('.ddlab-explorer .ddlab-status').innerText.match(/position\\s+(-?\\d+)/);
        return m && Number(m[1]) >= {start + 3};
    }}""", 90, "Play to move the window three positions")
    explorer.locator(".widget-play button").first.click()  # the same button pauses
    status = _settled(page, explorer)
    played = _position(explorer)
    assert played >= start + 3
    _check_same_window(page, status)
    after = _plot_pixels(explorer)
    assert after["ddlab-iterations"] != pixels["ddlab-iterations"], "the iterations plot did not change on Play"
    assert after["ddlab-latency"] != pixels["ddlab-latency"], "the latency plot did not change on Play"
    assert results.inner_text() != shown, "the results panel did not change on Play"
    explorer.screenshot(path=str(artifacts_dir / "demo-after-play.png"))

    # The slider: keyboard steps on its handle move the window too, and it settles again.
    pixels, shown = after, results.inner_text()
    handle = explorer.locator(".ddlab-slider .noUi-handle").first
    handle.focus()
    for _ in range(3):
        handle.press("ArrowRight")
    _wait(page, f"""() => {{
        const m = document.querySelector('.ddlab-explorer .ddlab-status').innerText.match(/position\\s+(-?\\d+)/);
        return m && Number(m[1]) > {played};
    }}""", 60, "the slider to move the window")
    status = _settled(page, explorer)
    _check_same_window(page, status)
    after = _plot_pixels(explorer)
    assert _position(explorer) > played
    assert after["ddlab-iterations"] != pixels["ddlab-iterations"], "the iterations plot did not change on the slider"
    assert results.inner_text() != shown, "the results panel did not change on the slider"
    explorer.screenshot(path=str(artifacts_dir / "demo-after-slider.png"))
    page.screenshot(path=str(artifacts_dir / "demo-page.png"))

    # Why: pick the largest component; the panel explains one of its nodes with the input
    # edges that suffice, for the window the slider shows.
    why = explorer.locator(".ddlab-why")
    why.scroll_into_view_if_needed()
    picker = why.locator("select").first
    choice = picker.locator("option").nth(1).get_attribute("value")
    picker.select_option(value=choice)
    expect(why).to_contain_text("why is node", timeout=60_000)
    expect(why).to_contain_text("input record(s) suffice")
    expect(why).to_contain_text("reproduces it")
    window = _window(_status(explorer))
    assert window in why.inner_text(), (window, why.inner_text())
    why.screenshot(path=str(artifacts_dir / "demo-why.png"))

    # Run All again on a fresh kernel: the windows come from the cache the first run filled.
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")
    page.wait_for_timeout(500)
    _wait(page, _KERNEL_IDLE, 90, "the restarted kernel to be idle")
    timings["load_average_before_warm"] = round(os.getloadavg()[0], 1)
    timings["run_all_to_explorer_visible_warm_s"] = round(
        _run_all_until_visible(page, lab, artifacts_dir, "warm", timings), 1)
    page.screenshot(path=str(artifacts_dir / "demo-first-screen-warm.png"))
    state = _run_state(page, lab)
    assert not state["errors"], "error outputs in the second run:\n" + "\n".join(state["errors"])
    (artifacts_dir / "demo-timings.json").write_text(json.dumps(timings, indent=1))
    print("demo timings:", timings)

    assert not console_errors, "browser console errors:\n" + "\n".join(console_errors)
