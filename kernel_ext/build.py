"""Building a dataflow from declarations, beside the running one.

Why: the engine has no API to remove operators, so a change of the declarations never edits
the running flow.  :func:`build_flow` makes a new :class:`FlowState` (a Dataflow, each
declaration's collection, view and window feed), brings it to the running flow's epoch by
replaying the inputs' current contents and re-queuing their not-yet-stepped updates; the
session swaps it in only when everything worked.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ddlab.engine import Collection, Dataflow, DataflowError, InputCollection, View

from .declarations import DerivedDecl
from .evaluate import Unavailable, algorithm_names, evaluate
from .messages import SessionError, first_line
from .progress import NullProgress

__all__ = ["BuildInfo", "Handle", "FlowState", "Snapshot", "build_flow"]


@dataclass
class BuildInfo:
    """What building one derived declaration added to the flow."""

    operators: int = 0
    kinds: dict = field(default_factory=dict)    # kind -> count
    loops: list = field(default_factory=list)    # scope paths of the loops it created
    op_ids: tuple = ()

    def summary(self) -> str:
        """``"12 operators (2 join, 3 reduce, 7 linear)"``."""
        main = ("join", "reduce", "arrange", "loop", "enter", "leave", "feedback", "ingress")
        parts = [f"{self.kinds[k]} {k}" for k in main if self.kinds.get(k)]
        rest = self.operators - sum(self.kinds.get(k, 0) for k in main)
        if rest:
            parts.append(f"{rest} linear")
        return f"{self.operators} operators ({', '.join(parts)})"


@dataclass
class Handle:
    """One declaration inside one flow: its collection, its view, its feed, what it built."""

    collection: Collection
    view: Any
    feed: Any = None
    info: BuildInfo | None = None
    #: what a group's body gave (a ``%%dd rules`` cell's RulesProgram), for ``%dd why`` proofs
    group_value: Any = None


@dataclass
class FlowState:
    """A flow built from declarations: the Dataflow and each declared name's handle."""

    flow: Dataflow
    handles: dict[str, Handle]

    def feeds(self):
        """``[(name, WindowFeed)]`` of the windowed inputs, in declaration order."""
        return [(n, h.feed) for n, h in self.handles.items() if h.feed is not None]

    def pending_any(self) -> bool:
        """Whether any input has updates queued that no step applied yet."""
        return any(h.collection.pending_count for h in self.handles.values()
                   if isinstance(h.collection, InputCollection))


@dataclass
class Snapshot:
    """What a rebuilt flow must reproduce of the running one, per input name: its contents
    (``replay``, fields + ``diff``), its queued updates (``pending``), its window feed's
    ``(position, epochs)``; and the epoch to reach."""

    epochs: int = 0
    replay: dict = field(default_factory=dict)
    pending: dict = field(default_factory=dict)
    positions: dict = field(default_factory=dict)

    @classmethod
    def of(cls, state: FlowState, inputs, fresh=frozenset()) -> "Snapshot":
        """The running ``state``'s inputs that stay declared (``fresh`` ones start over)."""
        snap = cls(epochs=state.flow.epoch)
        for name, h in state.handles.items():
            if name in inputs and name not in fresh and isinstance(h.collection, InputCollection):
                snap.replay[name] = h.view.to_pandas().rename(columns={"multiplicity": "diff"})
                snap.pending[name] = (h.collection.pending_updates()
                                      if h.collection.pending_count else [])
                if h.feed is not None:
                    snap.positions[name] = (h.feed.position, h.feed.epochs)
        return snap


