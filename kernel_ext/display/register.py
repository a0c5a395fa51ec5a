"""Register ddlab's renderers with IPython's display formatter (the engine stays Jupyter-free).

``text/html`` and ``text/plain`` renderers for ``View``, ``Collection`` (so also
``InputCollection`` and loop ``Variable``), ``Dataflow`` and ``StepReport``; HTML for the
Spark sources' ``LoadReport``, ``WindowBatches`` and ``WindowFeed``, registered *by name* so
registering them imports neither those modules nor pyspark.  A renderer that fails is not
hidden: IPython shows its traceback, as for any failing repr, and still displays the object's
other representations (displaying never raises).
"""
from __future__ import annotations

from functools import wraps

from . import objects as render

__all__ = ["register_formatters", "unregister_formatters"]

_BY_NAME = [
    ("ddlab.sources.loaders", "LoadReport", render.render_load_report),
    ("ddlab.sources.windows", "WindowBatches", render.render_window_batches),
    ("ddlab.sources.feed", "WindowFeed", render.render_window_feed),
]


def _plain(fn):
    """Adapt ``fn(obj) -> str`` to the pretty printer's ``(obj, p, cycle)``."""
    @wraps(fn)
    def printer(obj, p, cycle):
        p.text(fn(obj))
    return printer


def _types():
    from ddlab.engine import Collection, Dataflow, StepReport, View

    return Collection, Dataflow, StepReport, View


def register_formatters(ip, magics) -> None:
    """Register the renderers on ``ip``; they read the live session and display limit from
    ``magics`` at display time."""
    Collection, Dataflow, StepReport, View = _types()
    html = ip.display_formatter.formatters["text/html"]
    plain = ip.display_formatter.formatters["text/plain"]

    def session():
        return magics.session

    def limit():
        return magics.display_limit

    def view_name(v):
        return session().find(v)

    html.for_type(View, lambda v: render.render_view(v, view_name(v), limit()))
    plain.for_type(View, _plain(lambda v: render.render_view_text(v, view_name(v), limit())))
    html.for_type(Collection, lambda c: render.render_collection(c, session(), limit()))
    plain.for_type(Collection, _plain(
        lambda c: render.render_collection_text(c, session(), limit())))
    html.for_type(Dataflow, lambda f: render.render_dataflow(f, session()))
    html.for_type(StepReport, render.render_step_report)
    plain.for_type(StepReport, _plain(str))
    for module, name, fn in _BY_NAME:
        html.for_type_by_name(module, name, fn)


def unregister_formatters(ip) -> None:
    """Remove what :func:`register_formatters` registered (``%unload_ext``)."""
    Collection, Dataflow, StepReport, View = _types()
    html = ip.display_formatter.formatters["text/html"]
    plain = ip.display_formatter.formatters["text/plain"]
    for fmt, types in ((html, (View, Collection, Dataflow, StepReport)),
                       (plain, (View, Collection, StepReport))):
        for t in types:
            try:
                fmt.pop(t)
            except KeyError:
                pass
    for module, name, _ in _BY_NAME:
        try:
            html.pop(f"{module}.{name}")
        except KeyError:
            pass
