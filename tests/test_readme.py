"""The README's snippets run as pasted, in order, so they cannot drift from the code.

``python`` blocks run in a fresh interpreter each (the Spark one skips with the reason when
Spark is unusable here); the ``ipython`` block runs cell by cell (paragraphs) in an IPython
shell.  The two set-up commands are checked for shape: CI runs the test command itself."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
TEXT = README.read_text()


def _blocks(lang: str) -> list[str]:
    return re.findall(r"```%s\n(.*?)```" % lang, TEXT, flags=re.S)


def _spark_usable() -> tuple[bool, str]:
    from ddlab.sources import spark_status

    return spark_status()


@pytest.mark.parametrize("index", [
    pytest.param(i, marks=[pytest.mark.spark, pytest.mark.slow] if "ddlab.sources" in code else [])
    for i, code in enumerate(_blocks("python"))])
def test_python_snippet_runs_as_pasted(index, tmp_path):
    code = _blocks("python")[index]
    if "ddlab.sources" in code:
        ok, why = _spark_usable()
        if not ok:
            pytest.skip(why)
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert "WARNING: Using incubator modules" not in done.stderr + done.stdout


def test_quick_start_prints_what_its_comments_say():
    code = _blocks("python")[0]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert "{(1, 1): 1, (2, 1): 1, (3, 1): 1, (4, 4): 1, (5, 4): 1}" in done.stdout


@pytest.mark.spark
def test_ipython_snippet_runs_cell_by_cell():
    ok, why = _spark_usable()
    if not ok:
        pytest.skip(why)
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryAccessor.enabled = False
    shell = InteractiveShell.instance(config=config)
    try:
        for cell in _blocks("ipython")[0].strip().split("\n\n"):
            result = shell.run_cell(cell)
            assert result.success, f"cell failed:\n{cell}\n{result.error_in_exec!r}"
        explorer = result.result                  # the last cell's value: %dd explore scc
        scc = shell.user_ns["scc"]
        assert scc.flow.epoch == 7  # the first result, five steps forward, one back
        assert type(explorer).__name__ == "Explorer" and explorer.position == 4
    finally:
        shell.run_line_magic("unload_ext", "ddlab")
        InteractiveShell.clear_instance()


def test_two_setup_commands():
    main = re.search(r"<!-- main-command -->\n```bash\n(.*?)\n```", TEXT, flags=re.S).group(1)
    test = re.search(r"<!-- test-command.*?-->\n```bash\n(.*?)\n```", TEXT, flags=re.S).group(1)
    assert main.startswith('pip install -e ".[lab]"') and "jupyter lab notebooks/demo.ipynb" in main
    assert test == 'pip install -e ".[test]" && python -m pytest'
    assert (README.parent / "notebooks" / "demo.ipynb").exists()
