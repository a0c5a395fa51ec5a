"""The README's export recipe (``jupyter nbconvert --to html --execute ...``), read from the
README itself, so the tests run the command a reader pastes.

Why: the recipe once crashed lessons 08 and 09 (nbclient's ``KeyError`` on their ``Output``
widgets under ``--ExecutePreprocessor.store_widget_state=False``) while every test passed,
because the suite executed notebooks with other options.  Now the suite's one run of each
notebook uses the recipe's ``ExecutePreprocessor`` options (:func:`execute_options`,
``executed.RecipeClient``) and the export test converts that run with the recipe's own
command, less ``--execute`` (:func:`export_command`); one test runs the whole command as
written.
"""
from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
_MARK = re.compile(r"<!-- export-recipe -->\n```bash\n(.*?)\n```", re.S)
_OPTION = re.compile(r"--ExecutePreprocessor\.(\w+)=(.*)")


def recipe() -> list[str]:
    """The recipe's words after ``jupyter``: ``["nbconvert", "--to", "html", ..., NOTEBOOK]``."""
    found = _MARK.search(README.read_text(encoding="utf-8"))
    if found is None:
        raise LookupError(f"{README}: no export recipe (a bash block after <!-- export-recipe -->)")
    words = shlex.split(found.group(1))
    if words[:2] != ["jupyter", "nbconvert"] or not words[-1].endswith(".ipynb"):
        raise ValueError(f"{README}: the export recipe is not `jupyter nbconvert ... NOTEBOOK`: {found.group(1)}")
    return words[1:]


def execute_options() -> dict:
    """The recipe's ``--ExecutePreprocessor.NAME=VALUE`` options, as trait values."""
    options = {}
    for word in recipe():
        match = _OPTION.fullmatch(word)
        if match:
            value = match.group(2)
            options[match.group(1)] = {"True": True, "False": False}.get(value, value)
    return options


def command(notebook: Path) -> list[str]:
    """The whole recipe, for ``notebook`` (``jupyter`` as ``python -m``: the one of this
    interpreter, whose kernel runs this checkout)."""
    return [sys.executable, "-m", *recipe()[:-1], str(notebook)]


def export_command(executed_notebook: Path) -> list[str]:
    """The recipe less ``--execute``: what it does to a notebook once executed."""
    return [word for word in command(executed_notebook) if word != "--execute"]
