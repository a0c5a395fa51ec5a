"""The kernel-side state behind the magics: one Dataflow, its declarations, window feeds.

Nothing here knows about IPython: a :class:`Session` is driven with a namespace dict and
returns plain result objects, so it can be tested (and scripted) without a shell.

Declarations are the source of truth.  An *input* declaration says where its records come
from (nothing, a pandas frame, a Spark load, a Spark window); a *derived* declaration is the
source text of an engine expression over earlier declarations.  The live :class:`FlowState`
(the Dataflow, each declaration's collection and view, the window feeds) is built from them.

Changing the declarations never edits the running dataflow: a new flow is built beside it
from the new declarations, brought to the same epoch by replaying the current input contents
(and re-queuing the not-yet-stepped updates), and swapped in only when everything worked.
So a failing cell body, a loop that does not converge on the first computation, or a bad
option leaves the old flow, its epoch and every collection exactly as they were: no operator
of a failed declaration stays registered anywhere.  (The engine has no API to remove
operators; building beside and swapping is how we get atomic declarations.)
"""
from __future__ import annotations

import ast
import difflib
import keyword
import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

import ddlab
from ddlab.engine import DEFAULT_MAX_ITERATIONS, Collection, Dataflow, DataflowError, InputCollection

from ddlab.sources.windows import format_duration, format_span  # noqa: F401  (re-exported)

from .progress import NullProgress

__all__ = ["Session", "SessionError", "InputDecl", "DerivedDecl", "FlowState", "Handle",
           "EpochLine", "StepResult", "BuildInfo", "suggest"]

#: words that are commands of ``%dd`` and so cannot name a collection
RESERVED = {"input", "step", "insert", "remove", "show", "changes", "trace", "stats", "graph",
            "drop", "reset", "rebuild", "status", "help"}


