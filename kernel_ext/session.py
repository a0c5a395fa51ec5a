"""The kernel-side state behind the magics: the declarations and the live flow built from them.

Nothing here knows about IPython: a :class:`Session` is driven with a namespace dict and
returns plain result objects, so it can be tested (and scripted) without a shell.

Every mutating method either commits a complete new state or raises a
:class:`~.messages.SessionError` and leaves everything as it was: a changed declaration is
built beside the running flow (:mod:`.build`) and swapped in only when everything worked,
so no operator of a failed declaration stays registered anywhere.  Epochs are closed by
:mod:`.epochs`; the window feeds own their positions.

>>> s = Session()
>>> _ = s.declare_input(InputDecl("nums", ["n"]), {})
>>> print(s.insert("nums", [1, 2, 2], +1).lines[0].text()[:17])
epoch 0 | nums +2
>>> s.handle("nums").view.to_dict()
{1: 1, 2: 2}
"""
from __future__ import annotations

import keyword

import pandas as pd

from ddlab.engine import DEFAULT_MAX_ITERATIONS, Collection, Dataflow, DataflowError

from .build import FlowState, Handle, Snapshot, build_flow
from . import declarations
from .declarations import DerivedDecl, InputDecl, mentions
from .epochs import EpochLine, StepResult, step_failed, step_once
from .messages import SessionError, first_line, hint, suggest
from .progress import NullProgress

__all__ = ["Session"]


