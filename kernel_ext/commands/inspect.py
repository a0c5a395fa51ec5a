"""``%dd show``, ``changes``, ``trace``, ``stats``, ``graph``, ``progress``: looking at the flow.

Why together: none changes anything; each reads the engine's public API (a view's contents
and changes, a collection's history, ``flow.stats``/``flow.lattice``/``flow.upstream``,
``flow.graph``, ``flow.progress``) and returns a result object from ``display.results``.
"""
from __future__ import annotations

from IPython.core.magic_arguments import argument, magic_arguments

from ..display.graph_svg import dataflow_svg
from ..display.lattice import lattice_grid
from ..display.results import (ChangesResult, GraphResult, ProgressResult, ShowResult,
                               StatsResult, TraceResult)
from ..messages import SessionError, hint, suggest
from ..summaries import stats_table

__all__ = ["show", "changes", "trace", "stats", "graph", "progress"]


@magic_arguments(name="dd show")
@argument("name", help="a declared collection")
@argument("--limit", type=int, help="rows to show (default: DDMagics.display_limit)")
@argument("--sort", metavar="A,B", help="fields to sort by (default: all)")
def show(magics, line, ns):
    """Show a collection's current contents: each record with its multiplicity.
    The value's .frame holds every record.  Example: %dd show cc --limit 10
    """
    args = magics.parse(show, line)
    if args is None:
        return None
    h = magics.lookup(args.name, ns)
    frame = h.view.to_pandas()
    sort = [c.strip() for c in args.sort.split(",")] if args.sort else None
    for c in sort or []:
        if c not in frame.columns:
            raise SessionError(f"%dd show {args.name}: no field {c!r} to sort by.",
                               hint(suggest(c, frame.columns),
                                    f"Fields: {', '.join(map(str, frame.columns))}."))
    s = magics.session
    pending = s.pending(args.name) if args.name in s.inputs else 0
    return ShowResult(args.name, frame, h.view.epoch, magics.limit(args), pending, sort)


@magic_arguments(name="dd changes")
@argument("name", help="a declared collection")
@argument("--limit", type=int, help="rows to show")
def changes(magics, line, ns):
    """Show a collection's changes in the last epoch (additions green, retractions red).
    Example: %dd changes cc
    """
    args = magics.parse(changes, line)
    if args is None:
        return None
    h = magics.lookup(args.name, ns)
    return ChangesResult(args.name, h.view.changes(), h.view.epoch, magics.limit(args))


def _upstream_frame(flow, collection):
    """``flow.graph()``'s operators restricted to those ``collection`` depends on."""
    ops, edges = flow.graph()
    return ops[ops["id"].isin(flow.upstream(collection))], ops, edges


@magic_arguments(name="dd trace")
@argument("name", help="a declared (arranged) collection")
@argument("--limit", type=int, help="rows to show")
def trace(magics, line, ns):
    """Show a collection's trace: the updates its arrangement keeps, grouped by time, and
    for each loop upstream the lattice of updates per (epoch, iteration).
    Example: %dd trace scc
    """
    from ddlab.engine import DataflowError

    args = magics.parse(trace, line)
    if args is None:
        return None
    h = magics.lookup(args.name, ns)
    try:
        history = h.collection.history()
    except DataflowError:
        raise SessionError(f"{args.name} keeps no trace (it was declared with --no-arrange).",
                           f"Re-declare it without --no-arrange: %%dd {args.name}.") from None
    flow = magics.session.flow
    up, _, _ = _upstream_frame(flow, h.collection)
    loops = sorted({"/".join(p.split("/")[:2]) for p in up["scope"] if p != "root"})
    lattices = {loop: lattice_grid(flow.lattice(loop)) for loop in loops}
    return TraceResult(args.name, history, flow.epoch, lattices, magics.limit(args))


@magic_arguments(name="dd stats")
@argument("name", nargs="?", help="only the operators upstream of this collection")
@argument("--by", choices=["operator", "iteration", "time"], default="operator",
          help="group per operator (default), per loop iteration, or not at all")
