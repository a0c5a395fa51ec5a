"""``%dd`` and ``%%dd``: the dispatcher (one stateful Magics class).

Why this module is thin: it only splits the line, finds the command in
:data:`~.commands.COMMANDS` and turns user mistakes into one-line ``UsageError``s.  The
commands live in ``commands/`` (one module per family), the state in :class:`~.session.Session`,
the pictures and tables in ``display/``.  The helpers commands share (parsing, looking up a
name, publishing names into the user's namespace, the progress row) are methods here.
"""
from __future__ import annotations

from IPython.core.error import UsageError
from IPython.core.magic import (Magics, line_cell_magic, magics_class, needs_local_scope,
                                no_var_expand)
from IPython.utils.process import arg_split
from traitlets import Bool, Int, observe

from ddlab.engine import DEFAULT_MAX_ITERATIONS, Collection, DataflowError, View

from .commands import CELL_COMMANDS, COMMANDS, DEFINE, overview
from .messages import SessionError, first_line, hint, suggest
from .progress import NullProgress, Progress
from .session import Session

__all__ = ["DDMagics", "DD_HELP"]

#: ``%dd --help`` and ``%dd?``: one line per command, generated from the commands' parsers
DD_HELP = overview()


@magics_class
class DDMagics(Magics):
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
        # Magics registers us in shell.configurables (once) and reads the shell's config
        super().__init__(shell=shell, **kwargs)
        self.session = Session(max_iterations=self.max_iterations)
        self._pushed: dict = {}
        self._claim: str | None = None

    @observe("max_iterations")
    def _max_iterations_changed(self, change):
        session = getattr(self, "session", None)        # None while the config is loading
        if session is not None:
            session.max_iterations = change["new"]      # used by the next (re)build

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
            return self._dispatch(line, cell, ns)
        except SessionError as err:
            if not self.short_errors and isinstance(err.__cause__, Exception):
                raise err.__cause__  # noqa: B904 - the underlying error itself, traceback kept
            raise UsageError(str(err)) from None
        except DataflowError as err:
            if not self.short_errors:
                raise
            raise UsageError(f"{first_line(err)} Hint: set %config DDMagics.short_errors = "
                             "False for the traceback.") from None

    dd.__doc__ = DD_HELP

    def _dispatch(self, line: str, cell, ns):
        if cell is not None:
            words = line.split(None, 1)
            if words and words[0] in CELL_COMMANDS:
                return CELL_COMMANDS[words[0]](self, words[1] if len(words) > 1 else "", cell, ns)
            return DEFINE(self, line, cell, ns)
        tokens = arg_split(line)
        if not tokens:
            return COMMANDS["status"](self, "", ns)
        head, rest = tokens[0], line.strip()[len(tokens[0]):].strip()
        if head in ("-h", "--help", "help"):
            return self._help(rest)
        if head in COMMANDS:
            return COMMANDS[head](self, rest, ns)
        if head in self.session.names:           # %dd edges == %dd show edges
            return COMMANDS["show"](self, line, ns)
        raise UsageError(f"%dd: unknown command or collection {head!r}. Hint: "
                         + hint(suggest(head, list(COMMANDS) + self.session.names),
                                f"Commands: {', '.join(COMMANDS)}; see %dd --help."))

    def _help(self, rest: str):
        """``%dd help [COMMAND]``: the overview, or one command's argparse help."""
        topic = rest.strip().lstrip("%")
        if not topic:
            print(DD_HELP)
            return None
        if topic in ("%dd", "cell", "define", "%%dd"):
            print(DEFINE.parser.format_help())
            return None
        if topic in CELL_COMMANDS:
            print(CELL_COMMANDS[topic].parser.format_help())
            return None
        if topic not in COMMANDS:
            raise UsageError(f"%dd help: no command {topic!r}. Hint: "
                             + hint(suggest(topic, list(COMMANDS)),
                                    f"Commands: {', '.join(COMMANDS)}, cell."))
        print(COMMANDS[topic].parser.format_help())
        return None

    # == what commands share ====================================================================
    def parse(self, command, line: str):
        """Parse with the command's @magic_arguments parser; ``None`` after printing --help."""
        parser = command.parser
        tokens = arg_split(line)
        if "-h" in tokens or "--help" in tokens:
            print(parser.format_help())
            return None
        try:
            return parser.parse_args(tokens)
        except UsageError as err:
            prog = "%" + parser.prog
            raise UsageError(f"{prog}: {err}. Hint: see {prog} --help.") from None

    def limit(self, args) -> int:
        """Rows to show: ``--limit`` if given (not negative), else ``display_limit``."""
        if args.limit is not None and args.limit < 0:
            raise SessionError(f"--limit {args.limit} is negative.", "Give a row count, e.g. 50.")
        return args.limit if args.limit is not None else self.display_limit

    def progress_row(self, title: str):
        """A progress row for a long operation (or nothing, when ``progress`` is off)."""
        return Progress(title) if self.progress else NullProgress()

    def lookup(self, name: str, ns: dict):
        """A declared name's handle, or a clear error (with the closest name)."""
        if name in self.session.names:
            return self.session.handle(name)
        if isinstance(ns.get(name), Collection):
            raise SessionError(f"{name!r} is a Collection built in Python, not declared, so "
                               "its contents are not followed.",
                               f"Declare it with a %%dd {name} cell (body: the expression).")
        raise self.session.unknown(name)

    def check_free(self, name: str) -> None:
        """A declared name may replace our own variables or ddlab objects, nothing else."""
        ns = self.shell.user_ns
        if name not in ns or ns[name] is self._pushed.get(name):
            return
        if isinstance(ns[name], (Collection, View)):
            return
        raise SessionError(f"{name!r} already names a {type(ns[name]).__name__} in your "
                           f"namespace; declaring it would overwrite that.",
                           f"Choose another name (or `del {name}` first).")

    def sync(self) -> None:
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

    def publish(self, name: str) -> None:
        """:meth:`sync`, taking ``name`` over even if the user's variable holds something
        else (the declaration just claimed it, after :meth:`check_free`)."""
        self._claim = name
        try:
            self.sync()
        finally:
            self._claim = None