class SessionError(Exception):
    """A user mistake: ``message`` says what was wrong, ``hint`` how to fix it (one line each).

    The magics turn it into an IPython ``UsageError`` (one line, no traceback)."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message + (f" Hint: {self.hint}" if self.hint else "")


def suggest(word: str, candidates, what: str = "") -> str | None:
    """``"did you mean 'edges'?"`` for the closest candidate, or ``None``."""
    cands = [str(c) for c in candidates]
    close = difflib.get_close_matches(str(word), cands, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in cands}
        if str(word).lower() in lowered:
            close = [lowered[str(word).lower()]]
    if not close:
        return None
    return f"did you mean {what}{close[0]!r}?"


# -- declarations ---------------------------------------------------------------------------

@dataclass
class InputDecl:
    """Where an input's records come from.

    ``initial``: the records loaded at declaration (fields + ``diff``), queued for the first
    step; ``batches``: a Spark window (``WindowBatches``) fed one position per epoch.
    """

    name: str
    columns: list[str]
    source: str = "empty"              # one line for humans: "collegemsg (Spark)", "DataFrame df"
    kind: str = "empty"                # empty | pandas | spark
    initial: pd.DataFrame | None = None
    batches: Any = None
    report: Any = None                 # a sources LoadReport, when Spark loaded it
    seconds: float = 0.0               # how long loading took

    @property
    def windowed(self) -> bool:
        return self.batches is not None


@dataclass
class DerivedDecl:
    """A collection defined by the source text of an engine expression."""

    name: str
    body: str
    arrange: bool = True


# -- the live flow ----------------------------------------------------------------------------

@dataclass
class BuildInfo:
    """What building one derived declaration added to the flow."""

    operators: int = 0
    kinds: dict = field(default_factory=dict)    # kind -> count
    loops: list = field(default_factory=list)    # scope paths of the loops it created
    op_ids: tuple = ()

    def summary(self) -> str:
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


@dataclass
class FlowState:
    flow: Dataflow
    handles: dict[str, Handle]

    def feeds(self):
        return [(n, h.feed) for n, h in self.handles.items() if h.feed is not None]


@dataclass
class EpochLine:
    """What one epoch did: per declared collection ``(additions, retractions)``."""

    epoch: int
    seconds: float
    changes: dict            # name -> (plus, minus)
    window: dict | None = None   # {"position", "steps", "start", "end"} of the (first) feed
    report: Any = None       # the engine's StepReport

    def text(self) -> str:
        parts = [f"epoch {self.epoch}"]
        if self.window:
            w = self.window
            parts.append(f"window {w['position']}/{w['steps'] - 1} {w['span']}"
                         if w["position"] >= 0 else "window empty")
        parts += [f"{n} +{p:,} -{m:,}" for n, (p, m) in self.changes.items()]
        parts.append(f"{self.seconds * 1000:.1f} ms")
        return " | ".join(parts)


@dataclass
class StepResult:
    lines: list[EpochLine]
    note: str = ""

    @property
    def epochs(self) -> int:
        return len(self.lines)


# -- the session ----------------------------------------------------------------------------

class Session:
    """Declarations plus the live flow built from them.  Every mutating method either
    commits a complete new state or raises and leaves everything as it was."""

    def __init__(self, name: str = "ddlab", max_iterations: int = DEFAULT_MAX_ITERATIONS):
        self.name = name
        self.max_iterations = max_iterations
        self.inputs: dict[str, InputDecl] = {}
        self.derived: dict[str, DerivedDecl] = {}
        self.state = self._build({}, {}, {}, epochs=0, replay={}, positions={}, pending={})
        self.log: list[EpochLine] = []

    # -- lookups ------------------------------------------------------------------------
    @property
    def flow(self) -> Dataflow:
        return self.state.flow

    @property
    def names(self) -> list[str]:
        return list(self.inputs) + list(self.derived)

    def exported(self) -> dict[str, Collection]:
        """What the user's namespace should hold: name -> collection of the live flow."""
        return {n: h.collection for n, h in self.state.handles.items()}

    def handle(self, name: str) -> Handle:
        if name not in self.state.handles:
            raise self.unknown(name)
        return self.state.handles[name]

    def unknown(self, name: str, kind: str = "collection") -> SessionError:
        pool = self.names if kind == "collection" else list(self.inputs)
        hint = suggest(name, pool)
        declared = ", ".join(pool) if pool else "none yet"
        more = (f"{hint[0].upper()}{hint[1:]} " if hint else "") + f"Declared: {declared}."
        if not pool:
            more += " Declare one with %dd input NAME --from SOURCE."
        return SessionError(f"no {'input ' if kind == 'input' else ''}collection {name!r}.", more)

    def find(self, collection) -> str | None:
        """The declared name of a collection (or view) of the live flow, if any."""
        for n, h in self.state.handles.items():
            if collection is h.collection or collection is h.view or (
                    isinstance(collection, Collection) and collection.op is h.collection.op):
                return n
        return None

    def check_name(self, name: str, *, derived: bool) -> None:
        if not name.isidentifier() or keyword.iskeyword(name):
            raise SessionError(f"{name!r} is not a valid Python name for a collection.",
                               "Use letters, digits and underscores, e.g. edges or cc_2.")
        if name in RESERVED:
            raise SessionError(f"{name!r} is a %dd command and cannot name a collection.",
                               f"Pick another name, e.g. {name}_.")
        if derived and name in self.inputs:
            raise SessionError(f"{name!r} is already an input collection.",
                               f"Choose another name, or %dd drop {name} first.")
        if not derived and name in self.derived:
            raise SessionError(f"{name!r} is already a derived collection.",
                               f"Choose another name, or %dd drop {name} first.")

    def pending(self, name: str | None = None) -> int:
        """Updates queued on inputs (by declarations or insert/remove) that no step applied yet."""
        names = [name] if name else list(self.inputs)
        return sum(_pending_count(self.state.handles[n].collection) for n in names
                   if n in self.state.handles)

    # -- declarations ---------------------------------------------------------------------
    def declare_input(self, decl: InputDecl, namespace: dict, progress=None) -> FlowState:
        """Add (or replace) an input; its loaded records are queued for the next step."""
        self.check_name(decl.name, derived=False)
        inputs = dict(self.inputs)
        inputs[decl.name] = decl
        old = self.inputs.get(decl.name)
        state = self._rebuild(inputs, self.derived, namespace, progress, fresh={decl.name})
        self._commit(inputs, self.derived, state)
        if old is not None and old.batches is not None and old.batches is not decl.batches:
            try:
                old.batches.unpersist()
            except Exception:  # pragma: no cover - Spark already gone
                pass
        return state

    def declare_derived(self, decl: DerivedDecl, namespace: dict, progress=None,
                        first_step: bool = True) -> tuple[FlowState, StepResult | None]:
        """Add (or replace, in place) a derived collection, then compute its first result:
        one step if there are queued updates or a window still at its empty position."""
        self.check_name(decl.name, derived=True)
        derived = dict(self.derived)
        derived[decl.name] = decl          # a redefinition keeps its place in the order
        state = self._rebuild(self.inputs, derived, namespace, progress, what=decl.name)
        result = None
        if first_step:
            moves = {n: 1 for n, f in state.feeds() if f.position < 0 and len(f.batches)}
            if moves or _pending_any(state):
                progress = progress or NullProgress()
                progress.phase(f"first result of {decl.name}")
                try:
                    result = StepResult([self._step_once(state, moves)])
                except DataflowError as err:
                    raise SessionError(f"{decl.name}: computing its first result failed: "
                                       f"{_first_line(err)}",
                                       "Nothing was declared and the flow is as before; fix the "
                                       "definition (or its max_iterations) and retry.") from err
        self._commit(self.inputs, derived, state)
        if result:
            self.log.extend(result.lines)
        return state, result

    def drop(self, name: str, namespace: dict, progress=None) -> FlowState:
        if name not in self.inputs and name not in self.derived:
            raise self.unknown(name)
        inputs = {n: d for n, d in self.inputs.items() if n != name}
        derived = {n: d for n, d in self.derived.items() if n != name}
        try:
            state = self._rebuild(inputs, derived, namespace, progress)
        except SessionError:
            users = [n for n, d in self.derived.items() if n != name and _mentions(d.body, name)]
            if users:
                raise SessionError(f"cannot drop {name!r}: {', '.join(users)} "
                                   f"{'is' if len(users) == 1 else 'are'} defined from it.",
                                   f"Drop {', '.join(users)} first.") from None
            raise
        self._release(name)
        self._commit(inputs, derived, state)
        return state

    def rebuild(self, namespace: dict, progress=None, restart: bool = False) -> FlowState:
        """Rebuild the flow from the declarations: at the same epoch with the same contents
        (``restart=False``), or from scratch (epoch 0, windows empty, loaded rows queued)."""
        if restart:
            state = self._build(self.inputs, self.derived, namespace, epochs=0, replay={},
                                positions={}, pending={}, fresh=set(self.inputs),
                                progress=progress)
            self._commit(self.inputs, self.derived, state)
            self.log = []
            return state
        state = self._rebuild(self.inputs, self.derived, namespace, progress)
        self._commit(self.inputs, self.derived, state)
        return state

    def reset(self) -> None:
        """Forget every declaration; a new empty flow at epoch 0."""
        for name in list(self.inputs):
            self._release(name)
        self.inputs, self.derived, self.log = {}, {}, []
        self.state = self._build({}, {}, {}, epochs=0, replay={}, positions={}, pending={})

    # -- epochs -----------------------------------------------------------------------------
    def step(self, n: int = 1, progress=None) -> StepResult:
        """Move every window ``n`` positions (``n < 0``: backward), one epoch per position;
        queued rows join the first epoch.  Without windows, or with ``n == 0``: one epoch
        applying the queued rows.  Stops early at a window's end (the note says so)."""
        state = self.state
        feeds = state.feeds()
        progress = progress or NullProgress()
        lines, note = [], ""
        if not feeds or n == 0:
            try:
                lines.append(self._step_once(state, {}))
            except DataflowError as err:
                raise self._step_failed(err, []) from err
        else:
            direction = 1 if n > 0 else -1
            total = abs(n)
            progress.phase("stepping", total)
            try:
                self._step_many(state, feeds, direction, total, lines, progress)
            finally:
                self.log.extend(lines)
            if len(lines) < total:
                where = "the last window position" if direction > 0 else "the empty window"
                note = f"stopped after {len(lines)} of {total} steps: already at {where}."
            return StepResult(lines, note)
        self.log.extend(lines)
        return StepResult(lines, note)

    def _step_many(self, state, feeds, direction, total, lines, progress) -> None:
        for i in range(total):
            moves = {}
            for name, feed in feeds:
                if direction > 0 and not feed.at_end:
                    moves[name] = 1
                elif direction < 0 and feed.position >= 0:
                    moves[name] = -1
            if not moves:
                return
            try:
                lines.append(self._step_once(state, moves))
            except DataflowError as err:
                raise self._step_failed(err, lines) from err
            progress.advance(i + 1, total)

    def _step_failed(self, err, done) -> SessionError:
        lost = getattr(err, "discarded_updates", None) or {}
        n = sum(len(v) for v in lost.values())
        before = f" after {len(done)} good epoch{'s' if len(done) != 1 else ''}" if done else ""
        return SessionError(
            f"epoch {self.flow.epoch} failed{before} and was rolled back: {_first_line(err)}",
            f"Every collection reads as before it; its {n:,} input update{'s' if n != 1 else ''} "
            f"{'were' if n != 1 else 'was'} discarded and the windows did not move.")

    def seek(self, position: int, progress=None) -> StepResult:
        """Move every window straight to ``position`` in one epoch (-1 = empty)."""
        feeds = self.state.feeds()
        if not feeds:
            raise SessionError("--to moves a window, but no input has one.",
                               "Declare one with %dd input NAME --from SOURCE --window 7d --step 1d.")
        steps = min(len(f.batches) for _, f in feeds)
        if not -1 <= position < steps:
            raise SessionError(f"window position {position} is out of range -1..{steps - 1}.",
                               "-1 is the empty window, 0 the first one.")
        try:
            line = self._step_once(self.state, {}, seek=position)
        except DataflowError as err:
            raise self._step_failed(err, []) from err
        self.log.append(line)
        return StepResult([line])

    def insert(self, name: str, rows, diff: int, step: bool = True) -> StepResult | None:
        """Queue rows (a list of tuples or a DataFrame) with ``diff`` +1 or -1; step once."""
        if name not in self.inputs:
            if name in self.derived:
                ins = [n for n in self.inputs if _mentions(self.derived[name].body, n)]
                raise SessionError(f"{name!r} is derived; only inputs take rows.",
                                   f"Change one of its inputs instead ({', '.join(ins) or 'see %dd status'}).")
            raise self.unknown(name, "input")
        inp = self.state.handles[name].collection
        cols = self.inputs[name].columns
        if isinstance(rows, pd.DataFrame):
            missing = [c for c in cols if c not in rows.columns]
            if missing:
                hint = suggest(missing[0], rows.columns)
                raise SessionError(
                    f"the DataFrame lacks column {missing[0]!r} of input {name!r} "
                    f"(needs {', '.join(cols)}; has {', '.join(map(str, rows.columns))}).",
                    (hint[0].upper() + hint[1:] + " " if hint else "") +
                    "Rename its columns, e.g. df.rename(columns={...}).")
            rows = rows[cols]
        else:
            rows = list(rows)
            for i, r in enumerate(rows):
                arity = len(r) if isinstance(r, tuple) else 1
                if arity != len(cols):
                    raise SessionError(
                        f"row {i} {r!r} has {arity} field{'s' if arity != 1 else ''}; input "
                        f"{name!r} has {len(cols)} ({', '.join(cols)}).",
                        "Give one tuple per record, e.g. [(1, 2), (2, 3)].")
        try:
            if diff > 0:
                inp.insert(rows)
            else:
                inp.remove(rows)
        except DataflowError as err:
            raise SessionError(f"{name}: {_first_line(err)}",
                               "The rows were not queued; fix them and retry.") from err
        if not step:
            return None
        try:
            line = self._step_once(self.state, {})
        except DataflowError as err:
            raise self._step_failed(err, []) from err
        self.log.append(line)
        return StepResult([line])

    # -- internals: stepping ------------------------------------------------------------------
    def _step_once(self, state: FlowState, moves: dict, seek: int | None = None) -> EpochLine:
        """One epoch: move the given feeds (name -> +1/-1) or seek all, then ``flow.step()``.
        If the engine rolls the epoch back, the feeds' positions are restored too."""
        feeds = dict(state.feeds())
        # fetch every batch first, so a failing fetch leaves nothing queued
        for n, d in moves.items():
            f = feeds[n]
            f.batches.batch(f.position + 1 if d > 0 else f.position)
        start = time.perf_counter()
        try:
            for n, d in moves.items():
                (feeds[n].forward if d > 0 else feeds[n].backward)(1)
            if seek is not None:
                for f in feeds.values():
                    f.seek(min(seek, len(f.batches) - 1), combine=True)
            report = state.flow.step()
        except BaseException:
            for feed in feeds.values():
                feed.undo()
            raise
        seconds = time.perf_counter() - start
        changes = {}
        for n, h in state.handles.items():
            ch = h.view.changes()
            d = ch["diff"] if "diff" in ch else pd.Series(dtype="int64")
            changes[n] = (int((d > 0).sum()), int((d < 0).sum()))
        window = None
        if feeds:
            name, f = next(iter(feeds.items()))
            window = {"position": f.position, "steps": len(f.batches),
                      "input": name, "span": ""}
            if f.position >= 0:
                s, e = f.window
                window.update(start=s, end=e, span=f.span())
        return EpochLine(report.epoch, seconds, changes, window, report)

    # -- internals: building ------------------------------------------------------------------
    def _rebuild(self, inputs, derived, namespace, progress=None, fresh=frozenset(),
                 what: str | None = None) -> FlowState:
        """A new flow for these declarations, at the live flow's epoch and contents."""
        old = self.state
        replay, positions, pending = {}, {}, {}
        for name, h in old.handles.items():
            if name in inputs and name not in fresh and isinstance(h.collection, InputCollection):
                frame = h.view.to_pandas()
                replay[name] = frame.rename(columns={"multiplicity": "diff"})
                pending[name] = _pending_updates(h.collection)
                if h.feed is not None:
                    positions[name] = (h.feed.position, h.feed.epochs)
        return self._build(inputs, derived, namespace, epochs=old.flow.epoch, replay=replay,
                           positions=positions, pending=pending, fresh=fresh, progress=progress,
                           what=what)

    def _build(self, inputs, derived, namespace, *, epochs, replay, positions, pending,
               fresh=frozenset(), progress=None, what: str | None = None) -> FlowState:
        from ddlab.sources.feed import WindowFeed

        progress = progress or NullProgress()
        flow = Dataflow(self.name, max_iterations=self.max_iterations)
        handles: dict[str, Handle] = {}
        for name, decl in inputs.items():
            inp = flow.input(name, columns=list(decl.columns))
            handles[name] = Handle(inp, inp.view(name=f"view {name}"))
        # empty epochs up to the one that replays the contents (only inputs exist yet: cheap)
        for _ in range(max(0, epochs - 1)):
            flow.step()
        for name, decl in derived.items():
            handles[name] = self._build_derived(flow, decl, handles, derived, namespace)
        if epochs > 0:
            rows = 0
            for name, frame in replay.items():
                if len(frame):
                    handles[name].collection.update(frame)
                    rows += len(frame)
            if rows and derived:
                progress.phase(f"replaying {rows:,} input records through "
                               f"{len(flow.operators):,} operators")
            try:
                flow.step()
            except DataflowError as err:
                raise SessionError(f"{what + ': ' if what else ''}recomputing the flow from the "
                                   f"current inputs failed: {_first_line(err)}",
                                   "Nothing changed; fix the definition and run the cell again."
                                   ) from err
        for name, decl in inputs.items():
            h = handles[name]
            if decl.windowed:
                # the session closes the epoch itself: several feeds and queued rows make one
                # epoch, and feed positions are restored if the engine rolls it back
                h.feed = WindowFeed(decl.batches, h.collection, flow=flow, step=False)
                if name in positions and name not in fresh:
                    h.feed.position, h.feed.epochs = positions[name]
            if name in fresh:
                if decl.initial is not None and len(decl.initial):
                    h.collection.update(decl.initial)
            if pending.get(name) and name not in fresh:
                h.collection.update(pending[name])
        return FlowState(flow, handles)

    def _build_derived(self, flow, decl: DerivedDecl, handles, derived, namespace) -> Handle:
        ns = _algorithm_names()
        ns.update(namespace)
        for other in derived:          # later declarations are not visible, stale ones neither
            ns.pop(other, None)
        # Collections of other flows (the live one included) must not be used: evaluating
        # on them would register operators there.  Mask them with a clear error.
        for key, value in list(ns.items()):
            if isinstance(value, Collection) and value.flow is not flow:
                ns[key] = _Unavailable(key, decl.name, value.flow is self.state.flow
                                       and key not in inputs_and_derived(self))
        ns.update({n: h.collection for n, h in handles.items()})
        before = len(flow.operators)
        value = _evaluate(decl.body, ns, decl.name)
        if isinstance(value, ddlab.View):
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
            raise SessionError(f"{decl.name}: {_first_line(err)}") from err
        ops, _ = flow.graph()
        new = ops[ops["id"] >= before]
        kinds = new["kind"].value_counts().to_dict()
        loops = sorted({s for s in new["scope"] if s != "root"})
        info = BuildInfo(len(new), {k: int(v) for k, v in kinds.items()}, loops,
                         tuple(int(i) for i in new["id"]))
        return Handle(coll, view, info=info)

    def _commit(self, inputs, derived, state: FlowState) -> None:
        self.inputs, self.derived, self.state = dict(inputs), dict(derived), state

    def _release(self, name: str) -> None:
        decl = self.inputs.get(name)
        if decl is not None and decl.batches is not None:
            try:
                decl.batches.unpersist()
            except Exception:  # pragma: no cover - Spark already gone
                pass


