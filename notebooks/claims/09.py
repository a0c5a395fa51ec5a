"""Lesson 9's prose numbers: the order in which its model run delivered notifications, read
from the list the lesson printed."""
import ast

from prose_claims import Claim, Exempt


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
