"""The README's snippets run as pasted, in order, so they cannot drift from the code.

``python`` blocks run in a fresh interpreter each (the Spark ones one after the other in one
interpreter, each in a namespace of its own; they skip with the reason when Spark is unusable
here); the ``ipython`` block runs cell by cell (paragraphs) in an IPython
shell.  The two set-up commands are checked for shape: CI runs the test command itself."""
from __future__ import annotations

import json
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


SNIPPETS = _blocks("python")
#: the snippets that start Spark: run one after the other in one interpreter (one JVM start,
#: half a minute of the suite each), each in a namespace of its own, so each still runs on
#: its own imports and names alone
SPARK_SNIPPETS = tuple(i for i, code in enumerate(SNIPPETS) if "ddlab.sources" in code)

#: runs the snippets given on stdin (index, code) in turn, each in a fresh ``__main__``
#: namespace, marking on stdout and stderr where each starts and on stdout each one that ran
_SHARED_INTERPRETER = r"""
import json, sys, traceback
for index, code in json.load(sys.stdin):
    for stream in (sys.stdout, sys.stderr):
        print(f"<<readme snippet {index}>>", file=stream, flush=True)
    try:
        exec(compile(code, f"<README python block {index}>", "exec"), {"__name__": "__main__"})
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        continue
    print(f"<<readme snippet {index} ran>>", flush=True)
"""

#: index -> (returncode, stdout, stderr) of its run; a snippet sharing an interpreter gets
#: that interpreter's exit status, its own part of stderr and the whole stdout
_RUNS: dict = {}


def _snippet_run(index: int, folder: Path) -> tuple[int, str, str]:
    """The snippet's run as pasted (once per session: the quick-start test reads it too)."""
    if index not in _RUNS:
        if index in SPARK_SNIPPETS:
            done = subprocess.run([sys.executable, "-c", _SHARED_INTERPRETER], cwd=folder,
                                  input=json.dumps([(i, SNIPPETS[i]) for i in SPARK_SNIPPETS]),
                                  capture_output=True, text=True, timeout=300 * len(SPARK_SNIPPETS))
            parts = re.split(r"<<readme snippet (\d+)>>\n", done.stderr)
            own = {int(i): part for i, part in zip(parts[1::2], parts[2::2])}
            for i in SPARK_SNIPPETS:
                ran = f"<<readme snippet {i} ran>>" in done.stdout
                _RUNS[i] = (done.returncode if ran else 1, done.stdout,
                            parts[0] + own.get(i, "(not reached: the interpreter stopped before)"))
        else:
            done = subprocess.run([sys.executable, "-c", SNIPPETS[index]], cwd=folder,
                                  capture_output=True, text=True, timeout=300)
            _RUNS[index] = (done.returncode, done.stdout, done.stderr)
    return _RUNS[index]


@pytest.mark.parametrize("index", [
    pytest.param(i, marks=[pytest.mark.spark, pytest.mark.slow] if i in SPARK_SNIPPETS else [])
    for i in range(len(SNIPPETS))])
def test_python_snippet_runs_as_pasted(index, tmp_path_factory):
    if index in SPARK_SNIPPETS:
        ok, why = _spark_usable()
        if not ok:
            pytest.skip(why)
    returncode, stdout, stderr = _snippet_run(index, tmp_path_factory.mktemp("readme"))
    assert returncode == 0, stderr[-3000:]
    assert "Traceback" not in stderr
    assert "WARNING: Using incubator modules" not in stderr + stdout


def test_quick_start_prints_what_its_comments_say(tmp_path_factory):
    _, stdout, _ = _snippet_run(0, tmp_path_factory.mktemp("readme"))
    assert "{(1, 1): 1, (2, 1): 1, (3, 1): 1, (4, 4): 1, (5, 4): 1}" in stdout


@pytest.mark.spark
def test_ipython_snippet_runs_cell_by_cell():
    ok, why = _spark_usable()
    if not ok:
        pytest.skip(why)
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryAccessor.enabled = False
    # the process's one shell: another test's (tests/kernel_ext) when it made one first, which
    # must keep ddlab loaded after this test
    ours = not InteractiveShell.initialized()
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
        if ours:
            shell.run_line_magic("unload_ext", "ddlab")
            InteractiveShell.clear_instance()


def test_two_setup_commands():
    main = re.search(r"<!-- main-command -->\n```bash\n(.*?)\n```", TEXT, flags=re.S).group(1)
    test = re.search(r"<!-- test-command.*?-->\n```bash\n(.*?)\n```", TEXT, flags=re.S).group(1)
    assert main.startswith('pip install -e ".[lab]"') and "jupyter lab notebooks/demo.ipynb" in main
    assert test == 'pip install -e ".[test]" && python -m pytest'
    assert (README.parent / "notebooks" / "demo.ipynb").exists()
