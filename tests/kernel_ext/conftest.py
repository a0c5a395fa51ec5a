"""Fixtures for the kernel-extension tests: one IPython shell with ddlab loaded, reset per
test; one local Spark session for the tests marked ``spark``; oracles and state snapshots.

The shell is jupysql's TestingShell recipe: history off (its SQLite database otherwise
leaks file handles across many tests), ``run_cell`` raising the cell's error.  Magics are
driven with ``ip.run_line_magic("dd", ...)`` / ``ip.run_cell_magic("dd", NAME, body)``,
which return the magic's value and raise its ``UsageError``.
"""
from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from traitlets.config import Config

from graph_oracle import cc_oracle, scc_oracle  # noqa: F401  (the shared oracle, for the tests here)


class TestingShell(InteractiveShell):
    """An InteractiveShell whose ``run_cell`` raises what the cell raised."""

    def run_cell(self, *args, **kwargs):
        result = super().run_cell(*args, **kwargs)
        result.raise_error()
        return result


@pytest.fixture(scope="session")
def shell():
    config = Config()
    config.HistoryAccessor.enabled = False
    ip = TestingShell.instance(config=config)
    ip.displayhook.flush = lambda: None   # avoids a hang at interpreter exit (jupysql)
    with capture_output() as cap:
        ip.run_line_magic("load_ext", "ddlab")
    ip.ddlab_banner = cap.stdout
    yield ip
    TestingShell.clear_instance()


@pytest.fixture
def ip(shell):
    """The shell with an empty namespace and a fresh ddlab session."""
    from ddlab.kernel_ext import get_magics

    with capture_output():
        shell.reset(new_session=False)   # %reset -f without its gc.collect(): 2-3 s a test
                                         # once earlier tests have filled the heap
        shell.run_line_magic("dd", "reset")
    magics = get_magics(shell)
    magics.display_limit, magics.short_errors, magics.progress = 20, True, True
    yield shell


# -- helpers -------------------------------------------------------------------------------

def dd(ip, line: str):
    """Run ``%dd line``; its value (output printed by the magic is swallowed)."""
    with capture_output():
        return ip.run_line_magic("dd", line)


def cell(ip, line: str, body: str):
    with capture_output():
        return ip.run_cell_magic("dd", line, body)


def html_of(obj) -> str:
    """What the notebook would show for ``obj`` (through the registered formatters)."""
    from IPython import get_ipython

    data, _ = get_ipython().display_formatter.format(obj)
    return data.get("text/html", "")


def user_state(ip) -> dict:
    """Everything a failed magic must leave unchanged: the namespace (names and identities),
    the live flow object, its operators and epoch, the declarations, contents and queue."""
    from ddlab.kernel_ext import get_magics

    s = get_magics(ip).session
    hidden = set(ip.user_ns_hidden)
    return {
        "ns": {k: id(v) for k, v in ip.user_ns.items() if k not in hidden and not k.startswith("_")},
        "flow": id(s.flow), "operators": len(s.flow.operators), "epoch": s.flow.epoch,
        "names": list(s.names), "derived": {n: d.body for n, d in s.derived.items()},
        "contents": {n: s.handle(n).view.to_dict() for n in s.names},
        "pending": s.pending(),
        "feeds": {n: f.position for n, f in s.state.feeds()},
    }


def as_dict(frame: pd.DataFrame) -> dict:
    """A view frame (fields + multiplicity) as ``{record: multiplicity}`` with Python ints."""
    cols = [c for c in frame.columns if c != "multiplicity"]
    return {tuple(int(x) if isinstance(x, (np.integer, int)) else x for x in rec[:-1]): int(rec[-1])
            for rec in frame[cols + ["multiplicity"]].itertuples(index=False)}


def collegemsg_events() -> pd.DataFrame:
    """CollegeMsg parsed by pandas, independently of Spark: src, dst, time (unix seconds)."""
    from ddlab.sources import DatasetNotFound, collegemsg_pandas

    try:
        return collegemsg_pandas()
    except DatasetNotFound as err:
        pytest.skip(str(err))