# -- helpers --------------------------------------------------------------------------------

def inputs_and_derived(session) -> set:
    return set(session.inputs) | set(session.derived)


class _Unavailable:
    """Stands in, while a body is evaluated, for a namespace collection that is not a
    declaration of the flow being built; any use raises a clear SessionError."""

    def __init__(self, name: str, building: str, python_built: bool):
        self._name, self._building, self._python = name, building, python_built

    def _fail(self):
        if self._python:
            return SessionError(
                f"{self._building}: {self._name!r} is a collection of the running dataflow "
                f"built in Python; a %%dd body can only use declared collections.",
                f"Declare it with %%dd {self._name} (its expression as the body), then use it.")
        return SessionError(
            f"{self._building}: {self._name!r} is not a declared collection here (dropped, "
            f"declared later, or from another dataflow).",
            "Use the declared collections (see %dd status).")

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise self._fail()

    def __repr__(self):
        return f"<unavailable collection {self._name}>"


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def _pending_count(inp) -> int:
    return inp.pending_count


def _pending_updates(inp) -> list:
    return inp.pending_updates() if inp.pending_count else []


def _pending_any(state: FlowState) -> bool:
    return any(_pending_count(h.collection) for h in state.handles.values()
               if isinstance(h.collection, InputCollection))


