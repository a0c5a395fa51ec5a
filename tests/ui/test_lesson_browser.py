"""Lessons 2 and 3 in a real browser: each runs top to bottom in JupyterLab without an error, and
its widgets redraw from the engine when touched: Lesson 2's iteration slider redraws the graph
with its label stacks, Lesson 3's clickable lattice cell shows its down-set and the sum it induces,
and its change picker re-runs the three strategies and redraws the chart.  Screenshots land in
tests/ui/artifacts/ (lesson2-*.png, lesson3-*.png).

Uses the session fixtures of tests/ui/conftest.py (``lab``: a throwaway JupyterLab serving a copy
of notebooks/; the system Chromium through pytest-playwright).  The widgets' contract is their
``lesson-*`` CSS classes, set in the notebooks.
"""
from __future__ import annotations

import time

import pytest

pytest.importorskip("playwright", reason="the browser tests need playwright (pip install -e '.[test]')")
from playwright.sync_api import Page, expect  # noqa: E402

from .conftest import KERNEL_IDLE as _KERNEL_IDLE, RUN_STATE as _RUN_STATE  # noqa: E402
from .conftest import wait_for as _wait, watch_console  # noqa: E402

RUN_TIMEOUT_S = 180

def _open_and_run(page: Page, lab, notebook: str) -> None:
    page.goto(lab.url(notebook))
    _wait(page, "() => !!window.jupyterapp", 60, "JupyterLab to start")
    _wait(page, _KERNEL_IDLE, 90, f"{notebook}'s kernel to be idle")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_timeout(1000)
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while True:
        state = page.evaluate(_RUN_STATE)
        assert not state["errors"], f"{notebook}: errors in the outputs:\n" + "\n".join(state["errors"])
        if state["done"]:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{notebook} did not finish in {RUN_TIMEOUT_S} s ({state['executed']}/"
                                 f"{state['total']} code cells ran)\n{lab.log_tail()}")
        page.wait_for_timeout(500)


def _settle(page: Page):
    """The kernel has handled the widget event and the browser has drawn what came back."""
    page.wait_for_timeout(500)
    _wait(page, _KERNEL_IDLE, 60, "the kernel to go idle after the widget event")
    page.wait_for_timeout(1000)


def test_lesson2_iteration_slider_redraws_the_label_stacks(page: Page, lab, artifacts_dir):
    console = watch_console(page)
    _open_and_run(page, lab, "02_a_loop_is_differences.ipynb")
    plot = page.locator(".lesson-stacks-plot").first
    caption = page.locator(".lesson-stacks-caption").first
    plot.scroll_into_view_if_needed()
    expect(plot.locator("canvas").first).to_be_visible(timeout=30_000)
    expect(caption).to_contain_text("differences at (0, 3)")        # the notebook moved it to the fixed point
    page.wait_for_timeout(1000)
    before = plot.screenshot()
    page.screenshot(path=str(artifacts_dir / "lesson2-at-0-3.png"))

    handle = page.locator(".lesson-iteration-slider .noUi-handle").first
    handle.focus()
    for _ in range(3):
        handle.press("ArrowLeft")
    _settle(page)
    expect(caption).to_contain_text("differences at (0, 0)", timeout=30_000)
    expect(caption).to_contain_text("6 records in difference")      # the six seeds
    page.wait_for_timeout(500)
    assert plot.screenshot() != before, "the label stacks were not redrawn when the slider moved"
    page.screenshot(path=str(artifacts_dir / "lesson2-at-0-0.png"))
    assert not console, "browser console errors:\n" + "\n".join(console)


def test_lesson3_lattice_cell_and_change_picker_redraw(page: Page, lab, artifacts_dir):
    console = watch_console(page)
    _open_and_run(page, lab, "03_two_kinds_of_change.ipynb")
    details = page.locator(".lesson-grid-details").first
    expect(details).to_contain_text("X(1, 2)")                       # the notebook clicked (1, 2)

    cell = page.locator(".lesson-cell-2-4").first
    cell.scroll_into_view_if_needed()
    cell.click()
    _settle(page)
    expect(details).to_contain_text("X(2, 4)", timeout=30_000)
    expect(details).to_contain_text("work after convergence")
    expect(details).to_contain_text("= plain-Python labels ✓")
    page.locator(".lesson-grid").first.screenshot(path=str(artifacts_dir / "lesson3-cell-2-4.png"))

    plot = page.locator(".lesson-strategies-plot").first
    totals = page.locator(".lesson-strategies-totals").first
    plot.scroll_into_view_if_needed()
    expect(plot.locator("canvas").first).to_be_visible(timeout=30_000)
    expect(totals).to_contain_text("restart: 28")
    page.wait_for_timeout(1000)
    before = plot.screenshot()
    page.locator(".lesson-edge-picker select").first.select_option(label="remove 5-6")
    _settle(page)
    expect(totals).to_contain_text("grid: 0", timeout=30_000)        # the change the grid absorbs for free
    page.wait_for_timeout(500)
    assert plot.screenshot() != before, "the strategies chart was not redrawn for the new change"
    page.screenshot(path=str(artifacts_dir / "lesson3-after-picker.png"))
    assert not console, "browser console errors:\n" + "\n".join(console)
