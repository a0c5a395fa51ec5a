"""``flow.why(collection, record)``: which input records are sufficient for a result record.

The answer is computed on demand from what the engine keeps (traces of arrangements, reduce
outputs and inputs; see :mod:`.history`), by the backward rules of :mod:`.lineage`, and then
*checked*: the operators upstream of the collection are replayed from scratch on the
explanation's input records alone (:mod:`.replay`), and the record must come out with a
multiplicity of the same sign.  What is exact and what is a bound:

- the explanation returned is always sufficient (``verified``); its multiplicity on replay
  is reported (``reproduced``), equal to the current one when every step was exact;
- ``method="concise"``: one derivation per record, winners only for min/max/top-k,
  first iteration in loops; where an algorithm attached a witness to its result, the
  witness's records (an SCC edge: a shortest cycle through it, :mod:`.witness`), and if
  that fails its check, the operators' own rules.  Concise is a heuristic in one respect:
  a winner or a first-iteration derivation is sufficient when the program is monotone on
  the way (more input, never fewer results); programs with negation, ``except``,
  thresholds or aggregates feeding back into a loop can defeat it, and then the check
  fails and
- ``method="exact"``: every derivation of the record (whole groups all the way), sufficient
  whenever the program keeps no records that appear only on fewer inputs; and if even that
  check fails,
- ``method="all inputs"``: every record of every input upstream, trivially sufficient.
  The notes say which check failed.

Minimality: the concise explanation is small, not minimum: for label propagation it is a
path of the breadth-first search (its length is the node's distance to the winning label, in
plain propagation; in prioritized propagation the distance within the winning priority class,
which is also the graph distance because the component's minimum is never blocked).  An SCC
edge's witness is a minimum: no fewer edges than a shortest cycle through it keep it inside a
component.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

import pandas as pd

from ..collection import Collection
from ..errors import DataflowError, InputError
from ..lattice import display_time
from . import lineage, reading
from .gc_pause import collector_paused
from .history import Budget, Histories, as_record, record_pattern, user_form
from .replay import Replay

#: Rows an explanation may read before it stops and gives every upstream input instead.
DEFAULT_BUDGET = 2_000_000

#: ``nodes()``'s default: the operators whose class says ``shown_in_derivations`` (those that
#: compute something; the rest is plumbing: arrangements, loop edges).
SHOWN = "operators that compute"


#: how :meth:`Explanation.took` names the parts of its time
_PART_NAMES = {"trace": "tracing", "check": "checking", "collect": "collecting"}


@dataclass
class Explanation:
    """Why a record is (or is not) in a collection after the last completed epoch."""

    collection: str
    record: object
    epoch: int
    present: bool
    multiplicity: int = 0
    inputs: dict = field(default_factory=dict)       # input name -> DataFrame (+ multiplicity)
    method: str = ""                                 # concise | exact | all inputs
    verified: bool | None = None
    reproduced: int | None = None                    # the record's multiplicity on replay
    notes: list = field(default_factory=list)
    seconds: float = 0.0
    #: where :attr:`seconds` went: ``"trace"``, the backward tracing, and ``"check"``, the
    #: replays that checked it (for a record that is there; summed over the methods tried);
    #: ``"collect"``, the garbage collection the explanation's allocations cost at its end
    #: (:mod:`.gc_pause`).  The rest is reading whether the record is there and building the
    #: answer's frames.
    timings: dict = field(default_factory=dict, repr=False)
    steps: dict = field(default_factory=dict, repr=False)
    root: tuple | None = field(default=None, repr=False)
    previous: "Explanation | None" = field(default=None, repr=False)
    removed_by: dict = field(default_factory=dict)   # input name -> DataFrame of changes
    names: dict = field(default_factory=dict, repr=False)  # operator id -> declared name

    @property
    def size(self) -> int:
        """How many input records the explanation holds."""
        return sum(len(f) for f in self.inputs.values())

    def took(self) -> str:
        """How long it took and where that went: ``528 ms: tracing 379, checking 102`` (the
        parts of :attr:`timings` of at least a tenth of the whole)."""
        total = self.seconds * 1000
        parts = [f"{_PART_NAMES[k]} {v * 1000:.0f}" for k, v in self.timings.items()
                 if k in _PART_NAMES and v * 1000 >= total / 10]
        return f"{total:.0f} ms" + (f": {', '.join(parts)}" if parts else "")

    def records(self) -> dict:
        """``{input name: {record: multiplicity}}`` (records as the inputs hold them)."""
        return {name: {user_form(tuple(r[:-1])): int(r[-1])
                       for r in frame.itertuples(index=False, name=None)}
                for name, frame in self.inputs.items()}

    def freeze(self) -> "Explanation":
        """Keep the derivation as plain nodes and drop the references to operators (an
        explanation of the previous epoch would otherwise keep its replayed flow alive)."""
        if self.root is not None:
            self._frozen = self.nodes()
            self.steps, self.root = {}, None
        return self

    def nodes(self, shown: set | str | None = SHOWN, keep=None) -> list[dict]:
        """The derivation as a list of nodes ``{id, operator, label, kind, name, scope,
        records, time, exact, note, children}`` (children: ids), root first; ``shown``
        keeps only those operator kinds (plus the root; ``None``: every operator; default:
        :data:`SHOWN`), skipping
        plumbing in between, or ``keep(operator) -> bool`` decides (a rules compiler keeps
        the operators that produce each rule's head, and names them with ``names``).
        This is what a renderer (the explorer, a proof tree) reads (built with the garbage
        collector paused, as the explanation was: :mod:`.gc_pause`)."""
        with collector_paused():
            return self._nodes(shown, keep)

    def _nodes(self, shown, keep) -> list[dict]:
        if self.root is None:
            return list(getattr(self, "_frozen", []))
        ids: dict = {}
        out: list = []

        def visible(key):
            if key == self.root:
                return True
            if keep is not None:
                return bool(keep(self.steps[key].op))
            op = self.steps[key].op
            if shown is SHOWN:      # and a result with a witness: its note is the reason
                return op.shown_in_derivations or op.witness is not None
            return shown is None or op.kind in shown

        def below(key, seen):
            found = []
            for c in self.steps[key].children:
                if c in seen:
                    continue
                if visible(c):
                    found.append(c)
                else:
                    found.extend(below(c, seen | {c}))
            return list(dict.fromkeys(found))

        todo = deque([self.root])
        while todo:
            key = todo.popleft()
            if key in ids:
                continue
            ids[key] = len(ids)
            step = self.steps[key]
            op = step.op
            kinds = op.scope.coordinate_kinds[1:]
            shown_time = display_time(step.time, kinds) if step.time else ()
            out.append({"id": ids[key], "operator": op.id, "label": op.label, "kind": op.kind,
                        "name": self.names.get(op.id), "scope": op.scope.path,
                        "records": [user_form(r) for r in step.records],
                        "time": shown_time, "exact": step.exact, "note": step.note,
                        "children": below(key, {key})})
            todo.extend(out[-1]["children"])
        for node in out:
            node["children"] = [ids[c] for c in node["children"] if c in ids]
        return out

    def tree(self, max_depth: int = 12, max_children: int = 6) -> str:
        """The derivation as indented text, operator by operator (plumbing skipped)."""
        nodes = self.nodes()
        if not nodes:
            return ""
        by_id = {n["id"]: n for n in nodes}
        lines: list = []
        seen: set = set()

        def line(n):
            who = f"{n['name']}: {n['label']}" if n["name"] else n["label"]
            when = f" at {_when(n['time'])}" if n["time"] else ""
            recs = n["records"]
            what = repr(recs[0]) if len(recs) == 1 else f"{len(recs)} records"
            if n["kind"] == "input":
                return f"{who} {what}" + (f"  ({n['note']})" if len(recs) > 1 else "")
            return f"{who}{when}: {what}" + (f"  \u2190 {n['note']}" if n["note"] else "")

        def walk(i, depth, prefix):
            n = by_id[i]
            if depth > max_depth:
                lines.append(prefix + "...")
                return
            repeat = i in seen
            lines.append(prefix + line(n) + ("  (see above)" if repeat and n["children"] else ""))
            if repeat:
                return
            seen.add(i)
            kids = n["children"]
            for c in kids[:max_children]:
                walk(c, depth + 1, prefix + "  ")
            if len(kids) > max_children:
                lines.append(prefix + f"  ... {len(kids) - max_children} more")
        walk(0, 0, "")
        return "\n".join(lines)

    def summary(self) -> str:
        rec = repr(self.record)
        if not self.present:
            text = f"{rec} is not in {self.collection} after epoch {self.epoch}."
            if self.previous is not None:
                text += (f" It left on the last move: it was there after epoch "
                         f"{self.epoch - 1}.")
            return text
        parts = [f"{rec} is in {self.collection} after epoch {self.epoch} (multiplicity "
                 f"{self.multiplicity}): {self.size} input record(s) suffice"]
        parts.append(", ".join(f"{len(f)} of {n}" for n, f in self.inputs.items()) or "none")
        check = ("replayed from scratch on them alone: reproduced"
                 + ("" if self.reproduced == self.multiplicity
                    else f" with multiplicity {self.reproduced}")) if self.verified else \
            "not checked"
        return f"{parts[0]} ({parts[1]}; {self.method}; {check})."

    def __repr__(self) -> str:
        out = [self.summary()]
        for name, frame in self.inputs.items():
            out.append(f"{name}:\n{frame.head(20).to_string(index=False)}")
        tree = self.tree()
        if tree:
            out.append("derivation:\n" + tree)
        if self.previous is not None:
            out.append("after the previous epoch:\n" + repr(self.previous))
        for name, frame in self.removed_by.items():
            out.append(f"removed by these changes of {name}:\n{frame.to_string(index=False)}")
        out.extend(self.notes)
        return "\n".join(out)


def user_name(collection) -> str:
    """How the person who built ``collection`` calls it: the name it was given (an input, a
    named operator, a rules relation), else ``the result of loop 'root/cc'`` for a loop's
    output, else its label (``map#5``)."""
    op = collection.op
    if op.kind == "leave":
        return f"the result of loop {op.inputs[0].scope.path!r}"
    if op.name and op.name != op.kind:
        return op.name
    return op.label


def _fields(collection) -> list | None:
    """The field names of ``collection`` (``c0``, ``c1``... when unnamed), or ``None`` when
    the graph does not tell its arity without running anything."""
    if collection.columns:
        return list(collection.columns)
    kinds = reading.kinds_of(collection.op)
    return None if kinds is None else [f"c{j}" for j in range(len(kinds))]


def _when(t) -> str:
    """``iteration 3``, ``priority 0, iteration 2``; nested loops separated by ``;``."""
    return "; ".join(f"priority {c[0]}, iteration {c[1]}" if isinstance(c, tuple) else
                     f"iteration {c}" for c in t)


def _frames(flow, facts: dict) -> dict:
    """``{input name: DataFrame}`` of ``{input op id: {record: multiplicity}}``."""
    by_id = {op.id: op for op in flow.operators}
    out = {}
    for op_id, recs in sorted(facts.items()):
        recs = {r: m for r, m in recs.items() if m}
        if not recs:
            continue
        name = by_id[op_id].name
        arity = len(next(iter(recs)))
        cols = flow.inputs[name].columns if name in flow.inputs else None
        names = list(cols) if cols and len(cols) == arity else [f"c{j}" for j in range(arity)]
        rows = sorted(recs.items(), key=lambda rm: repr(rm[0]))
        frame = pd.DataFrame([r for r, _ in rows], columns=names)
        frame["multiplicity"] = [m for _, m in rows]
        out[name] = frame
    return out


def _upstream_inputs(flow, target) -> dict:
    """Every record of every input ``target`` depends on: ``{op id: {record: mult}}``."""
    cone = flow.upstream(target)
    hist = Histories(flow, budget=None)
    return {op.id: dict(hist.content(op, None, ())) for op in flow.operators
            if op.id in cone and op.kind == "input"}


def explain(flow, collection, record, *, verify: bool = True, budget: int | None = DEFAULT_BUDGET,
            names: dict | None = None) -> Explanation:
    """The explanation of ``record`` in ``collection`` (see the module docstring); the
    cyclic garbage collector is paused meanwhile (:mod:`.gc_pause` says why)."""
    with collector_paused():
        result = _explain(flow, collection, record, verify, budget, names)
        done = time.perf_counter()
    # the collection at the pause's end is part of what the caller waited for
    result.timings["collect"] = time.perf_counter() - done
    result.seconds += result.timings["collect"]
    return result


def _add_time(result: Explanation, part: str, began: float) -> None:
    """Add the seconds since ``began`` to ``result.timings[part]``."""
    result.timings[part] = result.timings.get(part, 0.0) + time.perf_counter() - began


def _explain(flow, collection, record, verify, budget, names) -> Explanation:
    start = time.perf_counter()
    if not hasattr(collection, "op"):
        raise DataflowError(f"why explains a Collection, not {type(collection).__name__} "
                            f"(pass the collection a view was made from)")
    op = collection.op
    if op.flow is not flow:
        raise DataflowError(f"{collection!r} belongs to another Dataflow")
    if op.scope.parent is not None:
        raise DataflowError(f"{op.label} is inside loop {op.scope.path!r}; explain a collection "
                            "outside loops (use leave())")
    if flow.epoch == 0:
        raise DataflowError("no epoch has completed yet: step() first")
    rec = as_record(record)
    label = user_name(collection)
    fields = _fields(collection)
    if fields is not None and len(rec) != len(fields):
        raise InputError(f"why: the record {record!r} has {len(rec)} field"
                         f"{'s' if len(rec) != 1 else ''}, where {label} has {len(fields)} "
                         f"({', '.join(fields)})")
    hist = Histories(flow, budget=None)      # whether it is there at all: read what it takes
    mult = hist.content(op, record_pattern([rec]), ())[rec]
    result = Explanation(label, record, flow.epoch - 1, bool(mult), int(mult),
                         names=dict(names or {}))
    if not mult:
        _explain_departure(flow, op, rec, result, verify, budget)
        result.seconds = time.perf_counter() - start
        return result
    replayer = None
    # an algorithm's witness first (:mod:`.witness`); if its check fails, the operators' rules
    attempts = [("concise", False, True), ("exact", True, False)]
    while attempts:
        method, exact, witnesses = attempts.pop(0)
        tracer = lineage.Tracer(flow, Histories(flow, budget), exact_only=exact,
                                witnesses=witnesses)
        began = time.perf_counter()
        try:
            tracer.run(op, rec)
        except Budget as err:
            result.notes.append(f"the {method} explanation stopped: it {err} (budget "
                                f"{budget:,}; why(..., budget=None) lifts it)")
            continue
        except LookupError as err:  # pragma: no cover - the rules found no derivation
            result.notes.append(f"the {method} explanation failed: {err}")
            continue
        finally:
            _add_time(result, "trace", began)
        facts = tracer.facts
        if verify:
            if replayer is None:
                replayer = _Replayer(flow, op)
            began = time.perf_counter()
            try:
                got = replayer.multiplicity(facts, rec)
            except DataflowError as err:   # e.g. a loop that cycles on fewer inputs
                result.notes.append(f"the {method} explanation's replay failed: "
                                    f"{type(err).__name__}: {str(err).splitlines()[0]}")
                continue
            finally:
                _add_time(result, "check", began)
            if got * mult <= 0:
                size = sum(map(len, facts.values()))
                if tracer.witnessed:
                    result.notes.append(
                        f"the witness of {', '.join(tracer.witnessed)} ({size} records) did "
                        f"not reproduce the record on replay (multiplicity {got}): explained "
                        f"by the operators' own rules instead")
                    attempts.insert(0, ("concise", False, False))
                    continue
                result.notes.append(
                    f"the {method} explanation ({size} records) did "
                    f"not reproduce the record on replay (multiplicity {got}): the program is "
                    f"not monotone on its way")
                continue
            result.verified, result.reproduced = True, got
        result.method, result.steps, result.root = method, tracer.steps, tracer.root_key
        result.inputs = _frames(flow, facts)
        result.seconds = time.perf_counter() - start
        return result
    facts = _upstream_inputs(flow, op)
    result.method = "all inputs"
    result.inputs = _frames(flow, facts)
    result.verified = True if verify else None
    result.reproduced = mult if verify else None
    result.seconds = time.perf_counter() - start
    return result


#: A record that left is blamed on a minimal set of the move's changes when the move made
#: at most this many (one replay per change tried); above, on all of them that touch it.
MINIMISE_CHANGES = 64


def _records_of(frame: pd.DataFrame) -> dict:
    """``{record tuple: diff}`` of a frame of fields + ``diff`` (or ``multiplicity``)."""
    out: dict = {}
    for row in frame.itertuples(index=False, name=None):
        rec = tuple(row[:-1])
        out[rec] = out.get(rec, 0) + int(row[-1])
    return {r: m for r, m in out.items() if m}


def previous_inputs(flow, cone) -> tuple[dict, dict]:
    """``(inputs before the last epoch, the last epoch's changes)`` of the inputs in
    ``cone`` (operator ids), each ``{input name: {record: multiplicity or diff}}``: the
    current contents less what the last epoch applied (:meth:`Dataflow.input_changes`)."""
    changes = {name: _records_of(frame) for name, frame in flow.input_changes().items()
               if flow.inputs[name].id in cone}
    hist = Histories(flow, budget=None)
    before = {o.name: dict(hist.content(o, None, ())) for o in flow.operators
              if o.id in cone and o.kind == "input"}
    for name, delta in changes.items():
        for r, d in delta.items():
            m = before[name].get(r, 0) - d
            if m:
                before[name][r] = m
            else:
                before[name].pop(r, None)
    return before, changes


def _explain_departure(flow, op, rec, result, verify, budget) -> None:
    """If ``rec`` was in ``op``'s collection after the previous epoch, explain it there (on
    a replay of the previous epoch's inputs) and find which of the last move's input
    changes removed it."""
    if flow.epoch < 2:
        return
    before, changes = previous_inputs(flow, flow.upstream(op))
    if not changes:
        return
    previous = Replay(flow, op)
    by_id = {o.id: o for o in flow.operators}
    try:
        if previous.run(before).get(rec, 0) == 0:
            return
    except DataflowError as err:  # pragma: no cover - it converged in the live flow
        result.notes.append(f"replaying the previous epoch failed: {err}")
        return
    names = {previous.copy_of(by_id[i]).id: n for i, n in result.names.items()
             if i in by_id and by_id[i].id in previous.copied}
    earlier = explain(previous.flow, previous.target, result.record, verify=verify,
                      budget=budget, names=names)
    earlier.collection, earlier.epoch = result.collection, result.epoch - 1
    result.previous = earlier.freeze()
    used = {n: set(map(as_record, recs)) for n, recs in earlier.records().items()}

    def gone(records: dict, chosen: list) -> bool:
        """Whether ``rec`` is absent when the program runs on the previous epoch's
        multiplicities of ``records`` with the ``chosen`` changes applied."""
        base = {n: {r: before.get(n, {}).get(r, 0) for r in recs} for n, recs in records.items()}
        for n, r, d in chosen:
            base.setdefault(n, {})
            base[n][r] = base[n].get(r, 0) + d
        base = {n: {r: m for r, m in v.items() if m} for n, v in base.items()}
        try:
            return Replay(flow, op).run(base).get(rec, 0) == 0
        except DataflowError:
            return False

    def candidates(records: dict) -> list:
        return [(n, r, d) for n, delta in changes.items() for r, d in delta.items()
                if r in records.get(n, ())]

    # the previous explanation alone (a removed record of it), then with the explanations of
    # what holds the record's key now (a smaller label that arrived through new edges)
    scopes = [used]
    holders = [r for r in Histories(flow, budget=None).content(
        op, frozenset([((0, rec[0]),)]), ()) if r != rec][:3]
    if holders:
        wider = {n: set(v) for n, v in used.items()}
        for other in holders:
            now = explain(flow, _collection_of(op), other, verify=False, budget=budget)
            for n, recs in now.records().items():
                wider.setdefault(n, set()).update(map(as_record, recs))
        scopes.append(wider)
    cause, shown = None, None
    for records in scopes:
        moved = candidates(records)
        if moved and len(moved) <= MINIMISE_CHANGES and gone(records, moved):
            cause = moved
            for item in list(moved):
                trial = [c for c in cause if c != item]
                if trial and gone(records, trial):
                    cause = trial
            shown = ("the changes shown remove it: replayed on the previous epoch's records of "
                     "its explanation" + (" and of what holds its key now" if records is not used
                                          else "") +
                     ", with them applied the record is gone, and with any one of them left "
                     "out it is not")
            break
    if cause is None:
        cause = candidates(scopes[-1]) or [(n, r, d) for n, delta in changes.items()
                                           for r, d in delta.items()]
        shown = ("the changes shown are the move's changes that touch its explanations; "
                 "replayed on those records alone they do not remove it (other records take "
                 "part)")
    result.notes.append(shown)
    by_input: dict = {}
    for n, r, d in cause:
        by_input.setdefault(n, {})[r] = d
    result.removed_by = {}
    for n, delta in by_input.items():
        frame = _frames(flow, {_input_id(flow, n): delta})[n]
        result.removed_by[n] = frame.rename(columns={"multiplicity": "diff"})


def _collection_of(op):
    """A collection handle on an operator (what :func:`explain` takes)."""
    return Collection(op)


def _input_id(flow, name: str) -> int:
    return flow.inputs[name].id


class _Replayer:
    def __init__(self, flow, op):
        self.flow, self.op = flow, op

    def multiplicity(self, facts: dict, rec) -> int:
        by_id = {o.id: o for o in self.flow.operators}
        records = {by_id[i].name: recs for i, recs in facts.items()}
        out = Replay(self.flow, self.op).run(records)
        return out.get(rec, 0)


__all__ = ["Explanation", "explain", "DEFAULT_BUDGET"]
