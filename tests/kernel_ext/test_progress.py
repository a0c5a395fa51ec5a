"""The progress row, headless: bar and label follow the phases; the timer thread stops."""
from __future__ import annotations

from ddlab.kernel_ext.progress import NullProgress, Progress


def test_progress_widget_headless():
    with Progress("load", force=True, min_seconds=0) as p:
        p.phase("reading", total=4)
        p.advance(2)
        assert p.bar.max == 4 and p.bar.value == 2
        assert "reading" in p.label.value and "2/4" in p.label.value
        p.phase("windowing")
        assert p.bar.value == p.bar.max == 1 and "windowing" in p.label.value
    assert not p._timer.is_alive()
    with NullProgress() as q:
        q.phase("x", 3)
        q.advance(1)
    assert not Progress("off").enabled          # outside a kernel: nothing is shown
