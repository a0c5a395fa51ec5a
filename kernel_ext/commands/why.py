"""``%dd why``, ``why-loop``, ``why-cost``: the why views over the session's flow.

Why here and thin: each is one call into the engine (``flow.why``, ``flow.why_loop``,
``flow.why_cost``, see ``ddlab.engine.why``); the magic finds what the session knows and the
engine does not: the declared names of collections and of the operators each ``%%dd`` cell
built (so derivations and costs read "cc: min#18", "cc"), and records given by their key.
"""
from __future__ import annotations

import ast

from IPython.core.magic_arguments import argument, magic_arguments

from ..display.why import WhyCostResult, WhyLoopResult, WhyResult
from ..messages import SessionError

__all__ = ["why", "why_loop", "why_cost", "declaration_names"]


def declaration_names(session) -> dict[int, str]:
    """``{operator id: declared name}`` for every operator a declaration built (inputs: the
    input and its view)."""
    names: dict[int, str] = {}
    ops, _ = session.flow.graph()
    labels = dict(zip(ops["label"], ops["id"]))
    for name, h in session.state.handles.items():
        if h.info is not None:
            names.update({i: name for i in h.info.op_ids})
        else:
            names[h.collection.id] = name
            for label, i in labels.items():
                if label.startswith(f"view {name}#"):
                    names[int(i)] = name
    return names


def _literal(token: str, ns: dict):
    try:
        return ast.literal_eval(token)
    except (ValueError, SyntaxError):
        if token in ns:
            return ns[token]
        return token


def _parse_record(tokens: list, ns: dict):
    """``(1, 2)``, ``1 2`` or ``1``: one literal (or variable), or several fields."""
    if len(tokens) == 1:
        return _literal(tokens[0], ns)
    try:
        return ast.literal_eval(" ".join(tokens))     # (5, 1) split by the shell
    except (ValueError, SyntaxError):
        return tuple(_literal(t, ns) for t in tokens)


def _as_tuple(record) -> tuple:
    return record if isinstance(record, tuple) else (record,)


def _matching(handle, record) -> list:
    """Records of the collection now (and retracted by the last move) whose leading fields
    are ``record``: a node's label is asked for by the node alone."""
    want = _as_tuple(record)
    frame = handle.view.to_pandas()
    fields = [c for c in frame.columns if c != "multiplicity"]
    if len(want) <= len(fields) and len(frame):
        hit = frame
        for col, value in zip(fields, want):
            try:
                hit = hit[hit[col] == value]
            except TypeError:       # a value that cannot be compared with the column
                hit = hit.iloc[:0]
        now = [tuple(r) if len(r) > 1 else r[0]
               for r in hit[fields].itertuples(index=False, name=None)]
        if now:
            return now
    changes = handle.view.changes()
    if not len(changes):
        return []
    gone = changes[changes["diff"] < 0].drop(columns="diff")
    return [r for r in (tuple(x) if len(x) > 1 else x[0] for x in
                        gone.itertuples(index=False, name=None))
            if _as_tuple(r)[:len(want)] == want]


@magic_arguments(name="dd why")
@argument("name", help="a declared collection")
@argument("record", nargs="+",
          help="the record, e.g. (4, 1) or 4 1; or its first fields only (a node: 4)")
@argument("--no-verify", action="store_true",
          help="do not replay the program on the explanation to check it")
@argument("--budget", type=int, default=2_000_000,
          help="rows an explanation may read before it gives every upstream input instead")
