"""Each notebook executed once per test session, its outputs kept for the tests that read them.

Why: nbmake runs every notebook top to bottom (the ``notebooks`` items) and throws the outputs
away; a test that needs them (the exported-HTML test) would run the lessons a second time,
minutes of the suite.  :func:`keep_nbmake_runs` wraps nbmake's run so the executed copy of
each notebook that ran without an error is kept here; :func:`executed` returns it, or runs the
notebook the same way (nbmake's own runner) when it did not run in this session (a test run on
its own).  The copies hold the widget state nbclient records (its default), which tests may
use as an oracle of what each widget output holds.
"""
from __future__ import annotations

from pathlib import Path

from nbformat import NotebookNode

_KEPT: dict[Path, NotebookNode] = {}


def keep_nbmake_runs() -> None:
    """From now on, keep what nbmake's runs produce (once per process)."""
    try:
        from nbmake.nb_run import NotebookRun
    except ImportError:   # without nbmake nothing runs the notebooks: nothing to keep
        return
    if getattr(NotebookRun.execute, "_keeps_runs", False):
        return
    run = NotebookRun.execute

    def execute(self):
        result = run(self)
        if result.error is None:
            _KEPT[Path(self.filename).resolve()] = result.nb
        return result

    execute._keeps_runs = True
    NotebookRun.execute = execute


def executed(path: Path, timeout: int = 600) -> NotebookNode:
    """``path`` executed top to bottom: nbmake's copy from this session, or a run now with
    nbmake's runner (an error in the notebook fails the caller, naming the cell)."""
    path = Path(path).resolve()
    if path not in _KEPT:
        from nbmake.nb_run import NotebookRun

        result = NotebookRun(path, timeout).execute()
        if result.error is not None:
            raise AssertionError(f"{path.name} failed: {result.error.summary}\n{result.error.trace}")
        _KEPT[path] = result.nb
    return _KEPT[path]
