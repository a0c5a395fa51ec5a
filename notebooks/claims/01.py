"""Lesson 1's prose numbers, each read from what the executed lesson printed."""
from prose_claims import Claim, Exempt

CLAIMS = [
    Exempt("Epochs are numbered 0, 1, 2", "the numbering convention, not a measurement"),
    Claim("the count becomes 1, so the record",
          lambda nb: nb.find(r"\(\('A', (\d+)\), \(2,\), 1\)")),
    Claim("The first epoch with input takes far longer than the later ones", lambda nb: _first_is_slow(nb)),
    Claim("the conventional system sends `0 + 4 + 3 + 2 = 9` records, ddlab sends `0 + 3 + 1 + 1 = 5` updates",
          lambda nb: _sent(nb)),
]


def _sent(nb):
    """Per time, the records of the whole input collection and the input updates, from the
    Figure 13 table the lesson printed; then the totals it printed."""
    rows = nb.tables("figure13 = W.HTML(figure13_html(times=FIGURE_TIMES))")[0]
    whole = next(r for r in rows if r[0] == "input collection")[1:5]
    diffs = next(r for r in rows if r[0] == "input differences")[1:5]
    sizes = [0 if c == "∅" else len(c.strip("{}").split(", ")) for c in whole]
    updates = [0 if c == "(none)" else len(c.split(", ")) for c in diffs]
    totals = nb.find(r"whole collections: (\d+) records; differences: (\d+) updates")
    return [*sizes, totals[0], *updates, totals[1]]


def _first_is_slow(nb):
    """[] when the first epoch with input took over five times the longest later one, by the
    epoch reports the lesson printed (``epoch N: K input updates, ... in X ms``)."""
    import re

    reports = [(int(k), float(ms)) for k, ms in
               re.findall(r"epoch \d+: (\d+) input updates, .*? in ([\d.]+) ms", nb.text("print(close_epoch())"))]
    first = next(i for i, (k, _) in enumerate(reports) if k)
    later = [ms for _, ms in reports[first + 1:]]
    return [] if later and reports[first][1] > 5 * max(later) else [None]
