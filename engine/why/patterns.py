"""Patterns: which records of a collection an explanation asks about.

A pattern is ``None`` (every record) or a frozenset of *conjunctions*, each a sorted tuple of
``(field, value)`` pairs; a record matches if it matches one conjunction.  A module of its own
because both the reading of traces (:mod:`.reading`) and the restricted histories
(:mod:`.history`) test records against patterns.
"""
from __future__ import annotations


def record_pattern(records) -> frozenset:
    """The pattern matching exactly these records (tuples)."""
    return frozenset(tuple(enumerate(r)) for r in records)


def key_pattern(keys, width: int) -> frozenset:
    """The pattern fixing the first ``width`` fields to one of ``keys`` (tuples)."""
    return frozenset(tuple(enumerate(k[:width])) for k in keys)


def matches(record, pattern) -> bool:
    """Whether ``record`` matches ``pattern`` (one of its conjunctions); a one-off test
    (:meth:`Histories.matches` keeps each pattern's test for the explanation's length)."""
    if pattern is None:
        return True
    return matcher(pattern)(record)


def matcher(pattern):
    """A fast test for one pattern: a set lookup when every conjunction fixes the same
    fields (key and record patterns: one per neighbour, hundreds of them), else a scan.
    Not cached here: a test holds the pattern's decoded values, so it is kept by the flow's
    epoch store (:class:`_EpochStore`), and goes with it."""
    if len(pattern) == 1:
        (conj,) = pattern
        fields = tuple(j for j, _ in conj)
        if fields == tuple(range(len(fields))):    # a prefix: a record, or a key
            values, width = tuple(v for _, v in conj), len(fields)
            return lambda record: record[:width] == values
    columns = {tuple(j for j, _ in conj) for conj in pattern}
    if len(columns) == 1:
        (cols,) = columns
        if not cols:
            return lambda record: True
        values = {tuple(v for _, v in conj) for conj in pattern}
        top = max(cols)
        if cols == tuple(range(len(cols))):         # a prefix: keys, records
            width = len(cols)
            return lambda record: record[:width] in values
        if len(cols) == 1:                           # one field: a neighbour list
            singles = {v for (v,) in values}
            return lambda record: len(record) > top and record[top] in singles
        return lambda record: len(record) > top and tuple(record[j] for j in cols) in values
    conjs = list(pattern)
    return lambda record: any(all(j < len(record) and record[j] == v for j, v in conj)
                              for conj in conjs)


__all__ = ["record_pattern", "key_pattern", "matches", "matcher"]
