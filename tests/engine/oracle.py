"""From-scratch evaluation of the operators on plain Python multisets (``Counter``): the
oracle every engine result is compared with after every epoch."""
from __future__ import annotations

from collections import Counter, defaultdict


def clean(c: Counter) -> dict:
    return {k: v for k, v in c.items() if v != 0}


def key_of(r):
    return r[0] if isinstance(r, tuple) else r


def val_of(r):
    if not isinstance(r, tuple):
        return None
    rest = r[1:]
    return rest[0] if len(rest) == 1 else (rest if rest else None)


def groups(c: Counter) -> dict:
    g = defaultdict(list)
    for r, m in c.items():
        if m:
            g[key_of(r)].append((r, m))
    return g


def count(c):
    out = Counter()
    for k, rows in groups(c).items():
        total = sum(m for _, m in rows)
        if total:
            out[(k, total)] += 1
    return clean(out)


def sum_(c):
    out = Counter()
    for k, rows in groups(c).items():
        out[(k, sum(r[1] * m for r, m in rows))] += 1
    return clean(out)


def extreme(c, largest):
    out = Counter()
    for rows in groups(c).values():
        vals = [r for r, m in rows if m > 0]
        if vals:
            out[(max if largest else min)(vals, key=lambda r: r[1:])] += 1
    return clean(out)


def top_k(c, k, largest=True):
    out = Counter()
    for rows in groups(c).values():
        rows = sorted([(r, m) for r, m in rows if m > 0], key=lambda rm: rm[0][1:],
                      reverse=largest)
        left = k
        for r, m in rows:
            take = min(m, left)
            if take > 0:
                out[r] += take
            left -= take
    return clean(out)


def distinct(c):
    return {r: 1 for r, m in c.items() if m > 0}


def setop(a, b, fn):
    out = {}
    for r in set(a) | set(b):
        w = fn(a.get(r, 0), b.get(r, 0))
        if w:
            out[r] = w
    return out


def join(a, b):
    out = Counter()
    bk = groups(b)
    for ra, ma in a.items():
        for rb, mb in bk.get(key_of(ra), []):
            ta = ra if isinstance(ra, tuple) else (ra,)
            tb = rb if isinstance(rb, tuple) else (rb,)
            out[ta + tb[1:]] += ma * mb
    return clean(out)


def linear(c, fn):
    out = Counter()
    for r, m in c.items():
        for s in fn(r):
            out[s] += m
    return clean(out)
