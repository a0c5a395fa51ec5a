"""``%dd explore NAME``: the window explorer (``ddlab.widgets``) over a declared collection.

Why here and thin: the explorer is a widgets-layer object; the magic only finds what it needs
in the session (the collection's view, the windowed input upstream of it and that input's
feed) and declares, like any ``%%dd`` cell would, the two collections the components panel
reads: ``NAME_components`` ``(node, component)`` and, when the windowed input carries a label
column, ``NAME_top_labels`` ``(component, count, label)`` and ``NAME_label_totals``
``(component, total)`` (the top label's share).  They must exist before the flow
runs (the engine refuses operators added later), so declaring them rebuilds the flow at the
same epoch, as any declaration does.
"""
from __future__ import annotations

from IPython.core.magic_arguments import argument, magic_arguments

from ..declarations import DerivedDecl
from ..messages import SessionError

__all__ = ["explore"]

#: how the results panel reads a collection, by its field names
_KINDS = {("src", "dst"): "scc", ("node", "label"): "cc"}


@magic_arguments(name="dd explore")
@argument("name", help="a declared collection over a windowed input (e.g. scc or cc)")
@argument("--kind", choices=["auto", "scc", "cc", "table"], default="auto",
          help="scc: the edges inside strongly connected components; cc: (node, label) "
               "pairs; table: any collection, shown as a live table (default: from its fields)")
@argument("--no-labels", action="store_true",
          help="sizes only, even if the windowed input has a label column")
@argument("--start", type=int, default=0,
          help="the first window position when the window is still empty (default 0)")
def explore(magics, line, ns):
    """Slide the window of the input upstream of NAME and watch NAME live: a position slider
    with the window's dates, Play/Pause, step size, direction and jump; the components with
    their sizes and top labels; records in difference per iteration beside from-scratch
    reference lines; the epoch x iteration lattice trace; latency and retained state.
    Each move is one epoch.  Returns the explorer (``.move_to(k)``, ``.slider``, ...).
    Example: %dd explore scc
    """
    args = magics.parse(explore, line)
    if args is None:
        return None
    try:
        from ddlab import widgets
    except ImportError as err:  # the lab extra is missing: one line naming it
        raise SessionError(f"%dd explore: {err}", "Install it and restart the kernel.") from None
    s = magics.session
    name = args.name
    handle = magics.lookup(name, ns)
    feed_name, feed = _windowed_input(s, handle.collection, name)
    kind = args.kind if args.kind != "auto" else _KINDS.get(tuple(handle.collection.columns or ()),
                                                          "table")
    options = {}
    if kind in ("scc", "cc"):
        labelled = not args.no_labels and len(s.inputs[feed_name].columns) >= 3
        components, top, totals = _declare_panel(magics, ns, name, kind, feed_name, labelled)
        # the declarations rebuilt the flow: read the handles (and the feed) anew
        feed = dict(s.state.feeds())[feed_name]
        options = {"components": s.handle(components).view,
                   "window": s.handle(feed_name).view, "references": kind}
        if top:
            options.update(top_labels=s.handle(top).view, label_totals=s.handle(totals).view)
    explorer = widgets.explore(feed, {name: s.handle(name).view}, start=args.start, **options)
    s.on_new_flow(lambda state: _retire(explorer, name))
    # %dd step/insert on the same flow: the explorer shows the new epoch (dropped once retired)
    s.on_epochs(lambda state: explorer.sync() if state.flow is explorer.flow else True)
    return explorer


def _windowed_input(session, collection, name: str):
    """The (name, feed) of the one windowed input ``collection`` depends on."""
    upstream = session.flow.upstream(collection)
    feeds = [(n, f) for n, f in session.state.feeds()
             if session.handle(n).collection.id in upstream]
    if not feeds:
        raise SessionError(f"%dd explore {name}: no windowed input is upstream of {name}, so "
                           f"there is no window to slide.",
                           "Declare one, e.g. %dd input edges --from collegemsg --window 7d "
                           "--step 1d, and define the collection from it.")
    if len(feeds) > 1:
        raise SessionError(f"%dd explore {name}: {len(feeds)} windowed inputs are upstream "
                           f"({', '.join(n for n, _ in feeds)}); the explorer slides one.",
                           "Explore a collection that depends on one windowed input.")
    return feeds[0]


def _declare_panel(magics, ns, name: str, kind: str, edges: str, labelled: bool):
    """Declare (once) ``NAME_components`` and, with labels, ``NAME_top_labels`` and
    ``NAME_label_totals``."""
    components = f"{name}_components" if kind == "scc" else name
    wanted = []
    if kind == "scc":
        wanted.append(DerivedDecl(components,
                                  f"connected_components({name}, prioritized=False)"))
    top = f"{name}_top_labels" if labelled else None
    totals = f"{name}_label_totals" if labelled else None
    if top:
        wanted.append(DerivedDecl(top, f"top_label_per_component({components}, "
                                       f"{edges}.project(0, 2))"))
        wanted.append(DerivedDecl(totals, f"{components}.join({edges}.project(0, 2), "
                                          f"select=(1,)).count()"))
    s = magics.session
    for decl in wanted:
        existing = s.derived.get(decl.name)
        if existing is not None and existing.body == decl.body:
            continue
        s.check_name(decl.name, derived=True)
        magics.check_free(decl.name)
        with magics.progress_row(f"%dd explore: declaring {decl.name}") as progress:
            s.declare_derived(decl, ns, progress, first_step=False)
        magics.publish(decl.name)
    return components, top, totals


def _retire(explorer, name: str) -> bool:
    """The session built a new flow: this explorer's flow is gone; say so and stop it (once)."""
    explorer.play.playing = False
    todo = [explorer.controls.box]
    while todo:
        widget = todo.pop()
        todo.extend(getattr(widget, "children", ()))
        if hasattr(widget, "disabled"):
            widget.disabled = True
    explorer.status.value = (f"<span style='color:#9a6700'>the session's dataflow was rebuilt "
                             f"(a declaration changed); this explorer is stopped. Run "
                             f"<code>%dd explore {name}</code> again.</span>")
    return True
