"""The suite runs every notebook as the README's export recipe does (``executed.RecipeClient``
with the recipe's ``ExecutePreprocessor`` options, read from the README), so a notebook the
recipe cannot run fails its own test: the ``Output`` widget block that stopped lessons 08 and
09 under the recipe (nbclient's ``KeyError``) stops a notebook here too, and the widgets' state
is still recorded for the tests that read it."""
from __future__ import annotations

import nbformat
import pytest

pytest.importorskip("nbclient")

from executed import RecipeClient  # noqa: E402
from export_recipe import command, execute_options, export_command, recipe  # noqa: E402

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _run(tmp_path, *cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    RecipeClient(nb, timeout=120, kernel_name="python3",
                 resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb


def test_the_recipe_is_read_from_the_readme():
    words = recipe()
    assert words[:3] == ["nbconvert", "--to", "html"] and "--execute" in words
    assert execute_options() == {"store_widget_state": False}
    assert command(words[-1])[-1] == words[-1] and "--execute" in command(words[-1])
    assert "--execute" not in export_command(words[-1])


def test_the_suites_runs_use_the_recipes_options():
    from nbmake import nb_run

    assert nb_run.NotebookClient is RecipeClient
    assert RecipeClient(nbformat.v4.new_notebook()).store_widget_state is False


def test_an_output_widget_block_stops_the_run_as_the_recipe_does(tmp_path):
    with pytest.raises(KeyError):           # nbclient.output_widget: no state to write the output to
        _run(tmp_path, "import ipywidgets as w\nout = w.Output()\ndisplay(out)\n"
                       "with out:\n    print('captured by the front end')")


def test_the_widget_state_is_still_recorded(tmp_path):
    nb = _run(tmp_path, "import ipywidgets as w\ndisplay(w.IntSlider(value=7, description='k'))")
    state = nb.metadata["widgets"][WIDGET_STATE]["state"]
    sliders = [m["state"] for m in state.values() if m["model_name"] == "IntSliderModel"]
    assert [(s["value"], s["description"]) for s in sliders] == [(7, "k")]
