"""Lesson 3's prose numbers, each read from what the executed lesson printed (records per
epoch, label versions, the three strategies' tables) or quoted from the papers."""
import re

from prose_claims import Claim, Exempt, Quote


def _versions(nb, node, epoch):
    """[(label, iteration), ...] of a node in an epoch, from the versions table the lesson printed."""
    cell = nb.table("figure7_widget = BokehModel")[str(node)][f"epoch {epoch}"]
    return [tuple(int(x) for x in v.split("@")) for v in cell.split(", ")]


def _per_epoch(nb):
    printed = nb.find(r"records in difference of the loop variable, per epoch: (\{[^}]*\})")
    return {int(k): int(v) for k, v in re.findall(r"(\d+): (\d+)", printed)}


def _fixed(nb):
    printed = nb.find(r"each epoch's fixed point \(last label change\): (\{.*\})")
    return {int(e): int(i) for e, i in re.findall(r"(\d+): \(\d+, (\d+)\)", printed)}


def _strategies(nb):
    return {k: int(v["total"]) for k, v in nb.table("counts = three_strategies(REMOVED)").items()}


def _node(nb, node):
    row = nb.table("node_costs = per_node")[str(node)]
    return {k: (int(v) if v.isdigit() else [int(x) for x in re.findall(r"\d+", v)]) for k, v in row.items()}


CLAIMS = [
    Exempt("Sections 2.4 (Figure 7), 3.2-3.3 (Figures 14, 15)", "section numbers of the report"),
    Quote("at `(1, 1)` node 3's label is 3 where it was 1 at `(0, 1)`", "report",
          "In iteration t = (1, 1) the label for node 3 is 3, whereas it was 1 in iteration t = (0, 1)"),
    Claim('node 3 drops its version "1 at iteration 1" (the report\'s unshaded circle) and, since '
          'our graph stays connected without 1-3, gains "2 at iteration 4" and "1 at iteration 5"',
          lambda nb: [3, [v for v in _versions(nb, 3, 0) if v not in _versions(nb, 3, 1)],
                      1, 3, [v for v in _versions(nb, 3, 1) if v not in _versions(nb, 3, 0)]]),
    Claim("12 records in difference against epoch 0's 24", lambda nb: [_per_epoch(nb)[1], 0, _per_epoch(nb)[0]]),
    Claim("makes epoch 1 run 2 iterations longer than epoch 0", lambda nb: [1, _fixed(nb)[1] - _fixed(nb)[0], 0]),
    Exempt("(so at least five batches, 0 to 4;", "deduced from the report's box (4, 17): batches numbered 0 to 4"),
    Claim("Its difference holds 2 records although the labels change by 4 records between",
          lambda nb: [nb.find(r"δX\[\(1, 2\)\] = .*: (\d+) records"), nb.find(r"X\(1, 2\) − X\(1, 1\): (\d+) records")]),
    Claim("those 2 changes happen exactly as", lambda nb: len(nb.find(r"labels that changed: nodes ([\d, ]+)").split(","))),
    Exempt('(zero is a bar of height 0 with its label "0")', "how the chart draws an empty iteration"),
    Claim("2 records against 8", lambda nb: [nb.find(r"A11 − δA00 − δA01 − δA10 = .*\((\d+) records\)"),
                                             nb.find(r"A11 − A10 \(total order\)\s+= .*\((\d+) records\)")]),
    Claim("Removing 1-3, restarting costs a whole run (28 records, more than epoch 0's 24",
          lambda nb: [nb.parameters["REMOVED"], _strategies(nb)["restart"], 0, _per_epoch(nb)[0]]),
    Claim("reuse epoch 0 cost 12 records each",
          lambda nb: [0, _strategies(nb)["same iteration"] if _strategies(nb)["same iteration"] == _strategies(nb)["grid"]
                      else None]),
    Claim("Node 3's label differs from the old one at 4 iterations: \"same iteration\" pays 8 records, 2 at each. "
          "The grid pays 6 for it, 2 at each of 3 iterations: the old change at iteration 1 undone, the new ones at "
          "iterations 4 and 5 added. For node 6 they pay 4 and 6. The totals happen to meet at 12.",
          lambda nb: [3, len(_node(nb, 3)["same iteration pays at"]), _node(nb, 3)["same iteration (records)"],
                      _node(nb, 3)["same iteration (records)"] // len(_node(nb, 3)["same iteration pays at"]),
                      _node(nb, 3)["grid (records)"], _node(nb, 3)["grid (records)"] // len(_node(nb, 3)["grid pays at"]),
                      len(_node(nb, 3)["grid pays at"]), _node(nb, 3)["grid pays at"],
                      6, _node(nb, 6)["same iteration (records)"], _node(nb, 6)["grid (records)"], _strategies(nb)["grid"]]),
    Quote("Those 67 compare the grid with\nrestarting", "cidr", "only 67 differences are processed"),
    Quote("whose one-second slide of a\n24-hour Twitter window processes 67 records", "cidr",
          "when the initial 24-hour window slides by one second, that only 67 differences are processed"),
    Exempt("node 5 still hears 4, then 2, then 1 through node 4, and node 6 still hears 3 then 1 through node 3",
           "labels of the worked answer on the parameters' graph; the cell after it checks the answer"),
    Exempt("node 3 goes back from 2 to 3 and node 6 from 1 to 2",
           "labels of the worked answer, worked by hand; the panel of (2, 4) shows them"),
    Claim("the grid\nneeded 468 records in difference where restarting needed 33,777, 1.4% of it",
          lambda nb: [_real(nb)["grid"], _real(nb)["restart"], 100 * _real(nb)["grid"] / _real(nb)["restart"]]),
    Claim("468 records against 744", lambda nb: [_real(nb)["grid"], _real(nb)["same"]]),
    Claim("it did on 3 of the 6 moves", lambda nb: [_real(nb)["more"], _real(nb)["moves"]]),
]


def _real(nb):
    """The three strategies' totals on CollegeMsg's moved window, as the lesson printed them."""
    restart, same, grid, more, moves = nb.find(r"restart ([\d,]+), same iteration ([\d,]+), grid ([\d,]+) records.*?"
                                               r"the grid pays more than same iteration on (\d+) of the (\d+) moves")
    return dict(restart=restart, same=same, grid=grid, more=more, moves=moves)
