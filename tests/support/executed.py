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

With several test processes (pytest-xdist), the notebooks run in one process and the browser
tests (the export test reads every executed notebook) often in the other, where ``RUNS`` is
empty: each run is therefore also written to a folder the session's processes share
(:func:`share_runs`), and a test in another process reads it from there, waiting for the
notebooks' process to get to it rather than executing the notebook a second time (measured:
16 notebooks executed again, about 200 s of a CI run, in two of three clean-clone runs).
"""
from __future__ import annotations

import json
import os
import time
import warnings
from datetime import datetime
from pathlib import Path

import pytest

try:
    from nbmake import nb_run as _nbmake_run, pytest_items as _nbmake_items
    from nbmake.nb_run import NotebookRun

    from kernel_polling import SlicedPollClient
except ImportError:          # nbmake is in the test extra; without it no notebook runs at all
    _nbmake_items = _nbmake_run = None
    NotebookRun = object
    SlicedPollClient = object

from export_recipe import execute_options

#: resolved notebook path -> nbmake's NotebookResult (``.nb``: the executed document, ``.error``)
RUNS: dict = {}


#: a notebook run longer than this is reported with where its time went (:func:`slow_run_report`)
SLOW_RUN_SECONDS = 120.0


class KeepingRun(NotebookRun):
    """nbmake's runner, unchanged, that also keeps what it executed, and reports a slow run."""

    def execute(self):
        start = time.time()
        result = super().execute()
        RUNS[Path(self.filename).resolve()] = result
        _write_shared(Path(self.filename).resolve(), result)
        report = slow_run_report(Path(self.filename).name, result.nb, start, time.time())
        if report:
            warnings.warn(report, SlowNotebookRun, stacklevel=1)
        return result


class SlowNotebookRun(UserWarning):
    """A notebook's run took far longer than it does alone: where its time went."""


def _stamp(text) -> float | None:
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def slow_run_report(name: str, nb, start: float, end: float,
                    threshold: float = SLOW_RUN_SECONDS) -> str | None:
    """One line on a run over ``threshold`` seconds: its slowest cells (from the timing
    nbmake records, ``record_timing``), the time outside every cell (the kernel's start and
    shutdown) and the longest wait between two cells.  An intermittent stall of about 300 s
    in CI runs (lessons 08 and 09, 2026-11-27) was placed by this report between two cells, then
    found to be a reply the client did not see for nbmake's 300 s timeout (:mod:`kernel_polling`)."""
    total = end - start
    if total <= threshold:
        return None
    spans = []  # (busy, idle, index, id) of every timed cell, in the order they ran
    for index, cell in enumerate(nb.cells):
        timing = cell.get("metadata", {}).get("execution", {})
        began, ended = _stamp(timing.get("iopub.status.busy")), _stamp(timing.get("iopub.status.idle"))
        if began is not None and ended is not None:
            spans.append((began, ended, index, cell.get("id")))
    spans.sort()
    cells = [(ended - began, index, cid) for began, ended, index, cid in spans]
    slowest = ", ".join(f"cell {i} ({cid}) {sec:.1f} s" for sec, i, cid in sorted(cells, reverse=True)[:3])
    before = f"{spans[0][0] - start:.1f} s before its first cell" if spans else "no cell timed"
    after = f", {end - max(span[1] for span in spans):.1f} s after its last" if spans else ""
    # between two cells: the kernel went idle after one and said busy with the next this much later
    gap = max(((b[0] - a[1], a, b) for a, b in zip(spans, spans[1:])), default=None, key=lambda g: g[0])
    between = (f"; the longest wait between two cells {gap[0]:.1f} s, after cell {gap[1][2]} "
               f"({gap[1][3]}) and before cell {gap[2][2]} ({gap[2][3]})") if gap and gap[0] > 1.0 else ""
    return (f"{name} took {total:.1f} s: {before}{after} (the kernel's start and shutdown); "
            f"cells {sum(c[0] for c in cells):.1f} s, the slowest {slowest or 'none'}{between}")


