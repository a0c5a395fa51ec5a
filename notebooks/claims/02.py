"""Lesson 2's prose numbers, each read from what the executed lesson printed (its Figure 5
table, the δX lines, the %dd graph drawing) or from its parameters cell (the graph)."""
import re

from prose_claims import Claim, Exempt


def _figure5(nb):
    """{node: [label at (0, 0), (0, 1), ...]} from the Figure 5 table the lesson printed."""
    table = nb.table("figure5 = pd.DataFrame")
    return {int(n): [int(v) for v in row.values()] for n, row in table.items()}


def _changed(nb, i):
    """Nodes whose label changes from iteration i - 1 to i."""
    return sum(1 for labels in _figure5(nb).values() if i < len(labels) and labels[i] != labels[i - 1])


def _records(nb, i):
    return nb.find(rf"δX\[\(0, {i}\)\]:\s+(\d+) records")


def _last_change(nb):
    printed = [i for i in range(1, 7) if _records(nb, i) > 0]
    return max(printed, default=0)


def _carried(nb, kind):
    """Updates on the edge out of the operator of ``kind`` in the %dd graph drawing (its SVG)."""
    svg = nb.raw("harness = %dd graph labels")
    op = re.search(rf'data-id="(\d+)" data-kind="{kind}"', svg).group(1)
    return int(re.search(rf'data-source="{op}" data-target="\d+" data-updates="(\d+)"', svg).group(1))


def _variable_id(nb):
    svg = nb.raw("harness = %dd graph labels")
    return re.search(r'data-id="(\d+)" data-kind="concat"><title>variable#', svg).group(1)


CLAIMS = [
    Exempt("Sections 2.3 (Figures 3-5), 3.2, 5.1.1", "section numbers of the report"),
    Claim("a last label change at iteration 3, none at 4 | node 5 changes at 3",
          lambda nb: [_last_change(nb), _last_change(nb) + 1,
                      next(n for n, labels in _figure5(nb).items() if labels[-1] != labels[-2]), _last_change(nb)]),
    Exempt("nodes 1 and 3 keep other edges (else they would vanish) | 1-2 and 3-6",
           "node names of the parameters' graph; test_lesson2_graph_meets_what_the_report_says checks the row"),
    Exempt("node 3's label is 1 at `(0, 1)` and 3 at `(1, 1)`",
           "node names and labels the report states (lesson 3's test_lesson3_removing_1_3... checks them)"),
    Exempt("node 3's other neighbours all above 3 (no 2-3) | 3's neighbours: 1, 6",
           "node names of the parameters' graph; test_lesson2_graph_meets_what_the_report_says checks the row"),
    Claim("the graph the 6-cycle", lambda nb: len(nb.parameters["EDGES"])),
    Exempt("removing 1-3 leaves the graph connected", "the edge's name (lesson 3 removes it)"),
    Claim("At `(0, 1)` 5 nodes change (10 records in difference",
          lambda nb: [0, 1, _changed(nb, 1), _records(nb, 1)]),
    Claim("at `(0, 2)` 3, at `(0, 3)` 1, at `(0, 4)` none. Node 5 holds 4 versions (5, 4, 2, 1): 3 of them",
          lambda nb: [0, 2, _changed(nb, 2), 0, 3, _changed(nb, 3), 0, 4, 5, len(_figure5(nb)[5]),
                      _figure5(nb)[5], len(_figure5(nb)[5]) - 1]),
    Claim("The ingress edge carries 12", lambda nb: _carried(nb, "ingress")),
    Claim("6 + 10 + 6 + 2 = 24 records",
          lambda nb: [_records(nb, 0), _records(nb, 1), _records(nb, 2), _records(nb, 3),
                      int(re.search(rf'data-source="{_variable_id(nb)}" data-target="\d+" data-updates="(\d+)"',
                                    nb.raw("harness = %dd graph labels")).group(1))]),
    Claim("`feedback` carries 14", lambda nb: _carried(nb, "feedback")),
    Claim("cancel, leaving 10", lambda nb: _records(nb, 1)),
]
