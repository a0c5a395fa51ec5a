"""``%dd input NAME`` and ``%%dd NAME``: declaring input and derived collections.

Why together: both add a declaration, rebuild the flow beside the running one through the
session, publish the name into the user's namespace and answer with a
:class:`~ddlab.kernel_ext.display.results.Declared` saying what was built.
"""
from __future__ import annotations

from html import escape

from IPython.core.magic_arguments import argument, magic_arguments

from ..declarations import DerivedDecl
from ..display.results import Declared, ShowResult, StepSummary
from ..messages import SessionError

__all__ = ["input_", "define"]


def _split(text):
    return [c.strip() for c in text.split(",") if c.strip()] if text else None


def _unquote(text):
    if text and len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


@magic_arguments(name="dd input")
@argument("name", help="the collection's name (also a Python variable)")
@argument("--from", dest="source", metavar="SOURCE",
          help="a dataset name (collegemsg, twitter24h, travian-messages, enron, "
               "bitcoinotc), a CSV/JSON/Parquet path, or a pandas/Spark DataFrame variable")
@argument("--sql", metavar="QUERY", help="a Spark SQL query (quote it) instead of --from")
@argument("--src", help="source column holding the edge source (default: src)")
@argument("--dst", help="source column holding the edge destination (default: dst)")
@argument("--time", help="source column holding the event time (default: time)")
@argument("--label", help="source column kept as a third field, label")
@argument("--columns", metavar="A,B,...",
          help="the record's fields, picked from a DataFrame (instead of --src/--dst); "
               "for an input without --from: its field names (default src,dst)")
@argument("--names", metavar="A,B,...", help="column names of a header-less file")
@argument("--no-header", action="store_true", help="the CSV file has no header line")
@argument("--format", choices=["csv", "json", "parquet"], help="file format (default: from "
          "the extension)")
@argument("--time-format", help="unix, unix_ms, iso, or a pattern such as 'M/d/yy h:mm a' "
                                "(default: detected)")
@argument("--window", metavar="WIDTH", help="sliding window width: 7d, 12h, 3600 (seconds)")
@argument("--step", metavar="STEP", help="how far each window step moves: 1d, 1h, ...")
@argument("--multigraph", action="store_true",
          help="keep every event as one copy of its record (default: a record is present "
               "once while any of its events is loaded / in the window)")
def input_(magics, line, ns):
    """Declare an input collection, empty or loaded from a source (Spark or pandas).

    Its records are queued for the next step; with --window the records enter one
    window position per epoch (%dd step).  Example:
    %dd input edges --from collegemsg --window 7d --step 1d
    """
    from ..loading import LoadRequest, load_input

    args = magics.parse(input_, line)
    if args is None:
        return None
    req = LoadRequest(args.name, _unquote(args.source), _unquote(args.sql), args.src, args.dst,
                      args.time, args.label, _split(args.columns), _split(args.names),
                      not args.no_header, args.format, _unquote(args.time_format),
                      args.window, args.step, args.multigraph)
    s = magics.session
    s.check_name(req.name, derived=False)
    magics.check_free(req.name)
    replaced = req.name in s.inputs
    with magics.progress_row(f"%dd input {req.name}") as progress:
        decl = load_input(req, ns, progress)
        s.declare_input(decl, ns, progress)
    magics.publish(req.name)
    return _declared_input(magics, decl, replaced)