class RecipeClient(SlicedPollClient):
    """The notebook client with the README export recipe's ``ExecutePreprocessor`` options
    (:mod:`export_recipe`), so the suite's run of a notebook is the run a reader's
    ``jupyter nbconvert --execute`` makes: with ``store_widget_state=False`` nbclient stops on an
    ``Output`` widget's captured output (a ``KeyError``, lessons 08 and 09 until round three)
    here as there.  It still records every widget's state aside and writes it into the
    executed document at the end, as nbclient does by default, for the tests that read what
    the widgets showed (the claims, the export test's oracle, which drops it before exporting,
    leaving the document the recipe exports)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, value in execute_options().items():
            setattr(self, name, value)
        self._recorded: dict = {}
        self._recorded_buffers: dict = {}

    def handle_comm_msg(self, outs, msg, cell_index):
        content = msg["content"]
        data = content["data"]
        if not self.store_widget_state and "state" in data:   # (nbclient's own recording)
            comm_id = content["comm_id"]
            self._recorded.setdefault(comm_id, {}).update(data["state"])
            if data.get("buffer_paths"):
                self._recorded_buffers.setdefault(comm_id, {}).update(
                    {tuple(k["path"]): k for k in self._get_buffer_data(msg)})
        super().handle_comm_msg(outs, msg, cell_index)

    def set_widgets_metadata(self):
        if not self.store_widget_state:
            self.widget_state, self.widget_buffers = self._recorded, self._recorded_buffers
        super().set_widgets_metadata()


def keep_nbmake_runs() -> None:
    """Make nbmake's notebook items run through ``KeepingRun``, with a client that cannot
    lose a kernel's reply for the cell timeout (:mod:`kernel_polling` says why) and runs as
    the README's export recipe does (:class:`RecipeClient`)."""
    if _nbmake_items is not None:
        _nbmake_items.NotebookRun = KeepingRun
        _nbmake_run.NotebookClient = RecipeClient


def executed(path: Path, config) -> dict:
    """The executed document of the notebook at ``path``: nbmake's run of this session, or a
    run made now with the same options.  Fails (naming the failing cell) if the notebook did
    not run to the end."""
    path = Path(path).resolve()
    if path not in RUNS:
        shared = _read_shared(path)
        if shared is not None:
            RUNS[path] = shared
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


# -- runs shared between the session's test processes ------------------------------------------

#: the folder the session's processes share (``None``: one process, or not set up)
_SHARED: dict = {"dir": None, "expected": frozenset(), "gave_up": False}
#: how long a test waits for another process's run of a notebook before running it itself
#: (the notebooks' process runs them one after the other: about 10 minutes for all of them)
SHARED_WAIT_SECONDS = 900.0


def share_runs(folder: Path, expected) -> None:
    """Write every run of this process to ``folder`` and read the others' from it;
    ``expected``: the notebooks this session's nbmake items run (a test waits for those)."""
    folder.mkdir(parents=True, exist_ok=True)
    _SHARED.update(dir=folder, expected=frozenset(Path(p).resolve() for p in expected))


def _shared_file(path: Path) -> Path:
    return _SHARED["dir"] / (path.stem + ".ipynb")


def _write_shared(path: Path, result) -> None:
    if _SHARED["dir"] is None:
        return
    import nbformat

    target = _shared_file(path)
    error = result.error
    meta = None if error is None else {"summary": error.summary, "trace": error.trace,
                                        "failing_cell_index": error.failing_cell_index}
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        nbformat.write(result.nb, fh)
    target.with_suffix(".error.json").write_text(json.dumps(meta))
    os.replace(tmp, target)  # (the notebook last: its presence says both are complete)


def _read_shared(path: Path):
    """Another process's run of the notebook at ``path``, waiting for it while that process
    will still run it; ``None`` if none is coming (or waiting once took too long)."""
    if _SHARED["dir"] is None:
        return None
    target = _shared_file(path)
    deadline = time.monotonic() + SHARED_WAIT_SECONDS
    while not target.exists():
        if path not in _SHARED["expected"] or _SHARED["gave_up"]:
            return None
        if time.monotonic() > deadline:
            _SHARED["gave_up"] = True  # (the notebooks' process is gone: never wait again)
            return None
        time.sleep(1.0)
    import nbformat
    from nbmake.nb_result import NotebookError, NotebookResult

    meta = json.loads(target.with_suffix(".error.json").read_text())
    with open(target, encoding="utf-8") as fh:
        nb = nbformat.read(fh, as_version=4)
    return NotebookResult(nb=nb, error=None if meta is None else NotebookError(**meta))
