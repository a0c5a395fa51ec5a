"""Under CI a check that cannot run fails instead of skipping (``tests/support/ci.py``):
the lint without ruff, a module's examples without its extra.  ``.ci/run`` sets ``DDLAB_CI=1``
for the README's test command and then runs ``.ci/wheel``."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _test_module(name: str):
    """A test module of this folder, loaded by path (the folder is not a package)."""
    spec = importlib.util.spec_from_file_location(f"ddlab_ci_{name}", ROOT / "tests" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _skips_but_fails_under_ci(monkeypatch, check) -> None:
    monkeypatch.delenv("DDLAB_CI", raising=False)
    with pytest.raises(pytest.skip.Exception):
        check()
    monkeypatch.setenv("DDLAB_CI", "1")
    try:
        check()
    except pytest.skip.Exception as err:      # a skip here would hide the missing check
        raise AssertionError(f"under CI it skipped: {err}") from None
    except pytest.fail.Exception as err:
        assert "fails instead of skipping" in str(err)
    else:
        raise AssertionError("under CI it ran, with what it needs missing")


def test_the_lint_without_ruff_skips_but_fails_under_ci(monkeypatch):
    lint = _test_module("test_lint")
    monkeypatch.setitem(sys.modules, "ruff", None)            # import ruff fails
    monkeypatch.setattr(lint.shutil, "which", lambda name: None)
    _skips_but_fails_under_ci(monkeypatch, lint.test_ruff_passes)


def test_examples_without_their_extra_skip_but_fail_under_ci(monkeypatch):
    doctests = _test_module("test_doctests")
    monkeypatch.setitem(sys.modules, "bokeh", None)           # the lab extra is missing
    monkeypatch.delitem(sys.modules, "ddlab.widgets.latency", raising=False)
    _skips_but_fails_under_ci(monkeypatch, lambda: doctests.test_examples_run(
        "ddlab.widgets.latency"))


def test_ci_runs_the_test_command_under_ddlab_ci_then_the_wheel_check():
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    test = next(i for i, line in enumerate(lines) if 'bash -c "$cmd"' in line)
    assert lines[test].startswith("DDLAB_CI=1 ")
    assert ".ci/wheel" in lines[test + 1:]
