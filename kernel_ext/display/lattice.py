"""The lattice trace as a shaded grid: a loop's updates per iteration (rows) and epoch (columns).

Why: the Naiad report's Figures 14-15 show where in the (epoch, iteration) lattice a loop
does its work; ``%dd trace`` shows it for each loop upstream of a collection.  The numbers
come from the engine's ``flow.lattice(loop)``; this module only lays them out.
"""
from __future__ import annotations

from html import escape

import pandas as pd

from .tables import TABLE, TD, TH, log_shade

__all__ = ["lattice_grid", "lattice_html"]


def lattice_grid(cells: pd.DataFrame) -> pd.DataFrame:
    """``flow.lattice(loop)`` (rows ``epoch, iteration, updates``) as a grid: one row per
    iteration, one column per epoch, 0 where nothing happened.

    >>> cells = pd.DataFrame({"epoch": [0, 0, 1], "iteration": [0, 1, 0], "updates": [5, 2, 1]})
    >>> lattice_grid(cells).to_dict("index")
    {0: {0: 5, 1: 1}, 1: {0: 2, 1: 0}}
    """
    if not len(cells):
        return pd.DataFrame()
    grid = cells.pivot_table(index="iteration", columns="epoch", values="updates",
                             aggfunc="sum", fill_value=0).sort_index()
    grid.index = grid.index.astype(int)
    grid.columns = grid.columns.astype(int)
    grid.index.name = "iteration"
    grid.columns.name = "epoch"
    return grid


def lattice_html(grid: pd.DataFrame, loop: str, max_epochs: int = 16) -> str:
    """The grid's last ``max_epochs`` epochs as a table shaded by log(updates)."""
    if grid.empty:
        return ""
    grid = grid[grid.columns[-max_epochs:]]
    top = int(grid.values.max())
    head = "".join(f'<th style="{TH}">{int(e)}</th>' for e in grid.columns)
    rows = []
    for it, row in grid.iterrows():
        cells = []
        for v in row.tolist():
            a = log_shade(v, top)
            color = "#fff" if a > 0.6 else "#24292f"
            cells.append(f'<td style="{TD};text-align:center;background:rgba(9,105,218,'
                         f'{a:.2f});color:{color}">{int(v):,}</td>' if v else
                         f'<td style="{TD};text-align:center;color:#d0d7de">\u00b7</td>')
        rows.append(f'<tr><th style="{TH}">{it}</th>{"".join(cells)}</tr>')
    return (f'<div style="margin-top:6px"><b>lattice</b> of loop {escape(loop)}: updates per '
            f'iteration (rows) and epoch (columns)</div><table style="{TABLE}"><thead><tr>'
            f'<th style="{TH}">iter \\ epoch</th>{head}</tr></thead><tbody>{"".join(rows)}'
            f"</tbody></table>")