def _declared_input(magics, decl, replaced) -> Declared:
    from ddlab.sources import format_duration

    s = magics.session
    cols = ", ".join(decl.columns)
    html = [f"<b>{escape(decl.name)}</b> \u2190 {escape(decl.source)} \u00b7 input "
            f"\u00b7 fields {escape(cols)}"]
    text = [f"{decl.name} <- {decl.source}: input with fields {cols}"]
    lines = []
    if decl.report is not None:
        r = decl.report
        line = (f"loaded on Spark in {decl.seconds:.1f} s: {r.rows_read:,} rows read, "
                f"{r.rows_loaded:,} loaded, {r.malformed_total:,} malformed")
        if r.malformed:
            line += " (" + ", ".join(f"{k} {v:,}" for k, v in sorted(r.malformed.items())) + ")"
        lines.append(line)
    feed = s.state.handles[decl.name].feed
    if feed is not None:
        lines.append(f"window {format_duration(feed.width)} stepping "
                     f"{format_duration(feed.step_seconds)}: {feed.steps:,} positions, "
                     f"{decl.batches.total_rows:,} update rows prepared on Spark; at the empty "
                     f"position (-1): %dd step moves it (the first step loads window 0 "
                     f"{feed.span(0) if feed.steps else ''})")
    elif decl.initial is not None:
        lines.append(f"{len(decl.initial):,} records queued for the next step (a %%dd cell or "
                     f"%dd step applies them)")
    else:
        lines.append("empty; add rows with %dd insert " + decl.name + " [(...), ...]")
    users = list(s.derived)
    if replaced:
        lines.append(f"replaced the earlier {decl.name}; the flow was rebuilt at epoch "
                     f"{s.flow.epoch}" + (f" ({', '.join(users)} recomputed)" if users else ""))
    html += [escape(line) for line in lines]
    text += lines
    sample = None
    if decl.initial is not None and len(decl.initial):
        frame = decl.initial.rename(columns={"diff": "multiplicity"})
        sample = ShowResult(f"{decl.name} (queued)", frame, 0, min(5, magics.display_limit))
    return Declared(decl.name, html, text, show=sample)


@magic_arguments(name="%dd")
@argument("name", help="the derived collection's name (also a Python variable)")
@argument("--no-arrange", action="store_true",
          help="do not arrange the result (saves memory; %%dd trace then has nothing)")
@argument("--no-step", action="store_true",
          help="do not run the first step even if updates are queued")
def define(magics, line, cell, ns):
    """Declare a derived collection: the cell body is Python ending in an expression
    over declared collections (ddlab.algorithms names are available), e.g.

    %%dd cc
    connected_components(edges)

    The result is arranged (so %dd trace works) and viewed; the cell shows what was
    built and the first result (one step if updates are queued or a window is empty).
    """
    args = magics.parse(define, line)
    if args is None:
        return None
    if not cell.strip():
        raise SessionError(f"%%dd {args.name}: the cell body is empty.",
                           "Write an expression such as connected_components(edges).")
    s = magics.session
    s.check_name(args.name, derived=True)
    magics.check_free(args.name)
    old_epoch = s.flow.epoch
    replaced = args.name in s.derived
    decl = DerivedDecl(args.name, cell, arrange=not args.no_arrange)
    with magics.progress_row(f"%%dd {args.name}") as progress:
        _, result = s.declare_derived(decl, ns, progress, first_step=not args.no_step)
    magics.publish(args.name)
    return _declared_derived(magics, decl, result, old_epoch, replaced)


def _declared_derived(magics, decl, result, old_epoch, replaced) -> Declared:
    s = magics.session
    h = s.state.handles[decl.name]
    body = decl.body.strip()
    shown = body if "\n" not in body else body.splitlines()[-1] + " (...)"
    info = h.info
    loops = ", ".join(p.split("/", 1)[1] for p in info.loops) or "none"
    text = [f"{decl.name} = {shown}: derived collection",
            f"built {info.summary()}; loops: {loops}"
            + ("; arranged (see %dd trace " + decl.name + ")" if decl.arrange else "")]
    html = [f"<b>{escape(decl.name)}</b> = <code>{escape(shown)}</code> \u00b7 derived",
            escape(text[1])]
    if old_epoch > 0 or replaced:
        note = (f"{'replaced the earlier ' + decl.name + '; ' if replaced else ''}the flow "
                f"was rebuilt from the declarations and brought back to epoch "
                f"{old_epoch - 1} by replaying the inputs; collections built in plain "
                f"Python on the previous flow are stale" if old_epoch else
                f"replaced the earlier {decl.name}")
        text.append(note)
        html.append(escape(note))
    first = StepSummary(result) if result else None
    show = ShowResult(decl.name, h.view.to_pandas(), h.view.epoch, min(10, magics.display_limit))
    return Declared(decl.name, html, text, first=first, show=show)
