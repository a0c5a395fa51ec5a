"""A window sliding over a stream of edges, for the why tests: each move is one epoch that
inserts what entered the window and removes what left it."""
from __future__ import annotations

from collections import Counter


def slide(flow, edges, held: Counter, stream: list, position: int, width: int) -> Counter:
    """Move the window of ``edges`` (an input) to ``stream[position:position + width]``,
    stepping once; returns the edges now held (with multiplicities)."""
    want = Counter(stream[position:position + width])
    edges.update([(e, m) for e, m in (want - held).items()] +
                 [(e, -m) for e, m in (held - want).items()])
    flow.step()
    return want
