"""``%dd`` and ``%%dd``: the ddlab magics (one stateful Magics class).

Parsing and presentation only: the work is done by :class:`~.session.Session` (declarations,
rebuilds, epochs) on the engine's public API and by ``ddlab.sources`` (Spark).
Every command is an argparse parser built with ``@magic_arguments``; ``--help`` prints it.
User mistakes raise ``UsageError`` (one line, what was wrong, a hint); declared names are
pushed into the user's namespace as ordinary Python variables.
"""
from __future__ import annotations

import ast
from typing import Callable

from IPython.core.error import UsageError
from IPython.core.magic import (Magics, line_cell_magic, magics_class, needs_local_scope,
                                no_var_expand)
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.utils.process import arg_split
from traitlets import Bool, Int, observe

from ddlab.engine import DEFAULT_MAX_ITERATIONS
from traitlets.config.configurable import Configurable

from . import reprs
from .progress import NullProgress, Progress
from .session import DerivedDecl, Session, SessionError, StepResult, suggest

__all__ = ["DDMagics", "DD_HELP"]

DD_HELP = """\
ddlab magics: declare, step and inspect a differential dataflow in this kernel.

  %dd input NAME --from SOURCE [--window 7d --step 1d]  declare an input collection
        SOURCE: a dataset (collegemsg), a CSV/JSON/Parquet path, a DataFrame variable;
        or --sql "SELECT ..."; map columns with --src/--dst/--time (or --columns a,b)
  %%dd NAME                              declare a derived collection; the cell body is an
        engine expression over declared collections, e.g. connected_components(edges)
  %dd step [N] | %dd step --to K         move the windows N positions (N < 0: back), one
        epoch each; without a window, one epoch applying the queued rows
  %dd insert NAME ROWS | %dd remove NAME ROWS   change an input (rows inline such as
        [(1, 2), (2, 3)], or a DataFrame/list variable) and step once
  %dd show NAME | %dd changes NAME | %dd trace NAME   contents, last epoch's changes, trace
  %dd stats [NAME] [--by operator|iteration|time]    per-operator statistics
  %dd graph [NAME]                       the dataflow picture, edges labelled with updates
  %dd status | %dd drop NAME | %dd rebuild [--restart] | %dd reset

Declared names are Python variables (collections): use them in Python, too.
Every command has --help, e.g. %dd input --help, %%dd --help.
"""


def _usage(err: SessionError) -> UsageError:
    return UsageError(str(err))


