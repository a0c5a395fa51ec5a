"""BokehJS in a notebook, loaded once per kernel and inline (no network).

Why: a bokeh plot in a notebook, live or static, needs BokehJS in the page.  Loaded inline,
it is in the output of the cell that loaded it, so an exported file holds it too and works
offline.  Bokeh's own ``output_notebook`` records that it ran; a notebook that called it
already (every lesson does) is not given a second copy.
"""
from __future__ import annotations

__all__ = ["ensure_bokehjs"]


def ensure_bokehjs() -> None:
    """Load BokehJS inline in this kernel's notebook unless ``output_notebook`` already ran;
    outside a kernel nothing would render it, so nothing is done."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a core dependency
        return
    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return
    from bokeh.io import output_notebook
    from bokeh.io.state import curstate
    from bokeh.resources import INLINE

    if not curstate().notebook:
        output_notebook(INLINE, hide_banner=True)