@argument("--epoch", type=int, help="which epoch (default: the last completed)")
@argument("--all", action="store_true", help="every epoch")
@argument("--limit", type=int, help="rows to show")
def stats(magics, line, ns):
    """Per-operator statistics from flow.stats(): runs, updates in and out, milliseconds,
    per operator (sorted by time), per loop iteration, or per (operator, time).
    Example: %dd stats scc --by iteration
    """
    args = magics.parse(stats, line)
    if args is None:
        return None
    flow = magics.session.flow
    if flow.epoch == 0:
        raise SessionError("no epoch has completed yet, so there are no statistics.",
                           "Run %dd step first.")
    if args.epoch is not None and not 0 <= args.epoch < flow.epoch:
        raise SessionError(f"--epoch {args.epoch} is out of range 0..{flow.epoch - 1}.",
                           "Epochs count from 0; the last completed is "
                           f"{flow.epoch - 1}.")
    epoch = None if args.all else (args.epoch if args.epoch is not None else flow.epoch - 1)
    raw = flow.stats(epoch)
    label = "of all epochs" if epoch is None else f"of epoch {epoch}"
    if args.name:
        h = magics.lookup(args.name, ns)
        up, _, _ = _upstream_frame(flow, h.collection)
        raw = raw[raw["operator"].isin(set(up["label"]))]
        label += f" upstream of {args.name}"
    raw = raw.assign(ms=(raw["seconds"] * 1000).round(3))
    return StatsResult(stats_table(raw, args.by), raw, args.by, label, magics.limit(args))


@magic_arguments(name="dd graph")
@argument("name", nargs="?", help="only the operators upstream of this collection")
@argument("--epoch", type=int, help="whose edge counts (default: the last completed)")
def graph(magics, line, ns):
    """Draw the dataflow: operators in topological layers, loops as nested boxes, each
    edge labelled with the updates it carried in the epoch (Naiad's Figure 9, live).  With
    several workers, the edges that move records between workers are orange and named (by
    key, spread, gather), and each label adds every worker's count.
    The value's .svg is the picture.  Example: %dd graph scc
    """
    args = magics.parse(graph, line)
    if args is None:
        return None
    s = magics.session
    flow = s.flow
    if args.epoch is not None and not 0 <= args.epoch < max(1, flow.epoch):
        raise SessionError(f"--epoch {args.epoch} is out of range 0..{max(0, flow.epoch - 1)}.",
                           "Epochs count from 0.")
    epoch = args.epoch if args.epoch is not None else max(0, flow.epoch - 1)
    ops, edges = flow.graph(epoch)
    names = {h.collection.id: n for n, h in s.state.handles.items()}
    keep = None
    when = f"after epoch {flow.epoch - 1}" if flow.epoch else "before the first epoch"
    title = f"dataflow {when}"
    if args.name:
        h = magics.lookup(args.name, ns)
        # the collection's operators and its views (which read only the collection)
        views = ops[ops["label"].str.startswith(f"view {args.name}#")]["id"]
        keep = flow.upstream(h.collection) | {int(i) for i in views}
        title = f"dataflow of {args.name} {when}"
        ops = ops[ops["id"].isin(keep) | (ops["kind"] == "loop")]
        edges = edges[edges["source"].isin(keep) & edges["target"].isin(keep)]
    svg = dataflow_svg(ops, edges, names=names, keep=keep, title=title)
    return GraphResult(svg, ops.reset_index(drop=True), edges.reset_index(drop=True),
                       epoch, title)


@magic_arguments(name="dd progress")
@argument("name", nargs="?", help="only the operators upstream of this collection")
@argument("--limit", type=int, help="rows to show")
def progress(magics, line, ns):
    """The progress tracker's view from flow.progress(): per operator the scheduler visits,
    the pointstamps it holds (time x count) and its input frontier (a time no element of it
    is <= is complete there).  Between steps only the inputs hold their open epoch.
    Example: %dd progress cc
    """
    args = magics.parse(progress, line)
    if args is None:
        return None
    flow = magics.session.flow
    frame = flow.progress()
    title = f"progress after epoch {flow.epoch - 1}" if flow.epoch else \
        "progress before the first epoch"
    if args.name:
        h = magics.lookup(args.name, ns)
        frame = frame[frame["id"].isin(flow.upstream(h.collection))]
        title += f", upstream of {args.name}"
    return ProgressResult(frame.reset_index(drop=True), title, magics.limit(args))
