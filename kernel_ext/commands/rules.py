"""``%%dd rules``: Datalog rules in a cell, compiled by ``ddlab.engine.rules``.

Why thin: the compiler (parsing, checks, strata, operators) is ``ddlab.rules``; this command
checks the cell against the declared collections (so an error shows with its line, column and
caret before anything is built), then declares each ``.output`` relation as an ordinary
derived collection of the session.  The outputs share one declaration *group*: one Python
body, ``rules(TEXT, {...declared inputs...})``, evaluated once per build, so a rebuild, a
window move, ``%dd drop`` or ``%dd save`` treat them like any ``%%dd NAME`` collection, and
they share one compiled program.  A failing cell declares nothing.
"""
from __future__ import annotations

from html import escape

from IPython.core.magic_arguments import argument, magic_arguments

from ddlab.engine.rules import RulesError, check

from ..declarations import DerivedDecl
from ..display.results import Declared, ShowResult, StepSummary
from ..messages import SessionError

__all__ = ["rules_cell"]


@magic_arguments(name="%dd rules")
@argument("--limit", type=int, metavar="N",
          help="at most N iterations per recursive stratum (default: DDMagics.max_iterations)")
@argument("--partial", action="store_true",
          help="with --limit: give what N rounds of the rules derive instead of an error "
               "when a recursion has not converged (the stratum is unrolled N times)")
@argument("--no-step", action="store_true",
          help="do not run the first step even if updates are queued")
def rules_cell(magics, line, cell, ns):
    """Datalog rules over declared collections (Soufflé-like); each .output relation
    becomes a declared collection, kept up to date as inputs change and windows move.

    %%dd rules
    .input edge(src, dst) from edges
    reach(y) :- root(y).
    reach(y) :- reach(x), edge(x, y).
    .output reach

    ``.input rel from NAME`` reads the declared collection NAME (``.input rel`` reads
    ``rel``).  Without .output, every derived relation is declared.  Recursion, negation
    (!), min/max inside recursion, count/sum over lower strata: see help(ddlab.rules).
    """
    args = magics.parse(rules_cell, line)
    if args is None:
        return None
    if not cell.strip():
        raise SessionError("%%dd rules: the cell is empty.",
                           "Write rules, e.g. reach(y) :- reach(x), edge(x, y).")
    if args.limit is not None and args.limit < 1:
        raise SessionError(f"--limit {args.limit}: give a positive number of iterations.")
    if args.partial and args.limit is None:
        raise SessionError("--partial needs --limit N (how many rounds to keep).")
    s = magics.session
    available = {n: list(h.collection.columns or ()) or None for n, h in s.state.handles.items()}
    try:
        analysis = check(cell, available)
    except RulesError as err:
        raise SessionError(f"%%dd rules: {err}") from err
    outputs = list(analysis.outputs)
    if not outputs:
        raise SessionError("%%dd rules: the cell defines no relation.",
                           "Add a rule such as reach(y) :- reach(x), edge(x, y).")
    for name in outputs:
        if name in s.inputs:
            raise SessionError(f"%%dd rules: output {name!r} is a declared input.",
                               "Give the relation another name (or drop it from .output).")
        s.check_name(name, derived=True)
        magics.check_free(name)
    sources = sorted(set(analysis.inputs.values()))
    group, retire = _group_of(s, outputs)
    body = _body(cell, sources, args.limit, args.partial)
    decls = [DerivedDecl(name, body, group=group) for name in outputs]
    old_epoch = s.flow.epoch
    with magics.progress_row(f"%%dd rules ({', '.join(outputs)})") as progress:
        _, result = s.declare_many(decls, ns, progress, first_step=not args.no_step,
                                   retire=retire)
    for name in outputs:
        magics.publish(name)
    if retire:
        magics.sync()
    return _declared(magics, analysis, outputs, retire, result, old_epoch, args)


def _group_of(session, outputs):
    """The group of the cell's earlier version (any group holding one of these outputs)
    and the names it had that this version drops; a new group otherwise."""
    old = {d.group for n, d in session.derived.items() if n in outputs and d.group}
    groups = {d.group for d in session.derived.values() if d.group}
    if len(old) == 1:
        group = old.pop()
        retire = [n for n, d in session.derived.items() if d.group == group and n not in outputs]
        return group, retire
    k = 1
    while f"rules-{k}" in groups:
        k += 1
    retire = [n for n, d in session.derived.items() if d.group in old and n not in outputs]
    return f"rules-{k}", retire


def _body(text: str, sources, limit, partial) -> str:
    """The Python body the session evaluates for the group: the compiler called on the cell's
    text with the declared collections it reads."""
    quoted = f'"""{text}"""' if '"""' not in text and "\\" not in text and \
        not text.endswith('"') else repr(text)
    inputs = "{" + ", ".join(f"{n!r}: {n}" for n in sources) + "}"
    options = ""
    if limit is not None:
        options += f", limit={limit}"
    if partial:
        options += ', on_limit="partial"'
    return f"from ddlab import rules\nRULES = {quoted}\nrules(RULES, {inputs}{options})"


def _declared(magics, analysis, outputs, retire, result, old_epoch, args) -> "RulesDeclared":
    s = magics.session
    strata = analysis.strata
    loops = [st.name for st in strata if st.recursive]
    n_rules = len(analysis.program.rules)
    how = (f"unrolled {args.limit} rounds" if args.partial else
           f"at most {args.limit} iterations each" if args.limit else "")
    text = [f"rules: {', '.join(outputs)}",
            f"{n_rules} rule{'s' if n_rules != 1 else ''} in {len(strata)} strata; "
            f"recursive: {', '.join(loops) or 'none'}" + (f" ({how})" if how and loops else "")]
    if retire:
        text.append(f"dropped {', '.join(retire)} (no longer in this cell)")
    if old_epoch > 0:
        text.append(f"the flow was rebuilt and brought back to epoch {old_epoch - 1} by "
                    "replaying the inputs")
    html = [f"<b>{escape(', '.join(outputs))}</b> \u2190 rules \u00b7 derived"]
    html += [escape(t) for t in text[1:]]
    shows = [ShowResult(n, s.handle(n).view.to_pandas(), s.handle(n).view.epoch,
                        min(5, magics.display_limit)) for n in outputs]
    first = StepSummary(result) if result else None
    return RulesDeclared(outputs, html, text, first, shows)


class RulesDeclared(Declared):
    """What a ``%%dd rules`` cell declared: a summary, the first step, each output's first
    rows (``.shows``)."""

    def __init__(self, names, lines_html, lines_text, first, shows):
        super().__init__(", ".join(names), lines_html, lines_text, first=first)
        self.names, self.shows = list(names), list(shows)

    def _repr_html_(self):
        html = super()._repr_html_()
        return html + "".join(show._repr_html_() for show in self.shows)

    def __repr__(self):
        return "\n".join([super().__repr__()] + [repr(show) for show in self.shows])