@magics_class
class DDMagics(Magics, Configurable):
    """The ddlab magics; configure with ``%config DDMagics.display_limit = 50``."""

    display_limit = Int(20, config=True, help="Rows shown by tables (show, changes, trace, stats).")
    short_errors = Bool(True, config=True,
                        help="Report engine, Spark and cell-body errors as one-line "
                             "UsageErrors (False: raise the underlying error with its "
                             "traceback).")
    progress = Bool(True, config=True, help="Show a progress row for long operations "
                                            "(Spark loads, first computations, many steps).")
    max_iterations = Int(DEFAULT_MAX_ITERATIONS, config=True,
                         help="Iteration bound of loops in dataflows the magics build.")

    def __init__(self, shell=None, **kwargs):
        Configurable.__init__(self, config=shell.config if shell is not None else None)
        Magics.__init__(self, shell=shell, **kwargs)
        self.session = Session(max_iterations=self.max_iterations)
        self._pushed: dict = {}
        self._commands: dict[str, Callable] = {
            "input": self.cmd_input, "step": self.cmd_step, "insert": self.cmd_insert,
            "remove": self.cmd_remove, "show": self.cmd_show, "changes": self.cmd_changes,
            "trace": self.cmd_trace, "stats": self.cmd_stats, "graph": self.cmd_graph,
            "drop": self.cmd_drop, "reset": self.cmd_reset, "rebuild": self.cmd_rebuild,
            "status": self.cmd_status,
        }
        if shell is not None:
            shell.configurables.append(self)

    @observe("max_iterations")
    def _max_iterations_changed(self, change):
        self.session.max_iterations = change["new"]     # used by the next (re)build

    # == the magic ===========================================================================
    @no_var_expand
    @needs_local_scope
    @line_cell_magic
    def dd(self, line="", cell=None, local_ns=None):
        """ddlab: see DD_HELP (replaced below)."""
        ns = dict(self.shell.user_ns)
        if local_ns and local_ns is not self.shell.user_ns:
            ns.update(local_ns)
        try:
            if cell is not None:
                return self.cmd_define(line, cell, ns)
            tokens = arg_split(line)
            if not tokens:
                return self.cmd_status("", ns)
            head, rest = tokens[0], line.strip()[len(tokens[0]):].strip()
            if head in ("-h", "--help", "help"):
                return self._help(rest)
            if head in self._commands:
                return self._commands[head](rest, ns)
            if head in self.session.names:           # %dd edges == %dd show edges
                return self.cmd_show(line, ns)
            hint = suggest(head, list(self._commands) + self.session.names)
            raise UsageError(f"%dd: unknown command or collection {head!r}. "
                             f"Hint: {hint[0].upper() + hint[1:] + ' ' if hint else ''}"
                             f"Commands: {', '.join(self._commands)}; see %dd --help.")
        except SessionError as err:
            if not self.short_errors and isinstance(err.__cause__, Exception):
                raise err.__cause__     # the underlying engine/Spark/body error, traceback kept
            raise _usage(err) from None
        except UsageError:
            raise
        except Exception as err:
            from ddlab.engine import DataflowError

            if self.short_errors and isinstance(err, DataflowError):
                first = str(err).strip().splitlines()[0]
                raise UsageError(f"{first} Hint: set %config DDMagics.short_errors = False "
                                 "for the traceback.") from None
            raise

    dd.__doc__ = DD_HELP

    # == helpers =============================================================================
    def _parse(self, method, line: str):
        """Parse with the method's @magic_arguments parser; ``None`` after printing --help."""
        parser = method.parser
        tokens = arg_split(line)
        if "-h" in tokens or "--help" in tokens:
            print(parser.format_help())
            return None
        try:
            return parser.parse_args(tokens)
        except UsageError as err:
            prog = "%" + parser.prog
            raise UsageError(f"{prog}: {err}. Hint: see {prog} --help.") from None

    def _help(self, rest: str):
        """``%dd help [COMMAND]``: the overview, or one command's argparse help."""
        topic = rest.strip().lstrip("%")
        if not topic:
            print(DD_HELP)
            return None
        if topic in ("%dd", "cell", "define", "%%dd"):
            print(self.cmd_define.parser.format_help())
            return None
        if topic not in self._commands:
            hint = suggest(topic, list(self._commands))
            raise UsageError(f"%dd help: no command {topic!r}. Hint: "
                             f"{hint[0].upper() + hint[1:] + ' ' if hint else ''}"
                             f"Commands: {', '.join(self._commands)}, cell.")
        print(self._commands[topic].__func__.parser.format_help())
        return None

    def _progress(self, title: str):
        return Progress(title) if self.progress else NullProgress()

    def _check_free(self, name: str) -> None:
        """A declared name may replace our own variables or ddlab objects, nothing else."""
        ns = self.shell.user_ns
        if name not in ns or ns[name] is self._pushed.get(name):
            return
        import ddlab

        if isinstance(ns[name], (ddlab.Collection, ddlab.View)):
            return
        raise SessionError(f"{name!r} already names a {type(ns[name]).__name__} in your "
                           f"namespace; declaring it would overwrite that.",
                           f"Choose another name (or `del {name}` first).")

    def _sync(self) -> None:
        """Bring the user's namespace in line with the session: declared names -> live
        collections; dropped names removed (only where the variable is still ours)."""
        ns = self.shell.user_ns
        new = self.session.exported()
        for name, obj in self._pushed.items():
            if name not in new and ns.get(name) is obj:
                del ns[name]
        push = {}
        for name, obj in new.items():
            if name not in ns or ns[name] is self._pushed.get(name) or name == self._claim:
                push[name] = obj
        self.shell.push(push)
        self._pushed = {**{k: v for k, v in self._pushed.items() if k in new}, **push}

    _claim: str | None = None

    def _commit_name(self, name: str) -> None:
        self._claim = name
        try:
            self._sync()
        finally:
            self._claim = None

    def _name_of(self, name: str, ns: dict):
        """A declared name's handle, or a clear error (with the closest name)."""
        if name in self.session.names:
            return self.session.handle(name)
        obj = ns.get(name)
        import ddlab

        if isinstance(obj, ddlab.Collection):
            raise SessionError(f"{name!r} is a Collection built in Python, not declared, so "
                               "its contents are not followed.",
                               f"Declare it with a %%dd {name} cell (body: the expression).")
        raise self.session.unknown(name)

    # == %dd input ===========================================================================
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
    def cmd_input(self, line, ns):
        """Declare an input collection, empty or loaded from a source (Spark or pandas).

        Its records are queued for the next step; with --window the records enter one
        window position per epoch (%dd step).  Example:
        %dd input edges --from collegemsg --window 7d --step 1d
        """
        from .loading import LoadRequest, load_input

        args = self._parse(self.cmd_input, line)
        if args is None:
            return None
        split = (lambda s: [c.strip() for c in s.split(",") if c.strip()] if s else None)
        req = LoadRequest(args.name, _unquote(args.source), _unquote(args.sql), args.src, args.dst,
                          args.time, args.label, split(args.columns), split(args.names),
                          not args.no_header, args.format, _unquote(args.time_format),
                          args.window, args.step, args.multigraph)
        s = self.session
        s.check_name(req.name, derived=False)
        self._check_free(req.name)
        replaced = req.name in s.inputs
        with self._progress(f"%dd input {req.name}") as progress:
            decl = load_input(req, ns, progress)
            s.declare_input(decl, ns, progress)
        self._commit_name(req.name)
        return self._declared_input(decl, replaced)

    def _declared_input(self, decl, replaced):
        from html import escape

        s = self.session
        cols = ", ".join(decl.columns)
        head = f"{decl.name} <- {decl.source}: input with fields {cols}"
        html = [f"<b>{escape(decl.name)}</b> \u2190 {escape(decl.source)} \u00b7 input "
                f"\u00b7 fields {escape(cols)}"]
        text = [head]
        if decl.report is not None:
            r = decl.report
            line = (f"loaded on Spark in {decl.seconds:.1f} s: {r.rows_read:,} rows read, "
                    f"{r.rows_loaded:,} loaded, {r.malformed_total:,} malformed")
            if r.malformed:
                line += " (" + ", ".join(f"{k} {v:,}" for k, v in sorted(r.malformed.items())) + ")"
            html.append(escape(line))
            text.append(line)
        if decl.windowed:
            b = decl.batches
            line = (f"window {_duration(b.width)} stepping {_duration(b.step)}: {len(b):,} "
                    f"positions, {b.total_rows:,} update rows prepared on Spark; at the empty "
                    f"position (-1): %dd step moves it (the first step loads window 0 "
                    f"{_span(b, 0)})")
            html.append(escape(line))
            text.append(line)
        elif decl.initial is not None:
            n = len(decl.initial)
            line = (f"{n:,} records queued for the next step (a %%dd cell or %dd step "
                    f"applies them)")
            html.append(escape(line))
            text.append(line)
        else:
            line = "empty; add rows with %dd insert " + decl.name + " [(...), ...]"
            html.append(escape(line))
            text.append(line)
        users = [n for n in s.derived]
        if replaced:
            line = (f"replaced the earlier {decl.name}; the flow was rebuilt at epoch "
                    f"{s.flow.epoch}" + (f" ({', '.join(users)} recomputed)" if users else ""))
            html.append(escape(line))
            text.append(line)
        sample = None
        if decl.initial is not None and len(decl.initial):
            frame = decl.initial.rename(columns={"diff": "multiplicity"})
            sample = reprs.ShowResult(f"{decl.name} (queued)", frame, 0,
                                      min(5, self.display_limit))
            sample.pending = 0
        return reprs.Declared(decl.name, html, text, show=sample)

    # == %%dd NAME =============================================================================
    @magic_arguments(name="%dd")
    @argument("name", help="the derived collection's name (also a Python variable)")
    @argument("--no-arrange", action="store_true",
              help="do not arrange the result (saves memory; %%dd trace then has nothing)")
    @argument("--no-step", action="store_true",
              help="do not run the first step even if updates are queued")
    def cmd_define(self, line, cell, ns):
        """Declare a derived collection: the cell body is Python ending in an expression
        over declared collections (ddlab.algorithms names are available), e.g.

        %%dd cc
        connected_components(edges)

        The result is arranged (so %dd trace works) and viewed; the cell shows what was
        built and the first result (one step if updates are queued or a window is empty).
        """
        args = self._parse(self.cmd_define, line)
        if args is None:
            return None
        if not cell.strip():
            raise SessionError(f"%%dd {args.name}: the cell body is empty.",
                               "Write an expression such as connected_components(edges).")
        s = self.session
        s.check_name(args.name, derived=True)
        self._check_free(args.name)
        old_epoch = s.flow.epoch
        replaced = args.name in s.derived
        decl = DerivedDecl(args.name, cell, arrange=not args.no_arrange)
        with self._progress(f"%%dd {args.name}") as progress:
            _, result = s.declare_derived(decl, ns, progress, first_step=not args.no_step)
        self._commit_name(args.name)
        return self._declared_derived(decl, result, old_epoch, replaced)

    def _declared_derived(self, decl, result, old_epoch, replaced):
        from html import escape

        s = self.session
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
        first = reprs.StepSummary(result) if result else None
        show = reprs.ShowResult(decl.name, h.view.to_pandas(), h.view.epoch,
                                min(10, self.display_limit))
        return reprs.Declared(decl.name, html, text, first=first, show=show)

    # == epochs ==============================================================================
    @magic_arguments(name="dd step")
    @argument("n", nargs="?", type=int, default=1,
              help="window positions to move (negative: backward; 0: apply queued rows only); "
                   "one epoch per position")
    @argument("--to", type=int, metavar="K", help="jump every window to position K in one "
                                                 "epoch (-1: empty)")
    def cmd_step(self, line, ns):
        """Close epochs: move the windows (one epoch per position) or apply queued rows.

        Each epoch reports one line: per declared collection its additions and
        retractions, and the time taken.  Example: %dd step 3   (or %dd step -1)
        """
        args = self._parse(self.cmd_step, line)
        if args is None:
            return None
        s = self.session
        if not s.names:
            raise SessionError("nothing to step: no collection is declared.",
                               "Start with %dd input NAME --from SOURCE.")
        with self._progress("%dd step") as progress:
            if args.to is not None:
                result = s.seek(args.to, progress)
            else:
                result = s.step(args.n, progress)
        return reprs.StepSummary(result)

    @magic_arguments(name="dd insert")
    @argument("name", help="an input collection")
    @argument("rows", nargs="*", help="a Python literal such as [(1, 2), (2, 3)], or the "
                                      "name of a DataFrame/list variable")
    @argument("--no-step", action="store_true", help="only queue the rows (the next step "
                                                     "applies them with everything else)")
    def cmd_insert(self, line, ns):
        """Insert rows into an input and close one epoch.  Example:
        %dd insert edges [(1, 2), (2, 3)]     or     %dd insert edges new_edges_df
        """
        return self._change(self.cmd_insert, line, ns, +1)

    @magic_arguments(name="dd remove")
    @argument("name", help="an input collection")
    @argument("rows", nargs="*", help="a Python literal such as [(1, 2)], or the name of a "
                                      "DataFrame/list variable")
    @argument("--no-step", action="store_true", help="only queue the removal")
    def cmd_remove(self, line, ns):
        """Remove rows from an input and close one epoch.  Example:
        %dd remove edges [(2, 3)]
        """
        return self._change(self.cmd_remove, line, ns, -1)

    def _change(self, method, line, ns, diff):
        args = self._parse(method, line)
        if args is None:
            return None
        verb = "insert" if diff > 0 else "remove"
        s = self.session
        if args.name not in s.inputs and args.name not in s.derived:
            raise s.unknown(args.name, "input")
        if not args.rows:
            raise SessionError(f"%dd {verb} {args.name}: no rows given.",
                               f"E.g. %dd {verb} {args.name} [(1, 2), (2, 3)], or a DataFrame "
                               "variable.")
        rows = self._rows(" ".join(args.rows), ns, args.name, verb)
        result = s.insert(args.name, rows, diff, step=not args.no_step)
        if result is None:
            n = len(rows)
            return reprs.StepSummary(StepResult(
                [], f"{n:,} row{'s' if n != 1 else ''} queued on {args.name} "
                    f"({s.pending(args.name):,} updates queued in all); %dd step applies them"))
        return reprs.StepSummary(result)

    def _rows(self, text: str, ns: dict, name: str, verb: str):
        import pandas as pd

        text = text.strip()
        if text.isidentifier():
            if text not in ns:
                pool = [k for k, v in ns.items() if isinstance(v, (pd.DataFrame, list))
                        and not k.startswith("_")]
                hint = suggest(text, pool)
                raise SessionError(f"%dd {verb} {name}: no variable {text!r}.",
                                   (hint[0].upper() + hint[1:] + " " if hint else "") +
                                   "Give a DataFrame/list variable or a literal like [(1, 2)].")
            value = ns[text]
        else:
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                raise SessionError(f"%dd {verb} {name}: cannot read the rows {text[:60]!r}.",
                                   "Write a Python literal such as [(1, 2), (2, 3)] (or "
                                   "(1, 2) for one row).") from None
        if isinstance(value, pd.DataFrame):
            return value
        arity = len(self.session.inputs[name].columns) if name in self.session.inputs else 0
        if isinstance(value, tuple) and arity > 1 and len(value) == arity and not any(
                isinstance(v, (tuple, list)) for v in value):
            return [value]                               # one row, e.g. (1, 2)
        if isinstance(value, (list, tuple, set)):
            return [tuple(v) if isinstance(v, list) else v for v in value]
        if arity == 1:
            return [value]
        raise SessionError(f"%dd {verb} {name}: rows must be a list of tuples or a DataFrame, "
                           f"not {type(value).__name__}.", "E.g. [(1, 2), (2, 3)].")

    # == inspection ===========================================================================
    @magic_arguments(name="dd show")
    @argument("name", help="a declared collection")
    @argument("--limit", type=int, help="rows to show (default: DDMagics.display_limit)")
    @argument("--sort", metavar="A,B", help="fields to sort by (default: all)")
    def cmd_show(self, line, ns):
        """Show a collection's current contents: each record with its multiplicity.
        The value's .frame holds every record.  Example: %dd show cc --limit 10
        """
        args = self._parse(self.cmd_show, line)
        if args is None:
            return None
        h = self._name_of(args.name, ns)
        frame = h.view.to_pandas()
        sort = [c.strip() for c in args.sort.split(",")] if args.sort else None
        for c in sort or []:
            if c not in frame.columns:
                hint = suggest(c, frame.columns)
                raise SessionError(f"%dd show {args.name}: no field {c!r} to sort by.",
                                   (hint[0].upper() + hint[1:] + " " if hint else "") +
                                   f"Fields: {', '.join(map(str, frame.columns))}.")
        pending = self.session.pending(args.name) if args.name in self.session.inputs else 0
        return reprs.ShowResult(args.name, frame, h.view.epoch, self._limit(args), pending,
                                sort)

    def _limit(self, args) -> int:
        if args.limit is not None and args.limit < 0:
            raise SessionError(f"--limit {args.limit} is negative.", "Give a row count, e.g. 50.")
        return args.limit if args.limit is not None else self.display_limit

    @magic_arguments(name="dd changes")
    @argument("name", help="a declared collection")
    @argument("--limit", type=int, help="rows to show")
    def cmd_changes(self, line, ns):
        """Show a collection's changes in the last epoch (additions green, retractions red).
        Example: %dd changes cc
        """
        args = self._parse(self.cmd_changes, line)
        if args is None:
            return None
        h = self._name_of(args.name, ns)
        return reprs.ChangesResult(args.name, h.view.changes(), h.view.epoch, self._limit(args))

    @magic_arguments(name="dd trace")
    @argument("name", help="a declared (arranged) collection")
    @argument("--limit", type=int, help="rows to show")
    def cmd_trace(self, line, ns):
        """Show a collection's trace: the updates its arrangement keeps, grouped by time, and
        for each loop upstream the lattice of updates per (epoch, iteration).
        Example: %dd trace scc
        """
        from ddlab.engine import DataflowError

        args = self._parse(self.cmd_trace, line)
        if args is None:
            return None
        h = self._name_of(args.name, ns)
        try:
            history = h.collection.history()
        except DataflowError:
            raise SessionError(f"{args.name} keeps no trace (it was declared with --no-arrange).",
                               f"Re-declare it without --no-arrange: %%dd {args.name}.") from None
        flow = self.session.flow
        ops, edges = flow.graph()
        from .graph_svg import ancestors

        up = ancestors(edges, [h.collection.op.id])
        loops = sorted({"/".join(p.split("/")[:2]) for p in ops[ops["id"].isin(up)]["scope"]
                        if p != "root"})
        stats = flow.stats()
        lattices = {loop: reprs.lattice_frame(stats, loop) for loop in loops}
        return reprs.TraceResult(args.name, history, flow.epoch, lattices, self._limit(args))

    @magic_arguments(name="dd stats")
    @argument("name", nargs="?", help="only the operators upstream of this collection")
    @argument("--by", choices=["operator", "iteration", "time"], default="operator",
              help="group per operator (default), per loop iteration, or not at all")
    @argument("--epoch", type=int, help="which epoch (default: the last completed)")
    @argument("--all", action="store_true", help="every epoch")
    @argument("--limit", type=int, help="rows to show")
    def cmd_stats(self, line, ns):
        """Per-operator statistics from flow.stats(): runs, updates in and out, milliseconds,
        per operator (sorted by time), per loop iteration, or per (operator, time).
        Example: %dd stats scc --by iteration
        """
        import pandas as pd

        args = self._parse(self.cmd_stats, line)
        if args is None:
            return None
        flow = self.session.flow
        if flow.epoch == 0:
            raise SessionError("no epoch has completed yet, so there are no statistics.",
                               "Run %dd step first.")
        if args.epoch is not None and not 0 <= args.epoch < flow.epoch:
            raise SessionError(f"--epoch {args.epoch} is out of range 0..{flow.epoch - 1}.",
                               "Epochs count from 0; the last completed is "
                               f"{flow.epoch - 1}.")
        epoch = None if args.all else (args.epoch if args.epoch is not None else flow.epoch - 1)
        raw = flow.stats(epoch)
        if args.name:
            h = self._name_of(args.name, ns)
            ops, edges = flow.graph()
            from .graph_svg import ancestors

            keep = ancestors(edges, [h.collection.op.id])
            labels = set(ops[ops["id"].isin(keep)]["label"])
            raw = raw[raw["operator"].isin(labels)]
        label = "of all epochs" if epoch is None else f"of epoch {epoch}"
        if args.name:
            label += f" upstream of {args.name}"
        raw = raw.assign(ms=(raw["seconds"] * 1000).round(3))
        if args.by == "operator":
            g = raw.groupby(["operator", "kind", "scope"], sort=False)
            frame = pd.DataFrame({"runs": g.size(), "in": g["in"].sum(), "out": g["out"].sum(),
                                  "ms": g["ms"].sum().round(3)}).reset_index()
            frame = frame.sort_values("ms", ascending=False, kind="stable")
        elif args.by == "iteration":
            inner = raw[raw["iteration"].notna()]
            g = inner.groupby(["scope", "epoch", "iteration"])
            frame = pd.DataFrame({"runs": g.size(), "in": g["in"].sum(), "out": g["out"].sum(),
                                  "ms": g["ms"].sum().round(3)}).reset_index()
            if len(frame):
                frame["iteration"] = frame["iteration"].astype(int)
        else:
            frame = raw[["operator", "kind", "scope", "time", "in", "out", "ms"]]
        return reprs.StatsResult(frame.reset_index(drop=True), raw, args.by, label,
                                 self._limit(args))

    @magic_arguments(name="dd graph")
    @argument("name", nargs="?", help="only the operators upstream of this collection")
    @argument("--epoch", type=int, help="whose edge counts (default: the last completed)")
    def cmd_graph(self, line, ns):
        """Draw the dataflow: operators in topological layers, loops as nested boxes, each
        edge labelled with the updates it carried in the epoch (Naiad's Figure 9, live).
        The value's .svg is the picture.  Example: %dd graph scc
        """
        from .graph_svg import ancestors, dataflow_svg

        args = self._parse(self.cmd_graph, line)
        if args is None:
            return None
        s = self.session
        flow = s.flow
        if args.epoch is not None and not 0 <= args.epoch < max(1, flow.epoch):
            raise SessionError(f"--epoch {args.epoch} is out of range 0..{max(0, flow.epoch - 1)}.",
                               "Epochs count from 0.")
        epoch = args.epoch if args.epoch is not None else max(0, flow.epoch - 1)
        ops, edges = flow.graph(epoch)
        names = {h.collection.op.id: n for n, h in s.state.handles.items()}
        keep = None
        when = f"after epoch {flow.epoch - 1}" if flow.epoch else "before the first epoch"
        title = f"dataflow {when}"
        if args.name:
            h = self._name_of(args.name, ns)
            views = ops[ops["label"].str.startswith(f"view {args.name}#")]["id"].tolist()
            keep = ancestors(edges, [h.collection.op.id] + views)
            title = f"dataflow of {args.name} {when}"
            ops = ops[ops["id"].isin(keep) | (ops["kind"] == "loop")]
            edges = edges[edges["source"].isin(keep) & edges["target"].isin(keep)]
        svg = dataflow_svg(ops, edges, names=names, keep=keep, title=title)
        return reprs.GraphResult(svg, ops.reset_index(drop=True), edges.reset_index(drop=True),
                                 epoch, title)

    # == the session ==========================================================================
    @magic_arguments(name="dd status")
    def cmd_status(self, line, ns):
        """The session: epoch, operators, declared collections (%dd alone does the same).
        The value's .flow is the live Dataflow.
        """
        if line and self._parse(self.cmd_status, line) is None:
            return None
        return reprs.StatusResult(self.session)

    @magic_arguments(name="dd drop")
    @argument("name", help="a declared collection")
    def cmd_drop(self, line, ns):
        """Forget a declaration (and its variable); the flow is rebuilt without it.
        Example: %dd drop scc
        """
        args = self._parse(self.cmd_drop, line)
        if args is None:
            return None
        with self._progress(f"%dd drop {args.name}") as progress:
            self.session.drop(args.name, ns, progress)
        self._sync()
        return reprs.StatusResult(self.session)

    @magic_arguments(name="dd rebuild")
    @argument("--restart", action="store_true",
              help="start over at epoch 0: windows empty, loaded rows queued again (rows "
                   "added by insert/remove are forgotten)")
    def cmd_rebuild(self, line, ns):
        """Rebuild the dataflow from the declarations without restarting the kernel: at the
        same epoch with the same contents (bodies re-evaluated, inputs replayed), or from
        scratch with --restart.  Example: %dd rebuild --restart
        """
        args = self._parse(self.cmd_rebuild, line)
        if args is None:
            return None
        with self._progress("%dd rebuild") as progress:
            self.session.rebuild(ns, progress, restart=args.restart)
        self._sync()
        return reprs.StatusResult(self.session)

    @magic_arguments(name="dd reset")
    def cmd_reset(self, line, ns):
        """Forget every declaration and start a new empty dataflow (the Spark session stays).
        """
        if line and self._parse(self.cmd_reset, line) is None:
            return None
        self.session.reset()
        self._sync()
        print("ddlab: session reset (new empty dataflow, no declarations)")
        return None


def _unquote(text):
    if text and len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _duration(seconds: int) -> str:
    from .session import format_duration

    return format_duration(seconds)


def _span(batches, k: int) -> str:
    from .session import format_span

    try:
        s, e = batches.window(k)
        return format_span(s, e, batches.width)
    except Exception:  # pragma: no cover
        return ""
