"""Which worker owns a record: a hash of its key fields, the same in every worker.

Every field is an int64 (text and other objects are interned to codes shared by the workers)
or a float64, so a key hashes as the bits of its fields: a multiply-xor mix, vectorised,
independent of the process (unlike Python's ``hash`` of text, salted per interpreter).  Two
arrangements with keys of the same width agree on the owner of equal keys, which is what a join
or a reduce reading them needs: each worker then holds every record of the keys it owns.
"""
from __future__ import annotations

import numpy as np

_MIX = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(29)


def owners(cols, nkey: int, workers: int) -> np.ndarray:
    """The worker (``0 .. workers-1``) owning each row of ``cols`` by its first ``nkey``
    fields; a key of width 0 (one group: a global count) belongs to worker 0."""
    n = len(cols[0]) if cols else 0
    if nkey == 0 or not n:
        return np.zeros(n, dtype=np.int64)
    h = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for col in cols[:nkey]:
            if col.dtype == np.float64:
                col = col + 0.0  # -0.0 and 0.0 are one key
            h ^= col.view(np.uint64)
            h *= _MIX
            h ^= h >> _SHIFT
    return (h % np.uint64(workers)).astype(np.int64)


def split(batch, dest: np.ndarray, workers: int) -> list:
    """``batch``'s rows per worker (``None`` where a worker gets none), in their order (a
    consolidated batch's parts stay consolidated)."""
    counts = np.bincount(dest, minlength=workers)
    if counts.max() == len(dest):
        whole = int(np.argmax(counts))
        return [batch if w == whole else None for w in range(workers)]
    # one pass per worker (few): cheaper than a stable sort of the destinations
    return [batch.take(np.flatnonzero(dest == w)) if counts[w] else None
            for w in range(workers)]
