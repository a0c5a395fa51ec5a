"""Each notebook executed once per test session, and the executed document kept for the tests
that read what it printed (the claims test, ``tests/notebooks/test_claims.py``; the export
test, ``tests/ui/test_exported_figures.py``, which also reads the widget state nbclient
records).

Why this way: the suite already runs every notebook with nbmake (``--nbmake``, one item per
``.ipynb``), which executes it and then drops the executed document.  ``keep_nbmake_runs()``
(called from ``tests/conftest.py``) makes nbmake's own run keep it, so a test placed after the
notebook's item reads that run instead of executing the notebook a second time; a test whose
notebook item is not in the session (``-k``, ``-m``) executes the notebook itself, with nbmake's
runner and options, once.
"""
from __future__ import annotations

from pathlib import Path

import pytest

try:
    from nbmake import pytest_items as _nbmake_items
    from nbmake.nb_run import NotebookRun
except ImportError:          # nbmake is in the test extra; without it no notebook runs at all
    _nbmake_items = None
    NotebookRun = object

#: resolved notebook path -> nbmake's NotebookResult (``.nb``: the executed document, ``.error``)
RUNS: dict = {}


class KeepingRun(NotebookRun):
    """nbmake's runner, unchanged, that also keeps what it executed."""

    def execute(self):
        result = super().execute()
        RUNS[Path(self.filename).resolve()] = result
        return result


def keep_nbmake_runs() -> None:
    """Make nbmake's notebook items run through ``KeepingRun``."""
    if _nbmake_items is not None:
        _nbmake_items.NotebookRun = KeepingRun


def executed(path: Path, config) -> dict:
    """The executed document of the notebook at ``path``: nbmake's run of this session, or a
    run made now with the same options.  Fails (naming the failing cell) if the notebook did
    not run to the end."""
    path = Path(path).resolve()
    if path not in RUNS:
        if _nbmake_items is None:
            pytest.fail("executing notebooks needs nbmake (pip install -e '.[test]')")
        option = config.option
        timeout, kernel = getattr(option, "nbmake_timeout", 300), getattr(option, "nbmake_kernel", None)
        KeepingRun(path, timeout, kernel=kernel).execute()
    result = RUNS[path]
    if result.error is not None:
        pytest.fail(f"{path.name} did not run to the end (cell {result.error.failing_cell_index}: "
                    f"{result.error.summary}); its own test shows the traceback")
    return result.nb
