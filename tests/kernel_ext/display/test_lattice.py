"""The lattice grid of ``%dd trace``: ``flow.lattice`` laid out per iteration and epoch."""
from __future__ import annotations

import doctest

import pandas as pd

from ddlab.kernel_ext.display import lattice
from ddlab.kernel_ext.display.lattice import lattice_grid, lattice_html

from .flows import small_flow


def test_grid_totals_match_the_statistics_per_epoch():
    flow, edges, _ = small_flow()
    edges.insert([(3, 1)])
    edges.remove([(2, 1)])
    flow.step()
    grid = lattice_grid(flow.lattice("root/scc"))
    stats = flow.stats()
    inside = stats[stats["scope"].str.startswith("root/scc")]
    assert list(grid.columns) == [0, 1] and grid.index.min() == 0
    # an independent count: every update emitted inside the loop, per epoch
    assert grid.sum().to_dict() == inside.groupby("epoch")["out"].sum().to_dict()


def test_html_shades_the_cells_and_keeps_the_last_epochs():
    cells = pd.DataFrame({"epoch": list(range(20)), "iteration": [0] * 20,
                          "updates": list(range(1, 21))})
    html = lattice_html(lattice_grid(cells), "root/cc", max_epochs=16)
    assert "lattice</b> of loop root/cc" in html and "rgba(9,105,218" in html
    assert ">3</th>" not in html and ">4</th>" in html      # epochs 0-3 cut, 4-19 kept
    assert lattice_html(lattice_grid(cells.iloc[0:0]), "root/cc") == ""


def test_docstring_examples():
    result = doctest.testmod(lattice)
    assert result.attempted >= 1 and result.failed == 0
