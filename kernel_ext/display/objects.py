"""How the engine's and the sources' own objects look in a notebook.

Why: the engine knows nothing of Jupyter, so the HTML and text of a ``View``, a
``Collection``, a ``Dataflow`` or a ``StepReport`` (and of the sources' ``LoadReport``,
``WindowBatches``, ``WindowFeed``) are written here and registered with IPython by
:mod:`.register`.  A declared collection shows its contents like ``%dd show``.
"""
from __future__ import annotations

from html import escape

from .results import ShowResult, StatusResult
from .tables import DEL, muted, wrap

__all__ = ["render_view", "render_view_text", "render_collection", "render_collection_text",
           "render_dataflow", "render_step_report", "render_load_report",
           "render_window_batches", "render_window_feed"]


def _shown(view, name, limit, sort=None, pending=0) -> ShowResult:
    # a view without a declared name shows the engine's own label, e.g. "arrange#23"
    return ShowResult(name or view.label, view.to_pandas(), view.epoch, limit, pending, sort)


def render_view(view, name: str | None = None, limit: int = 20, sort: list | None = None,
                pending: int = 0) -> str:
    """HTML of a view: a summary line and its first ``limit`` records."""
    return _shown(view, name, limit, sort, pending)._repr_html_()


def render_view_text(view, name: str | None = None, limit: int = 20, sort=None,
                     pending: int = 0) -> str:
    """Plain text of a view (the same summary and rows)."""
    return repr(_shown(view, name, limit, sort, pending))


def render_collection(coll, session=None, limit: int = 20) -> str:
    """A declared collection shows its contents; any other one a summary and a hint."""
    name = session.find(coll) if session is not None else None
    if name is not None:
        h = session.state.handles[name]
        return render_view(h.view, name, limit, pending=session.pending(name)
                           if name in session.inputs else 0)
    cols = f" \u00b7 fields {', '.join(coll.columns)}" if coll.columns else ""
    stale = session is not None and coll.flow is not session.flow and bool(session.names)
    note = ("it belongs to an earlier dataflow of this session (rebuilt since): re-run the "
            "cell that made it" if stale else
            "not declared: declare it with <code>%%dd NAME</code> to follow its contents, "
            "or call <code>.view()</code> before stepping")
    return wrap(f"<b>Collection</b> {escape(coll.label)} in {escape(coll.scope.path)}"
                f"{escape(cols)} \u00b7 {escape(type(coll).__name__)}", muted(note))


def render_collection_text(coll, session=None, limit: int = 20) -> str:
    """Plain text: a declared collection's contents, else the engine's repr."""
    name = session.find(coll) if session is not None else None
    if name is not None:
        return render_view_text(session.state.handles[name].view, name, limit)
    return repr(coll)


def render_dataflow(flow, session=None) -> str:
    """A summary line (inputs, operators, loops, epochs, retained updates); the session's
    declarations table when it is the session's flow."""
    loops = sorted(flow.loops())
    summary = (f"<b>Dataflow</b> {escape(flow.name)} \u00b7 {len(flow.inputs)} input"
               f"{'s' if len(flow.inputs) != 1 else ''} \u00b7 {len(flow.operators):,} "
               f"operators \u00b7 {len(loops)} loop scope{'s' if len(loops) != 1 else ''} "
               f"\u00b7 {flow.epoch} epoch{'s' if flow.epoch != 1 else ''} completed \u00b7 "
               f"{flow.retained_updates():,} updates retained")
    body = ""
    if session is not None and flow is session.flow and session.names:
        body = StatusResult(session).table_html()
    elif loops:
        body = muted(f"loops: {escape(', '.join(loops))}")
    return wrap(summary, body)


def render_step_report(report) -> str:
    """One line: the epoch, input updates, updates processed, time, retained updates."""
    return wrap(f"<b>epoch {report.epoch}</b> \u00b7 {report.input_updates:,} input updates "
                f"\u00b7 {report.updates_processed:,} updates through "
                f"{report.operator_runs:,} operator runs \u00b7 "
                f"{report.seconds * 1000:.1f} ms \u00b7 {report.retained_updates:,} retained")


def render_load_report(report) -> str:
    """Rows read and loaded, malformed rows by reason, a few examples."""
    bad = report.malformed_total
    summary = (f"<b>loaded</b> {escape(str(report.source))} \u00b7 {report.rows_read:,} rows "
               f"read \u00b7 {report.rows_loaded:,} loaded \u00b7 "
               + (f'<span style="{DEL}">{bad:,} malformed</span>' if bad else "0 malformed"))
    rows = [f"<div>{escape(reason)}: {n:,}</div>"
            for reason, n in sorted(report.malformed.items())]
    rows += [muted(f'{escape(ex["file"])}: {escape(repr(ex["row"]))} ({escape(ex["reason"])})')
             for ex in report.examples]
    return wrap(summary, "".join(rows))


def render_window_batches(batches) -> str:
    return wrap(escape(repr(batches)))


def render_window_feed(feed) -> str:
    return wrap(escape(repr(feed)))
