"""Lesson 4's prose numbers.  Its numbers are names (nodes, labels, times) of the six-node graph
whose values the stepper and the join table print and the lesson's cells assert; the claims read
the first stepper step the notebook printed."""
import ast

from prose_claims import Claim, Exempt

CLAIMS = [
    Exempt("Section 3.4 (Algorithm 1) and 4.3 (Join); the Naiad report, Sections 4.3 (equations 6-9), 5.2 "
           "(Figure 18) and 5.2.1 (Join)", "section numbers of the papers"),
    Exempt("it is released when the count reaches 0", "how the delay loop works, not a measurement"),
    Claim("At `(1, 0)` the minimum goes from 1 to 3",
          lambda nb: [nb.find(r"why look at \((\d+), (\d+)\): \(\1, \2\) is the new input's own time"),
                      nb.find(r"min\(A \+ a\)\[t\] − min\(A\)\[t\] \{(\d+)\} − \{(\d+)\}")[::-1]]),
    Exempt("node 3's own label at `(1, 1)` is still 1 (epoch 0's `(0, 1)` said so)",
           "a label of node 3 the stepper shows at its next step; lesson 3's check cells assert it"),
    Exempt("node 3's label 3 at `(0, 0)` and its change to 1 at `(0, 1)` are taken back from node 1",
           "labels the join table above prints row by row; the cell asserts the three terms' sum"),
]


def _last_min_run(nb):
    """The time of the loop's last min run in epoch 1, if it sent nothing (else None)."""
    times = ast.literal_eval(nb.find(r"the loop's min ran \d+ times, once at each of (\[.*?\])"))
    return list(times[-1]) if int(nb.find(r"the last sent (\d+)")) == 0 else None


CLAIMS += [
    Claim("the last, at `(1, 5)`, found its\ninput leaving the minima as they were and sent nothing", _last_min_run),
]