class Session:
    """Declarations plus the live flow built from them."""

    def __init__(self, name: str = "ddlab", max_iterations: int = DEFAULT_MAX_ITERATIONS,
                 workers: int | None = None):
        self.name = name
        self.max_iterations = max_iterations
        #: the flows' data-parallel workers (``None``: ``DDLAB_WORKERS``, else 1)
        self.workers = workers
        self.inputs: dict[str, InputDecl] = {}
        self.derived: dict[str, DerivedDecl] = {}
        self._listeners: list = []          # called when a new flow replaces the live one
        self._epoch_listeners: list = []    # called after epochs closed by this session
        self.state = self._build({}, {}, {}, Snapshot())
        self.log: list[EpochLine] = []

    def on_new_flow(self, callback) -> None:
        """Call ``callback(state)`` whenever a declaration, drop, rebuild or reset replaces the
        live flow (e.g. so an explorer of the old flow stops and says so); a callback that
        returns True is not called again."""
        self._listeners.append(callback)

    def on_epochs(self, callback) -> None:
        """Call ``callback(state)`` after the session closed epochs (step, seek, insert), e.g.
        so an explorer of the same feed catches up; a callback returning True is dropped."""
        self._epoch_listeners.append(callback)

    def _epochs_closed(self) -> None:
        self._epoch_listeners = [cb for cb in self._epoch_listeners if not cb(self.state)]

    def _replace_state(self, state: FlowState) -> None:
        old, self.state = self.state, state
        if state.flow is not old.flow:
            old.flow.close()  # (its worker processes, if any)
            self._listeners = [cb for cb in self._listeners if not cb(state)]

    # -- lookups ------------------------------------------------------------------------
    @property
    def flow(self) -> Dataflow:
        return self.state.flow

    @property
    def names(self) -> list[str]:
        """Declared names, inputs first, each group in declaration order."""
        return list(self.inputs) + list(self.derived)

    def exported(self) -> dict[str, Collection]:
        """What the user's namespace should hold: name -> collection of the live flow."""
        return {n: h.collection for n, h in self.state.handles.items()}

    def handle(self, name: str) -> Handle:
        """The live handle of a declared name (or a SessionError naming the closest)."""
        if name not in self.state.handles:
            raise self.unknown(name)
        return self.state.handles[name]

    def unknown(self, name: str, kind: str = "collection") -> SessionError:
        """The error for a name that is not declared (``kind="input"``: not an input)."""
        pool = self.names if kind == "collection" else list(self.inputs)
        declared = ", ".join(pool) if pool else "none yet"
        more = hint(suggest(name, pool), f"Declared: {declared}.")
        if not pool:
            more += " Declare one with %dd input NAME --from SOURCE."
        return SessionError(f"no {'input ' if kind == 'input' else ''}collection {name!r}.", more)

    def find(self, collection) -> str | None:
        """The declared name of a collection (or view) of the live flow, if any."""
        for n, h in self.state.handles.items():
            if collection is h.collection or collection is h.view or (
                    isinstance(collection, Collection) and collection.flow is self.flow
                    and collection.id == h.collection.id):
                return n
        return None

    def check_name(self, name: str, *, derived: bool) -> None:
        """Refuse a name that is not a Python identifier, a command, or declared as the
        other kind."""
        if not name.isidentifier() or keyword.iskeyword(name):
            raise SessionError(f"{name!r} is not a valid Python name for a collection.",
                               "Use letters, digits and underscores, e.g. edges or cc_2.")
        if name in declarations.RESERVED:
            raise SessionError(f"{name!r} is a %dd command and cannot name a collection.",
                               f"Pick another name, e.g. {name}_.")
        other = self.inputs if derived else self.derived
        if name in other:
            raise SessionError(f"{name!r} is already {'an input' if derived else 'a derived'} "
                               f"collection.", f"Choose another name, or %dd drop {name} first.")

    def pending(self, name: str | None = None) -> int:
        """Updates queued on inputs (by declarations or insert/remove) that no step applied yet."""
        names = [name] if name else list(self.inputs)
        return sum(self.state.handles[n].collection.pending_count for n in names
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
        if old is not None and old.batches is not decl.batches:
            old.release()
        return state

    def checkpoint_metadata(self) -> dict:
        """What ``%dd save`` writes beside the inputs' contents (plain JSON): each input's
        columns, description, re-readable load options and window position, and each derived
        declaration's source text (for the record: ``%dd load`` never runs it)."""
        inputs = []
        for name, decl in self.inputs.items():
            feed = self.state.handles[name].feed
            inputs.append({"name": name, "columns": list(decl.columns), "source": decl.source,
                           "request": decl.request,
                           "position": None if feed is None else feed.position,
                           "moves": None if feed is None else feed.epochs})
        derived = [{"name": d.name, "body": d.body, "arrange": d.arrange}
                   for d in self.derived.values()]
        return {"format": "ddlab-session", "version": 1, "inputs": inputs, "derived": derived}

    def restore(self, inputs: dict, frames: dict, positions: dict, epochs: int,
                namespace: dict, progress=None) -> FlowState:
        """Replace the inputs by ``inputs`` holding ``frames`` (fields + ``diff``) after
        ``epochs`` epochs, windows at ``positions`` (name -> (position, moves)); this
        session's derived declarations are rebuilt on them.  All or nothing."""
        for name in inputs:
            self.check_name(name, derived=False)
        clash = [n for n in inputs if n in self.derived]
        if clash:
            raise SessionError(f"cannot restore input {clash[0]!r}: this session declares a "
                               f"derived collection of that name.",
                               f"%dd drop {clash[0]} first (or %dd reset).")
        snapshot = Snapshot(epochs=epochs, replay=frames, positions=positions)
        state = self._build(inputs, self.derived, namespace, snapshot, progress=progress,
                            what="restoring the checkpoint")
        old = dict(self.inputs)
        self._commit(inputs, self.derived, state)
        self.log = []
        for name, decl in old.items():
            if inputs.get(name) is None or inputs[name].batches is not decl.batches:
                decl.release()
        return state

    def declare_derived(self, decl: DerivedDecl, namespace: dict, progress=None,
                        first_step: bool = True) -> tuple[FlowState, StepResult | None]:
        """Add (or replace, in place) a derived collection, then compute its first result:
        one step if there are queued updates or a window still at its empty position."""
        return self.declare_many([decl], namespace, progress, first_step)

    def declare_many(self, decls: list, namespace: dict, progress=None, first_step: bool = True,
                     retire=()) -> tuple[FlowState, StepResult | None]:
        """:meth:`declare_derived` for several declarations at once (one rebuild, all or
        none: a ``%%dd rules`` cell's outputs), dropping the ``retire`` names in the same
        rebuild (outputs an edited cell no longer has)."""
        for decl in decls:
            self.check_name(decl.name, derived=True)
        derived = {n: d for n, d in self.derived.items() if n not in retire}
        for decl in decls:
            derived[decl.name] = decl      # a redefinition keeps its place in the order
        what = ", ".join(d.name for d in decls)
        state = self._rebuild(self.inputs, derived, namespace, progress, what=what)
        result = None
        if first_step:
            moves = {n: 1 for n, f in state.feeds() if f.position < 0 and f.steps}
            if moves or state.pending_any():
                (progress or NullProgress()).phase(f"first result of {what}")
                try:
                    result = StepResult([step_once(state, moves)])
                except DataflowError as err:
                    raise SessionError(f"{what}: computing the first result failed: "
                                       f"{first_line(err)}",
                                       "Nothing was declared and the flow is as before; fix the "
                                       "definition (or its max_iterations) and retry.") from err
        self._commit(self.inputs, derived, state)
        if result:
            self.log.extend(result.lines)
        return state, result

    def drop(self, name: str, namespace: dict, progress=None) -> FlowState:
        """Forget a declaration; the flow is rebuilt without it (refused while others use it)."""
        if name not in self.inputs and name not in self.derived:
            raise self.unknown(name)
        inputs = {n: d for n, d in self.inputs.items() if n != name}
        derived = {n: d for n, d in self.derived.items() if n != name}
        try:
            state = self._rebuild(inputs, derived, namespace, progress)
        except SessionError:
            users = [n for n, d in self.derived.items() if n != name and mentions(d.body, name)]
            if users:
                raise SessionError(f"cannot drop {name!r}: {', '.join(users)} "
                                   f"{'is' if len(users) == 1 else 'are'} defined from it.",
                                   f"Drop {', '.join(users)} first.") from None
            raise
        if name in self.inputs:
            self.inputs[name].release()
        self._commit(inputs, derived, state)
        return state

    def rebuild(self, namespace: dict, progress=None, restart: bool = False) -> FlowState:
        """Rebuild the flow from the declarations: at the same epoch with the same contents
        (``restart=False``), or from scratch (epoch 0, windows empty, loaded rows queued)."""
        if restart:
            state = self._build(self.inputs, self.derived, namespace, Snapshot(),
                                fresh=set(self.inputs), progress=progress)
            self._commit(self.inputs, self.derived, state)
            self.log = []
            return state
        state = self._rebuild(self.inputs, self.derived, namespace, progress)
        self._commit(self.inputs, self.derived, state)
        return state

    def reset(self, workers: int | None = None) -> None:
        """Forget every declaration; a new empty flow at epoch 0 (on ``workers`` workers
        from now on, when given)."""
        if workers is not None:
            from ddlab.engine.workers import resolve_workers

            self.workers = resolve_workers(workers)
        for decl in self.inputs.values():
            decl.release()
        self.inputs, self.derived, self.log = {}, {}, []
        self._replace_state(self._build({}, {}, {}, Snapshot()))

    # -- epochs -----------------------------------------------------------------------------
    def step(self, n: int = 1, progress=None) -> StepResult:
        """Move every window ``n`` positions (``n < 0``: backward), one epoch per position;
        queued rows join the first epoch.  Without windows, or with ``n == 0``: one epoch
        applying the queued rows.  Stops early at a window's end (the note says so)."""
        feeds = self.state.feeds()
        if not feeds or n == 0:
            return self._one_epoch({})
        direction, total = (1 if n > 0 else -1), abs(n)
        progress = progress or NullProgress()
        progress.phase("stepping", total)
        lines: list[EpochLine] = []
        try:
            self._step_many(feeds, direction, total, lines, progress)
        finally:
            self.log.extend(lines)
            if lines:
                self._epochs_closed()
        note = ""
        if len(lines) < total:
            where = "the last window position" if direction > 0 else "the empty window"
            note = f"stopped after {len(lines)} of {total} steps: already at {where}."
        return StepResult(lines, note)

    def _step_many(self, feeds, direction, total, lines, progress) -> None:
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
                lines.append(step_once(self.state, moves))
            except DataflowError as err:
                raise step_failed(err, lines, self.flow.epoch) from err
            progress.advance(i + 1, total)

    def _one_epoch(self, moves: dict, seek: int | None = None) -> StepResult:
        try:
            line = step_once(self.state, moves, seek=seek)
        except DataflowError as err:
            raise step_failed(err, [], self.flow.epoch) from err
        self.log.append(line)
        self._epochs_closed()
        return StepResult([line])

    def seek(self, position: int, progress=None) -> StepResult:
        """Move every window straight to ``position`` in one epoch (-1 = empty)."""
        feeds = self.state.feeds()
        if not feeds:
            raise SessionError("--to moves a window, but no input has one.",
                               "Declare one with %dd input NAME --from SOURCE --window 7d "
                               "--step 1d.")
        steps = min(f.steps for _, f in feeds)
        if not -1 <= position < steps:
            raise SessionError(f"window position {position} is out of range -1..{steps - 1}.",
                               "-1 is the empty window, 0 the first one.")
        return self._one_epoch({}, seek=position)

    def insert(self, name: str, rows, diff: int, step: bool = True) -> StepResult | None:
        """Queue rows (a list of tuples or a DataFrame) with ``diff`` +1 or -1; step once
        unless ``step=False`` (then ``None``)."""
        if name not in self.inputs:
            if name in self.derived:
                ins = [n for n in self.inputs if mentions(self.derived[name].body, n)]
                raise SessionError(f"{name!r} is derived; only inputs take rows.",
                                   f"Change one of its inputs instead "
                                   f"({', '.join(ins) or 'see %dd status'}).")
            raise self.unknown(name, "input")
        inp = self.state.handles[name].collection
        rows = self._checked_rows(name, rows)
        try:
            if diff > 0:
                inp.insert(rows)
            else:
                inp.remove(rows)
        except DataflowError as err:
            raise SessionError(f"{name}: {first_line(err)}",
                               "The rows were not queued; fix them and retry.") from err
        return self._one_epoch({}) if step else None

    def _checked_rows(self, name: str, rows):
        """Rows in the input's field order, or a SessionError naming the first bad one."""
        cols = self.inputs[name].columns
        if isinstance(rows, pd.DataFrame):
            missing = [c for c in cols if c not in rows.columns]
            if missing:
                raise SessionError(
                    f"the DataFrame lacks column {missing[0]!r} of input {name!r} "
                    f"(needs {', '.join(cols)}; has {', '.join(map(str, rows.columns))}).",
                    hint(suggest(missing[0], rows.columns),
                         "Rename its columns, e.g. df.rename(columns={...})."))
            return rows[cols]
        rows = list(rows)
        for i, r in enumerate(rows):
            arity = len(r) if isinstance(r, tuple) else 1
            if arity != len(cols):
                raise SessionError(
                    f"row {i} {r!r} has {arity} field{'s' if arity != 1 else ''}; input "
                    f"{name!r} has {len(cols)} ({', '.join(cols)}).",
                    "Give one tuple per record, e.g. [(1, 2), (2, 3)].")
        return rows

    # -- internals: building ------------------------------------------------------------------
    def _rebuild(self, inputs, derived, namespace, progress=None, fresh=frozenset(),
                 what: str | None = None) -> FlowState:
        """A new flow for these declarations, at the live flow's epoch and contents."""
        snapshot = Snapshot.of(self.state, inputs, fresh)
        return self._build(inputs, derived, namespace, snapshot, fresh=fresh,
                           progress=progress, what=what)

    def _build(self, inputs, derived, namespace, snapshot, *, fresh=frozenset(), progress=None,
               what: str | None = None) -> FlowState:
        live = getattr(self, "state", None)
        return build_flow(self.name, self.max_iterations, inputs, derived, namespace, snapshot,
                          live=live, live_names=set(self.names), fresh=fresh,
                          progress=progress, what=what, workers=self.workers)

    def _commit(self, inputs, derived, state: FlowState) -> None:
        self.inputs, self.derived = dict(inputs), dict(derived)
        self._replace_state(state)