@argument("--limit", type=int, help="rows to show per input")
def why(magics, line, ns):
    """Why is RECORD in NAME: the input records sufficient to produce it (checked by
    replaying the program from scratch on them alone) and its derivation operator by
    operator, in loops from the iteration where it first appears.  A record not there says
    so; one that left on the last move is explained on the previous epoch, with the input
    changes that removed it.  On an output of a %%dd rules cell: a proof tree of minimal
    height, each fact with the rule (and line) that derived it, down to input facts.
    Example: %dd why cc 42   (node 42's label);  %dd why path 1 7
    """
    args = magics.parse(why, line)
    if args is None:
        return None
    s = magics.session
    handle = magics.lookup(args.name, ns)
    if s.flow.epoch == 0:
        raise SessionError("no epoch has completed yet, so there is nothing to explain.",
                           "Run %dd step first.")
    record = _parse_record(args.record, ns)
    arity = len(handle.collection.columns or ()) or None
    others = []
    if arity is None or len(_as_tuple(record)) < arity:
        found = _matching(handle, record)
        if found:
            record, others = found[0], found[1:]
        elif arity is not None:
            raise SessionError(f"%dd why {args.name}: no record of {args.name} starts with "
                               f"{record!r} (now or before the last move).",
                               f"Give the whole record ({', '.join(handle.collection.columns)}).")
    program = getattr(handle, "group_value", None)
    if hasattr(program, "why") and hasattr(program, "rules"):   # a %%dd rules output: a proof
        try:
            return program.why(args.name, _as_tuple(record), verify=not args.no_verify)
        except Exception as err:
            from ddlab.engine import DataflowError

            if not isinstance(err, DataflowError):
                raise
            raise SessionError(f"%dd why {args.name}: {err}") from err
    try:
        explanation = s.flow.why(handle.collection, record, verify=not args.no_verify,
                                 budget=args.budget, names=declaration_names(s))
    except Exception as err:  # engine errors: one line
        from ddlab.engine import DataflowError

        if not isinstance(err, DataflowError):
            raise
        raise SessionError(f"%dd why {args.name}: {err}") from err
    return WhyResult(args.name, explanation, magics.limit(args), others)


def _loops_upstream(session, collection) -> list[str]:
    ops, _ = session.flow.graph()
    up = ops[ops["id"].isin(session.flow.upstream(collection))]
    scopes = set(up["scope"])
    return [p for p in session.flow.loops() if p in scopes]


@magic_arguments(name="dd why-loop")
@argument("name", nargs="?", help="only the loops upstream of this collection")
@argument("--loop", help="one loop, by its scope path (e.g. root/cc)")
@argument("--top", type=int, default=10, help="keys to show per loop (default 10)")
@argument("--limit", type=int, help="rows to show")
def why_loop(magics, line, ns):
    """Why did the loops run as long as they did in the last epoch: per loop the iterations
    used, the records in difference per iteration (as flow.loop_differences), and the keys
    that kept changing longest with their values over the iterations.
    Example: %dd why-loop cc
    """
    args = magics.parse(why_loop, line)
    if args is None:
        return None
    s = magics.session
    if s.flow.epoch == 0:
        raise SessionError("no epoch has completed yet.", "Run %dd step first.")
    if args.top < 1:
        raise SessionError(f"--top {args.top} must be at least 1.", "E.g. --top 10.")
    loops = s.flow.loops()
    if args.loop:
        if args.loop not in loops:
            raise SessionError(f"%dd why-loop: no loop {args.loop!r}.",
                               f"Loops: {', '.join(loops) or 'none'}.")
        loops = [args.loop]
    if args.name:
        handle = magics.lookup(args.name, ns)
        loops = [p for p in loops if p in _loops_upstream(s, handle.collection)]
        if not loops:
            raise SessionError(f"%dd why-loop {args.name}: no loop is upstream of "
                               f"{args.name}.", "See %dd graph for where the loops are.")
    activities = [a for p in loops for a in s.flow.why_loop(p, top=args.top)]
    return WhyLoopResult(activities, magics.limit(args))


@magic_arguments(name="dd why-cost")
@argument("--epoch", type=int, help="which epoch (default: the last completed)")
@argument("--limit", type=int, help="rows to show")
def why_cost(magics, line, ns):
    """Why did the last move cost what it did: time, updates in and out, operator runs and
    trace growth per declaration (the %%dd cell) and per operator, beside the move before,
    with the input changes of both; the rows add up to the step's measured totals.
    Example: %dd why-cost
    """
    args = magics.parse(why_cost, line)
    if args is None:
        return None
    flow = magics.session.flow
    if flow.epoch == 0:
        raise SessionError("no epoch has completed yet.", "Run %dd step first.")
    if args.epoch is not None and args.epoch not in flow.statistics.epochs:
        raise SessionError(f"--epoch {args.epoch}: its statistics are not kept.",
                           f"Kept: {flow.statistics.epochs[0]}..{flow.statistics.epochs[-1]}.")
    cost = flow.why_cost(args.epoch, groups=declaration_names(magics.session))
    return WhyCostResult(cost, magics.limit(args))
