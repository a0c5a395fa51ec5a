"""The magics tour's prose numbers, read from what its %dd commands printed: the last step's
changes, the lattice of `%dd trace`, the stats by iteration and the edges of `%dd graph`."""
import re

from prose_claims import Claim, Exempt


def _lattice(nb):
    """{epoch: updates at iteration 0} from the lattice `%dd trace scc` printed."""
    text = nb.text("%dd trace scc")
    epochs = [int(e) for e in re.search(r"iter \\ epoch ([\d ]+)", text).group(1).split()]
    first = re.search(r"^0 ([\d, ·]+)$", text, re.M).group(1).replace(",", "").split()
    return dict(zip(epochs, (int(x) for x in first)))


def _step(nb, epoch):
    """(edges in, edges out) of an epoch's step line."""
    return nb.find(rf"epoch {epoch} · window .* · edges \+([\d,]+) −([\d,]+) ·")


def _window_edges(nb, epoch):
    """Edges in the window after an epoch: the sum of the steps' ins and outs up to it."""
    return sum(_step(nb, e)[0] - _step(nb, e)[1] for e in range(epoch + 1) if e > 0) + nb.find(
        r"epoch 0 · window .* · edges \+([\d,]+) −0")


def _graph(nb):
    """{(source label, target label): updates} of the %dd graph drawing's edges."""
    svg = nb.raw("%dd graph cc")
    ops = {m.group(1): m.group(2).split(" (")[0] for m in
           re.finditer(r'data-id="(\d+)" data-kind="\w+"><title>([^<]+)</title>', svg)}
    return {(ops[a], ops[b]): int(n) for a, b, n in
            re.findall(r'data-source="(\d+)" data-target="(\d+)" data-updates="(\d+)"', svg)}


def _out_of(nb, prefix):
    return {n for (a, _), n in _graph(nb).items() if a.startswith(prefix)}


CLAIMS = [
    Exempt("a 7-day window slides one hour per epoch", "the window the %dd input line declares (--window 7d --step 1h)"),
    Exempt("at the multiplicities, all 1 in a simple graph", "what a multiplicity is in a simple graph, printed below"),
    Claim("The one-hour step changed 31 rows of `scc`, out of the 3,227 it holds",
          lambda nb: [nb.find(r"showing \d+ of (\d+) changes"), nb.find(r"scc · ([\d,]+) records · after epoch 6")]),
    Claim("epoch 0 loaded a small window (4,382 updates), the jump of epoch 5 brought 3,933 edges in at once "
          "(223,076 updates, like loading a new window), and the one-hour moves hold far less: 31 to 261 updates before "
          "the jump, on a window of 147 edges, and 10,228 after it, on a window of some 4,000 edges, a twentieth of the "
          "jump's",
          lambda nb: [0, _lattice(nb)[0], 5, _step(nb, 5)[0], _lattice(nb)[5],
                      min(v for e, v in _lattice(nb).items() if 0 < e < 5), max(v for e, v in _lattice(nb).items() if 0 < e < 5),
                      nb.find(r"epoch 0 · window .* · edges \+([\d,]+) −0"), _lattice(nb)[6],
                      round(_window_edges(nb, 6), -3)]),
    Claim("(for `root/scc/reach`, 2,482 records out at iteration 0 and 14 at iteration 6)",
          lambda nb: [nb.find(r"(?m)^root/scc/reach 6 0 \d+ [\d,]+ ([\d,]+) ", "%dd stats scc --by iteration"), 0,
                      nb.find(r"(?m)^root/scc/reach 6 6 \d+ [\d,]+ ([\d,]+) ", "%dd stats scc --by iteration"), 6]),
    Claim("43 edge changes enter; inside the loop the `join` sends each changed label along every edge of its node (831 "
          "updates out of it), the `min` keeps the 121 that change a label, and those go round the `feedback`; 5 changed "
          "labels leave the loop",
          lambda nb: [_graph(nb)[("edges#0", "project#2")], max(_out_of(nb, "join")),
                      _graph(nb)[next(k for k in _graph(nb) if k[0].startswith("min") and k[1].startswith("feedback"))],
                      _graph(nb)[next(k for k in _graph(nb) if k[0].startswith("leave"))]]),
    Claim("the status line above is\nthe last of them, which does a small part of the from-scratch runs' records of work",
          lambda nb: [] if _move_records(nb) < 0.1 * _stateless_records(nb) else [None]),
]


def _move_records(nb):
    return int(str(nb.find(r"this move: ([\d,]+) records of work", "print(explorer.status_text)")).replace(",", ""))


def _stateless_records(nb):
    return int(str(nb.find(r"from scratch on this window: ([\d,]+) stateless", "print(explorer.status_text)")).replace(",", ""))
