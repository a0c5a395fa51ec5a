"""The magics' rows of the bad-input matrix (the engine's and the Spark loaders' rows are in
tests/engine/test_bad_input_matrix.py, the explorer's failing moves in tests/widgets): each
mistake gives one line naming what and where, and the namespace, the live flow, its epoch,
every declaration, collection, queue and window position read exactly as before."""
from __future__ import annotations

import re
from typing import NamedTuple

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import ddlab

from .conftest import cell, dd, user_state


class Row(NamedTuple):
    kind: str
    line: str                 # a %dd line, or "NAME\nBODY" for a %%dd cell
    match: str                # a regex the one-line message must match


MATRIX = [
    Row("misspelt command", "stpe 1", r"unknown command or collection 'stpe'.*(?i:did you mean)"),
    Row("unknown collection", "show cc2", r"no collection 'cc2'"),
    Row("explore without a window", "explore cc", r"no windowed input is upstream of cc"),
    Row("explore an unknown name", "explore ccc", r"no collection 'ccc'"),
    Row("save with queued rows", "save {tmp}/ck", r"queued but not stepped"),
    Row("load a missing checkpoint", "load {tmp}/nothing-here", r"Nothing was loaded"),
    Row("load a plain Dataflow checkpoint", "load {tmp}/plain", r"holds no %dd session"),
    Row("insert of the wrong arity", "insert edges [(1, 2, 3)]", r"row 0 .* has 3 fields"),
    Row("insert into a derived collection", "insert cc [(1, 2)]", r"'cc' is derived"),
    Row("a variable that is no DataFrame", "input more --from number", r"not a DataFrame"),
    Row("a window without a source", "input more --window 7d --step 1d",
        r"--window needs a source"),
    Row("a body that raises", "bad\nedges.map(lambda r: 1 // 0)",
        r"bad: recomputing the flow .* failed: map#\d+: <lambda> raised ZeroDivisionError"),
    Row("a name clash with a command", "explore\nedges", r"'explore' is a %dd command"),
    Row("save over a file", "save {tmp}/a-file", r"exists and is not a ddlab checkpoint"),
]


@pytest.fixture
def ready(ip, tmp_path):
    ip.user_ns["df"] = pd.DataFrame({"src": [1, 2, 4], "dst": [2, 3, 5]})
    ip.user_ns["number"] = 7
    dd(ip, "input edges --from df")
    cell(ip, "cc", "connected_components(edges)")
    dd(ip, "insert edges [(8, 9)] --no-step")
    plain = ddlab.Dataflow()
    plain.input("xs").insert([1])
    plain.step()
    plain.save(tmp_path / "plain")
    (tmp_path / "a-file").write_text("not a folder")
    return ip


@pytest.mark.parametrize("row", MATRIX, ids=[r.kind for r in MATRIX])
def test_bad_input(ready, row, tmp_path):
    ip = ready
    line = row.line.replace("{tmp}", str(tmp_path))
    if row.kind == "save over a file":
        dd(ip, "step")             # nothing queued, so the file is what is refused
    before = user_state(ip)
    with capture_output(), pytest.raises(UsageError) as info:
        if "\n" in line:
            name, body = line.split("\n", 1)
            ip.run_cell_magic("dd", name, body)
        else:
            ip.run_line_magic("dd", line)
    message = str(info.value)
    assert "\n" not in message.strip(), message
    assert re.search(row.match, message), message
    assert user_state(ip) == before


def test_the_matrix_covers_the_commands():
    assert len(MATRIX) >= 12
