"""The command table the dispatcher reads: every command parses its own --help."""
from __future__ import annotations

from ddlab.kernel_ext.commands import CELL_COMMANDS, COMMANDS, DEFINE
from ddlab.kernel_ext.declarations import RESERVED

from ..conftest import dd


def test_every_command_has_a_parser_and_a_reserved_name():
    assert set(COMMANDS) | set(CELL_COMMANDS) | {"help"} == RESERVED
    for name, command in {**COMMANDS, **CELL_COMMANDS}.items():
        assert command.parser.prog.endswith(name)
    assert DEFINE.parser.prog == "%dd"


def test_help_of_each_command_prints_its_parser(ip, capsys):
    from IPython.utils.capture import capture_output

    for name in COMMANDS:
        with capture_output() as cap:
            assert ip.run_line_magic("dd", f"{name} --help") is None
        assert f"dd {name}" in cap.stdout
    assert dd(ip, "status") is not None
