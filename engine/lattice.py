"""Timestamps and their lattice: product order over coordinates, lub and glb.

A time is a tuple of non-negative integers: the epoch, then one coordinate per enclosing loop.
Coordinates compare by the product order (``s <= t`` iff every coordinate is ``<=``).

A prioritized loop's coordinate is a ``(priority, iteration)`` pair compared lexicographically
(CIDR 2013, PrioritizedFP).  Lexicographic order on such a pair is a total order, and it is
exactly the numeric order of ``priority * 2**20 + iteration`` (iterations below 2**20): so the engine stores it as one
packed integer coordinate, for which ``<=`` is numeric, lub is ``max`` (the lexicographic max),
glb is ``min``, and the loop's feedback edge adds one (to the iteration part).  The packing is a
representation detail: :func:`unpack_priority` / :func:`display_time` give the pair back.

Everything here works on single tuples and, vectorised, on ``(n, d)`` int64 time matrices.
"""
from __future__ import annotations

import numpy as np

__all__ = ["leq", "lub", "glb", "leq_rows", "lub_rows", "advance", "pack_priority",
           "unpack_priority", "iteration_of", "display_time", "EPOCH", "ITERATION", "PRIORITY",
           "PRIORITY_BITS", "ITERATION_MASK", "MAX_PRIORITY", "MAX_PRIORITIZED_ITERATIONS",
           "FIXED_POINT"]

PRIORITY_BITS = 20  # iteration part: small packed values sort and pack fast
ITERATION_MASK = (1 << PRIORITY_BITS) - 1
MAX_PRIORITY = (1 << 40) - 1
MAX_PRIORITIZED_ITERATIONS = ITERATION_MASK - 1
#: A loop coordinate past every iteration: a loop's collection "at the fixed point" (what
#: leaving the loop presents; explanations read a loop's collection there)
FIXED_POINT = 1 << 62

#: Coordinate kinds, outermost first: ``"epoch"``, ``"iteration"`` or ``"priority"``.
EPOCH, ITERATION, PRIORITY = "epoch", "iteration", "priority"


def leq(s: tuple, t: tuple) -> bool:
    """Product order: every coordinate of ``s`` is ``<=`` the one of ``t`` (over the
    shorter of the two).  Asked on every scheduling decision: written out for one to three
    coordinates."""
    n = len(s) if len(s) <= len(t) else len(t)
    if n == 1:
        return s[0] <= t[0]
    if n == 2:
        return s[0] <= t[0] and s[1] <= t[1]
    if n == 3:
        return s[0] <= t[0] and s[1] <= t[1] and s[2] <= t[2]
    return all(a <= b for a, b in zip(s, t))


def lub(s: tuple, t: tuple) -> tuple:
    """Least upper bound (join): coordinate-wise max (lexicographic max for a packed pair)."""
    return tuple(a if a >= b else b for a, b in zip(s, t))


def glb(s: tuple, t: tuple) -> tuple:
    """Greatest lower bound (meet): coordinate-wise min."""
    return tuple(a if a <= b else b for a, b in zip(s, t))


def leq_rows(times: np.ndarray, t: tuple) -> np.ndarray:
    """Boolean mask of the rows of an ``(n, d)`` time matrix that are ``<= t``."""
    mask = times[:, 0] <= t[0]
    for j in range(1, times.shape[1]):
        mask &= times[:, j] <= t[j]
    return mask


def lub_rows(times: np.ndarray, t: tuple) -> np.ndarray:
    """Row-wise lub of a time matrix with one time."""
    return np.maximum(times, np.asarray(t, dtype=np.int64))


def pack_priority(priority, iteration=0):
    """Pack a ``(priority, iteration)`` pair into one lexicographically ordered coordinate."""
    return (np.asarray(priority, dtype=np.int64) << PRIORITY_BITS) + iteration if isinstance(
        priority, np.ndarray) else (int(priority) << PRIORITY_BITS) + int(iteration)


def unpack_priority(coordinate: int) -> tuple[int, int]:
    """The ``(priority, iteration)`` pair a packed coordinate stands for."""
    return int(coordinate) >> PRIORITY_BITS, int(coordinate) & ITERATION_MASK


def iteration_of(coordinate: int, kind: str) -> int:
    """The iteration count held by a loop coordinate of the given kind."""
    return int(coordinate) & ITERATION_MASK if kind == PRIORITY else int(coordinate)


def display_time(t: tuple, kinds: tuple[str, ...]):
    """A time as users read it: packed priority coordinates shown as ``(priority, iteration)``."""
    return tuple(unpack_priority(c) if k == PRIORITY else int(c) for c, k in zip(t, kinds))


def advance(times: np.ndarray, frontier: tuple) -> np.ndarray:
    """Logical compaction to a one-element frontier ``f``: ``t -> lub(t, f)``.

    For every time ``u >= f`` that a reader will still ask about, ``t <= u`` iff
    ``lub(t, f) <= u``, so the collection read at any such ``u`` is unchanged, while times that
    readers can no longer tell apart become equal and their updates consolidate.
    """
    out = None
    for j, f in enumerate(frontier):
        if f > 0 and len(times) and times[:, j].min() < f:
            if out is None:
                out = times.copy()
            np.maximum(out[:, j], f, out=out[:, j])
    return times if out is None else out
