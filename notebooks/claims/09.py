"""Lesson 9's prose numbers: the order in which its model run delivered notifications, read
from the list the lesson printed."""
import ast
import re

from prose_claims import Claim, Exempt, Quote


def _order(nb):
    """[(timestamp, vertex), ...]: the notifications in the order the model delivered them."""
    return ast.literal_eval(nb.find(r"notifications in delivery order: (\[.*\])"))


def _before(nb, a, b, where="body"):
    """Whether ``a`` was notified before ``b`` (both at ``where``); a as the claim states it, else None."""
    order = _order(nb)
    return a if order.index((a, where)) < order.index((b, where)) else None


def _last(nb, epoch):
    return max((t for t, v in _order(nb) if v == "body" and t[0] == epoch), key=lambda t: t[1])


CLAIMS = [
    Exempt("appends a counter 0", "the counter's first value (CIDR Section 4.2, the report's Section 5.1.1)"),
    Exempt("Worked answer to 3.", "the exercise's number"),
    Exempt("Worked answer to 4.", "the exercise's number"),
    Claim("each epoch's iterations come in order, `(e, 0)` before `(e, 1)`",
          lambda nb: [0 if all(_before(nb, (e, 0), (e, 1)) for e in range(3)) else None, 1]),
    Claim("learned that `(1, 0)` and `(1, 1)` were complete before `(0, 2)`, while epoch 0 was still iterating",
          lambda nb: [_before(nb, (1, 0), (0, 2)), _before(nb, (1, 1), (0, 2)), (0, 2), 0]),
    Claim("by then epoch 0 had nothing outstanding below iteration 2 (`(0, 0)` and `(0, 1)` were already notified)",
          lambda nb: [0, 2, _before(nb, (0, 0), (1, 0)), _before(nb, (0, 1), (1, 0))]),
    Claim("`(0, i)` is `<=` `(1, 1)` only for `i <= 1`", lambda nb: [0, 1, 1, 1]),
    Claim("So the output learns `(0,)`, then `(1,)`, then `(2,)`",
          lambda nb: [t[0] for t, v in _order(nb) if v == "output"]),
    Claim("epoch 1's loop received its last notification, `(1, 2)`, before epoch 0's last, `(0, 5)`",
          lambda nb: [1, _last(nb, 1) if _before(nb, _last(nb, 1), _last(nb, 0)) else None, 0, _last(nb, 0)]),
]


def _row(nb, operator):
    """(pointstamps, engine's frontier, hand model's frontier) of ``operator`` in the table the
    lesson printed for the tap's first run of epoch 1."""
    line = nb.find(rf"\n\s*({re.escape(operator)} .*)")
    return list(re.fullmatch(r"\S+\s+\S+\s+(.*?)\s+(\[.*?\])\s+(\[.*?\])\s*", line).groups())


def _times(text):
    """The numbers of the times written in ``text``, in order."""
    return [int(n) for n in re.findall(r"\d+", text)]


CLAIMS += [
    Quote('in CACM 2.4\'s words, "wildly inefficient"', "cacm", "As stated, this protocol would be wildly inefficient"),
    Exempt("entering a loop appends a coordinate 0", "the counter's first value, as above"),
    Exempt("worker 0 is\nthis kernel, worker 1 a process", "the workers' names"),
    Claim("holds the input's capability for the open epoch with a count of 2",
          lambda nb: int(nb.find(r"edges#0\s+\{\(\d+,\): (\d+)\}", index=0))),
    Claim("Read the table printed above, taken while the tap ran at `(1, 0)`",
          lambda nb: _times(nb.find(r"while the tap on min ran at (\(\d+, \d+\))", index=0))),
    Claim("The input `edges#0` holds\n`(2,)`", lambda nb: [0, _times(_row(nb, "edges#0")[0])[0]]),
    Claim("So the operators before the\nloop have frontier `[(2,)]`",
          lambda nb: sorted({t for op in ("concat#2", "distinct#5", "project#6", "arrange#11")
                             for t in _times(_row(nb, op)[1])})),
    Claim("`ingress#8`\nand `enter#12`, have `[(2, 0)]`",
          lambda nb: [8, 12] + (_times(_row(nb, "ingress#8")[1]) if _row(nb, "ingress#8")[1] == _row(nb, "enter#12")[1]
                                else [None])),
    Claim("Inside the loop `min#16` holds\npointstamps at `(1, 1)` and `(1, 2)`",
          lambda nb: [16] + _times(re.sub(r"×\d+", "", _row(nb, "min#16")[0]))),
    Claim("so each has frontier\n`[(1, 1), (2, 0)]`",
          lambda nb: _times(_row(nb, "min#16")[1]) if len({_row(nb, op)[1] for op in (
              "variable#9", "join#13", "min#16", "inspect#17", "feedback#18")}) == 1 else None),
    Claim("`leave#19` holds the\nloop's output so far at `(1,)`, and its frontier is `[(1,)]`",
          lambda nb: [19] + _times(re.sub(r"×\d+", "", _row(nb, "leave#19")[0])) + _times(_row(nb, "leave#19")[1])),
    Claim("The loop ran `(1, 0)` to `(1, 3)`",
          lambda nb: [1, 0] + _times(nb.find(r"the loop ran \d+ iterations, \(1, 0\) to (\(\d+, \d+\))"))),
    Claim("the 7 updates\n`min` sent it", lambda nb: int(nb.find(r"taking the (\d+) updates min sent it"))),
    Claim("Runs 31 and 32 show one visit taking two times: `min` ran at\n`(1, 2)` and sent nothing",
          lambda nb: [int(nb.find(r"runs (\d+) and \d+: min")), int(nb.find(r"runs \d+ and (\d+): min")),
                      _times(nb.find(r"runs \d+ and \d+: min#\d+ at (\(\d+, \d+\)) \(\d+ in, 0 out\)"))]),
    Claim("it ran\n`(1, 3)`, an interesting time it had scheduled, with no other run between",
          lambda nb: _times(nb.find(r"then at (\(\d+, \d+\)) with no input, no run between"))),
]
