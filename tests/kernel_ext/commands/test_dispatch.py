"""The command table the dispatcher reads: every command parses its own --help, its word is
reserved, and a command added in one place is found, listed, reserved and dispatched."""
from __future__ import annotations

import sys

import pytest

from ddlab.kernel_ext import commands
from ddlab.kernel_ext.commands import CELL_COMMANDS, COMMANDS, DEFINE
from ddlab.kernel_ext.declarations import RESERVED
from ddlab.kernel_ext.messages import SessionError

from ..conftest import dd


def test_every_command_has_a_parser_and_a_reserved_name(ip):
    assert set(COMMANDS) | set(CELL_COMMANDS) | {"help"} == RESERVED
    assert {"input", "step", "show", "graph", "explore", "save", "status", "why"} <= set(COMMANDS)
    assert "rules" in CELL_COMMANDS
    for name, command in {**COMMANDS, **CELL_COMMANDS}.items():
        assert command.parser.prog.endswith(name)
        assert f"%dd {name}" in commands.overview()
    assert DEFINE.parser.prog == "%dd"
    from ddlab.kernel_ext import get_magics

    with pytest.raises(SessionError, match="is a %dd command"):
        get_magics(ip).session.check_name("graph", derived=True)


NEW_FAMILY = """
from IPython.core.magic_arguments import argument, magic_arguments


@magic_arguments(name="dd hello")
@argument("who", help="whom to greet")
def hello(magics, line, ns):
    \"\"\"Greet someone.  Example: %dd hello world\"\"\"
    args = magics.parse(hello, line)
    return None if args is None else f"hello {args.who}"
"""


def test_a_command_is_added_in_one_place(tmp_path, monkeypatch):
    """A module with one decorated function, and nothing else edited: the command is in the
    table, in the overview (its docstring's first sentence) and reserved."""
    (tmp_path / "greetings.py").write_text(NEW_FAMILY)
    monkeypatch.setattr(commands, "__path__", list(commands.__path__) + [str(tmp_path)])
    try:
        found = commands._discover()
        assert list(found)[-1] == "hello" and found["hello"].parser.prog == "dd hello"
        monkeypatch.setattr(commands, "COMMANDS", found)
        assert "%dd hello WHO" in commands.overview() and "Greet someone." in commands.overview()
        from ddlab.kernel_ext import declarations

        assert "hello" in declarations.RESERVED
    finally:
        sys.modules.pop(f"{commands.__name__}.greetings", None)


CLAIMS_STATUS = NEW_FAMILY.replace('"dd hello"', '"dd status"')


def test_two_commands_claiming_one_word_are_refused_at_discovery(tmp_path, monkeypatch):
    """A new module's command with the word of an existing one (manage's ``status``) would
    shadow it; discovery refuses it, naming both functions."""
    (tmp_path / "zz_greetings.py").write_text(CLAIMS_STATUS)
    monkeypatch.setattr(commands, "__path__", list(commands.__path__) + [str(tmp_path)])
    try:
        with pytest.raises(RuntimeError, match=r"%dd status: .*manage\.status and "
                                               r".*zz_greetings\.hello"):
            commands._discover()
    finally:
        sys.modules.pop(f"{commands.__name__}.zz_greetings", None)


def test_help_of_each_command_prints_its_parser(ip, capsys):
    from IPython.utils.capture import capture_output

    for name in COMMANDS:
        with capture_output() as cap:
            assert ip.run_line_magic("dd", f"{name} --help") is None
        assert f"dd {name}" in cap.stdout
    assert dd(ip, "status") is not None