def build_flow(name: str, max_iterations: int, inputs, derived, namespace, snapshot: Snapshot,
               *, live: FlowState | None = None, live_names=frozenset(), fresh=frozenset(),
               progress=None, what: str | None = None, workers: int | None = None) -> FlowState:
    """A new flow for these declarations, at ``snapshot``'s epoch and contents.  ``fresh``
    inputs start over (their loaded records queued, their window empty); ``live`` is the
    running state (``live_names`` its declared names), whose collections a body must not use."""
    from ddlab.sources import WindowFeed

    progress = progress or NullProgress()
    flow = Dataflow(name, max_iterations=max_iterations, workers=workers)
    handles: dict[str, Handle] = {}
    for n, decl in inputs.items():
        inp = flow.input(n, columns=list(decl.columns))
        handles[n] = Handle(inp, inp.view(name=f"view {n}"))
    # empty epochs up to the one that replays the contents (only inputs exist yet: cheap);
    # with several workers the epoch is set instead (they start at the first step, with the
    # program as it is then, so nothing may run before the whole program is built)
    if flow.workers > 1:
        flow.epoch = max(0, snapshot.epochs - 1)
    else:
        for _ in range(max(0, snapshot.epochs - 1)):
            flow.step()
    groups: dict = {}          # group -> the value of its body, evaluated once per build
    for n, decl in derived.items():
        handles[n] = _build_derived(flow, decl, handles, derived, namespace, live, live_names,
                                    groups)
    if snapshot.epochs > 0:
        rows = 0
        for n, frame in snapshot.replay.items():
            if len(frame):
                handles[n].collection.update(frame)
                rows += len(frame)
        if rows and derived:
            progress.phase(f"replaying {rows:,} input records through "
                           f"{len(flow.operators):,} operators")
        try:
            flow.step()
        except DataflowError as err:
            raise SessionError(f"{what + ': ' if what else ''}recomputing the flow from the "
                               f"current inputs failed: {first_line(err)}",
                               "Nothing changed; fix the definition and run the cell again."
                               ) from err
    for n, decl in inputs.items():
        h = handles[n]
        restart = n in fresh
        if decl.windowed:
            # the session closes the epoch itself: several feeds and queued rows make one
            # epoch; each feed undoes its own moves if the engine rolls the epoch back
            position, epochs = (-1, 0) if restart else snapshot.positions.get(n, (-1, 0))
            h.feed = WindowFeed(decl.batches, h.collection, flow=flow, step=False,
                                position=position, epochs=epochs)
        if restart:
            if decl.initial is not None and len(decl.initial):
                h.collection.update(decl.initial)
        elif snapshot.pending.get(n):
            h.collection.update(snapshot.pending[n])
    return FlowState(flow, handles)


def _build_derived(flow, decl: DerivedDecl, handles, derived, namespace, live, declared,
                   groups=None) -> Handle:
    ns = algorithm_names()
    ns.update(namespace)
    for other in derived:          # later declarations are not visible, stale ones neither
        ns.pop(other, None)
    # Collections of other flows (the live one included) must not be used: evaluating
    # on them would register operators there.  Mask them with a clear error.
    for key, value in list(ns.items()):
        if isinstance(value, Collection) and value.flow is not flow:
            python_built = live is not None and value.flow is live.flow and key not in declared
            ns[key] = Unavailable(key, decl.name, python_built)
    ns.update({n: h.collection for n, h in handles.items()})
    before = len(flow.operators)
    if decl.group is not None and groups is not None and decl.group in groups:
        value = groups[decl.group]
    else:
        value = evaluate(decl.body, ns, decl.name)
        if decl.group is not None and groups is not None:
            groups[decl.group] = value
    group_value = value if decl.group is not None else None
    if decl.group is not None:
        try:
            value = value[decl.name]
        except (KeyError, TypeError) as err:
            raise SessionError(f"{decl.name}: the cell no longer gives {decl.name!r} "
                               f"({first_line(err)}).", f"Run the cell again, or %dd drop "
                               f"{decl.name}.") from err
    if isinstance(value, View):
        raise SessionError(f"{decl.name}: the cell gives a View; end it with the collection "
                           f"itself.", "Drop the trailing .view(): %%dd makes the view.")
    if not isinstance(value, Collection):
        raise SessionError(
            f"{decl.name}: the cell must end with an expression giving a Collection, "
            f"not {type(value).__name__}.",
            "E.g. connected_components(edges) or edges.map(...).distinct().")
    if value.flow is not flow:
        raise SessionError(f"{decl.name}: the result belongs to another Dataflow.",
                           "Build it from the declared collections (see %dd status).")
    if value.scope.parent is not None:
        raise SessionError(f"{decl.name}: the result is inside loop {value.scope.path!r}.",
                           "Take it out of the loop with .leave() (or return the loop's "
                           "result).")
    try:
        coll = value.arrange() if decl.arrange else value
        view = coll.view(name=f"view {decl.name}")
    except DataflowError as err:
        raise SessionError(f"{decl.name}: {first_line(err)}") from err
    ops, _ = flow.graph()
    new = ops[ops["id"] >= before]
    kinds = new["kind"].value_counts().to_dict()
    loops = sorted({s for s in new["scope"] if s != "root"})
    info = BuildInfo(len(new), {k: int(v) for k, v in kinds.items()}, loops,
                     tuple(int(i) for i in new["id"]))
    return Handle(coll, view, info=info, group_value=group_value)