def _mentions(body: str, name: str) -> bool:
    try:
        return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(ast.parse(body)))
    except SyntaxError:
        return name in body


_ALGOS: dict | None = None


def _algorithm_names() -> dict:
    global _ALGOS
    if _ALGOS is None:
        from ddlab import algorithms

        _ALGOS = {n: getattr(algorithms, n) for n in algorithms.__all__}
    return dict(_ALGOS)


def _evaluate(body: str, ns: dict, name: str):
    """Run the cell body; its value is the last expression (or what it assigned to ``name``)."""
    try:
        tree = ast.parse(body, filename=f"<%%dd {name}>")
    except SyntaxError as err:
        where = f"line {err.lineno}" if err.lineno else "the body"
        raise SessionError(f"{name}: syntax error at {where}: {err.msg}.",
                           "The cell body is Python: an expression such as "
                           "connected_components(edges).") from None
    if not tree.body:
        raise SessionError(f"{name}: the cell body is empty.",
                           "Write an expression over declared collections, e.g. "
                           "connected_components(edges).")
    last = tree.body[-1]
    try:
        if isinstance(last, ast.Expr):
            head = ast.Module(body=tree.body[:-1], type_ignores=[])
            exec(compile(head, f"<%%dd {name}>", "exec"), ns)
            return eval(compile(ast.Expression(last.value), f"<%%dd {name}>", "eval"), ns)
        exec(compile(tree, f"<%%dd {name}>", "exec"), ns)
    except SessionError:
        raise
    except NameError as err:
        missing = getattr(err, "name", None)
        if not missing and "'" in str(err):
            missing = str(err).split("'")[1]
        pool = [k for k, v in ns.items() if not k.startswith("_")]
        hint = suggest(missing, pool) if missing else None
        raise SessionError(f"{name}: the cell body raised NameError: {err}.",
                           (hint[0].upper() + hint[1:] + " " if hint else "") +
                           "Collections declared later, or dropped, are not visible.") from err
    except DataflowError as err:
        raise SessionError(f"{name}: the engine refused the body: {_first_line(err)}",
                           "Nothing was declared.") from err
    except Exception as err:
        raise SessionError(f"{name}: the cell body raised {type(err).__name__}: "
                           f"{_first_line(err)}", "Nothing was declared; fix the body and "
                           "run the cell again.") from err
    if name in ns:
        return ns[name]
    raise SessionError(f"{name}: the cell must end with an expression (or assign {name}).",
                       "E.g. end the cell with connected_components(edges).")
