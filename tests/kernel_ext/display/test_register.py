"""The renderers registered with IPython do not hide their own failures: a renderer that raises
shows its traceback (IPython's way for any failing repr) and the object's other
representations are still displayed."""
from __future__ import annotations

import pytest
from IPython.utils.capture import capture_output

from ddlab.kernel_ext import get_magics
from ddlab.kernel_ext.display import objects

from ..conftest import dd


@pytest.mark.parametrize("fmt, renderer", [("text/html", "render_view"),
                                           ("text/plain", "render_view_text")])
def test_a_failing_renderer_shows_its_traceback(ip, monkeypatch, fmt, renderer):
    ip.user_ns["rows"] = [(1, 2), (2, 3)]
    dd(ip, "input edges")
    dd(ip, "insert edges rows")
    dd(ip, "step")
    view = get_magics(ip).session.handle("edges").view

    def broken(*args, **kwargs):
        raise RuntimeError(f"{renderer} broken on purpose")

    monkeypatch.setattr(objects, renderer, broken)
    with capture_output() as cap:
        data, _ = ip.display_formatter.format(view)
    shown = cap.stdout + cap.stderr
    assert "RuntimeError" in shown and f"{renderer} broken on purpose" in shown
    assert "Traceback" in shown or "Traceback" in "".join(o.data.get("text/plain", "")
                                                        for o in cap.outputs)
    assert fmt not in data, "the failed representation is not replaced by a silent stand-in"
    other = "text/plain" if fmt == "text/html" else "text/html"
    assert other in data, "the other representation is still displayed"
