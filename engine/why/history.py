"""Restricted histories: the updates of any operator's output for the records matching a
pattern, read from the traces the engine keeps or derived from its inputs.

Why: operators that keep no state (map, concat, join outputs, the loop plumbing) still have a
well-defined output at every time: a function of their inputs' collections at that time
(Naiad report, section 3: every operator's output is a function of its input collections).
So an explanation reads a traced collection directly and derives any other one from the
nearest traces upstream, pushing the pattern (``node == 7``) through the operators that let
it pass (project, filter, concat, join keys, loop plumbing) and evaluating user functions
forward where the pattern cannot pass (map, flat_map).  Every join and reduce reads arranged
inputs, so the derivation always ends a few operators upstream.

Patterns are :mod:`.patterns`'.  Histories are consolidated dicts ``{(record, inner time):
diff}``; times are inner (epoch dropped, see :mod:`.reading`).  The derivation through each
operator is its own (its ``derive_history`` hook); the helpers it shares are here.
"""
from __future__ import annotations

import weakref
from collections import Counter
from itertools import product

from ..columns import as_record, columns_of, user_form
from . import reading
from .patterns import key_pattern, matcher, matches, record_pattern
from .reading import INF


class Budget(Exception):
    """An explanation read more rows than its budget allows (``why(..., budget=...)``)."""


def leq(s, t) -> bool:
    """The product order (every coordinate ``<=``); loops nest one or two deep, so those
    are spelled out (an explanation compares times tens of thousands of times)."""
    n = len(s)
    if n == 1:
        return s[0] <= t[0]
    if n == 2:
        return s[0] <= t[0] and s[1] <= t[1]
    return all(a <= b for a, b in zip(s, t))


def lub(s, t) -> tuple:
    return tuple(a if a >= b else b for a, b in zip(s, t))


def accumulate(updates: dict, t) -> Counter:
    """``{record: multiplicity}`` at inner time ``t`` (nonzero only)."""
    out: dict = {}
    get = out.get
    for (rec, time), d in updates.items():
        if leq(time, t):
            out[rec] = get(rec, 0) + d
    return Counter({r: m for r, m in out.items() if m})


def first_time(updates: dict, record, t, sign: int):
    """The lexicographically first inner time ``u <= t`` at which ``record`` has a
    multiplicity of sign ``sign`` (``None`` if it has none up to ``t``): where an
    explanation of a loop's record starts (the iteration it first appears)."""
    times = [(time, d) for (rec, time), d in updates.items() if rec == record and leq(time, t)]
    if not times:
        return None
    width = len(t)
    if width == 0:
        total = sum(d for _, d in times)
        return () if total * sign > 0 else None
    if width == 1:
        coords = sorted({time[0] for time, _ in times})
        running, i = 0, 0
        ordered = sorted(times)
        for c in coords:
            while i < len(ordered) and ordered[i][0][0] <= c:
                running += ordered[i][1]
                i += 1
            if running * sign > 0:
                return (c,)
        return None
    axes = [sorted({time[j] for time, _ in times}) for j in range(width)]
    for u in product(*axes):
        if sum(d for time, d in times if leq(time, u)) * sign > 0:
            return tuple(u)
    return None


def normalized(updates: dict, t):
    """The lub of the times ``<= t`` of these updates (the collection there equals the one
    at ``t``), or ``None`` if there are none: where an exact demand really needs its
    inputs (a fixed point at iteration 11, not at 'infinity')."""
    best = None
    for (_, time) in updates:
        if leq(time, t):
            best = time if best is None else lub(best, time)
    return best


#: Rows the explanations of one epoch may keep between them (what they read, decoded,
#: about 200 bytes a row); past it the next explanation starts with an empty store.
#: Measured on the long-path benchmark (``python -m benchmarks why --dataset
#: long-paths-20k``, 60 connected-component labels): without a store the median was 334 ms;
#: with 300,000 rows 118 ms (RSS +57 MB); with 1,000,000 rows 98 ms and the same RSS (the
#: epoch's reads fit); strongly connected components, whose explanations read 60,000 rows
#: each: 1,263 ms at 300,000 (RSS +250 MB) and 683 ms at 1,000,000 (+330 MB).
STORE_ROWS = 300_000

#: A trace read by key this many times in an epoch is indexed (:class:`reading.KeyIndex`):
#: a path of 100 steps reads its traces hundreds of times, one key at a time, while one
#: explanation of a few records reads a trace a few times and should not pay for an index.
INDEX_AFTER_READS = 16
#: Rows the indexes of one flow's epoch may hold between them (sorted copies of traces'
#: arrays, about 40 bytes a row: 2,000,000 rows is about 80 MB); a trace that does not
#: fit is read key by key from the trace itself.  Unlike the rows of :data:`STORE_ROWS`,
#: an index stays for the epoch: it is what makes the explanations after the first cheap.
INDEX_ROWS = 2_000_000


class _EpochStore:
    """What the explanations of one flow read during one epoch, shared by them: restricted
    histories, each key's rows, the preimages of maps.  All of it is a function
    of the flow's state, which only a step changes, so a later explanation of the same epoch
    reads nothing twice (the why panel and ``%dd why`` ask several in a row).  It holds
    records and numbers, never an operator (the flow must stay collectable: the store is
    only weakly keyed by it)."""

    def __init__(self, epoch: int):
        self.epoch, self.rows = epoch, 0
        self.memo: dict = {}          # (op id, pattern) -> updates; ("estimate", ...) -> n
        self.keys: dict = {}          # id(trace) -> {key: {record: {time: diff}}}
        self.matchers: dict = {}      # pattern -> its test
        self.preimages: dict = {}     # map op id -> {output record: {input record: count}}
        self.firsts: dict = {}        # (op id, record, time, sign) -> first_time there
        self.indexes: dict = {}       # id(trace) -> its KeyIndex (kept by trim)
        self.key_reads: dict = {}     # id(trace) -> lookups by key so far (until indexed)
        self.index_rows = 0

    def kept(self, n: int) -> None:
        """Count ``n`` more rows kept."""
        self.rows += n

    def trim(self) -> None:
        """Start again empty when the store holds more than :data:`STORE_ROWS` rows (the
        indexes stay: they are bounded by :data:`INDEX_ROWS` on their own)."""
        if self.rows > STORE_ROWS:
            kept = self.indexes, self.key_reads, self.index_rows
            self.__init__(self.epoch)
            self.indexes, self.key_reads, self.index_rows = kept

    def read_keys(self, trace, interner, keys) -> dict:
        """:func:`reading.read_keys`, from the trace's index once it has been read by key
        :data:`INDEX_AFTER_READS` times (and its index fits in :data:`INDEX_ROWS`)."""
        index = self.indexes.get(id(trace))
        if index is None:
            reads = self.key_reads[id(trace)] = self.key_reads.get(id(trace), 0) + 1
            if reads >= INDEX_AFTER_READS and self.index_rows + len(trace) <= INDEX_ROWS:
                index = self.indexes[id(trace)] = reading.KeyIndex(trace, interner)
                self.index_rows += index.rows
        if index is None:
            return reading.read_keys(trace, interner, keys)
        return index.read_keys(keys)


#: flow -> its epoch's store (dropped with the flow, replaced at the first read after a step)
_STORES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _store_of(flow) -> _EpochStore:
    """The flow's store for its current epoch, emptied first if the explanations before
    left more than :data:`STORE_ROWS` in it (never during one: it needs what it read)."""
    store = _STORES.get(flow)
    if store is None or store.epoch != flow.epoch:
        store = _STORES[flow] = _EpochStore(flow.epoch)
    store.trim()
    return store


class Histories:
    """Restricted histories of one flow's operators, for one explanation (its budget counts
    every history it uses once), read through the epoch's :class:`_EpochStore`."""

    def __init__(self, flow, budget: int | None = 2_000_000):
        self.flow = flow
        self.interner = flow.interner
        self.budget = budget
        self.rows_read = 0
        self._store = _store_of(flow)
        self._used: set = set()       # the (op id, pattern) this explanation was charged for
        self._arranged: dict | None = None   # op id -> arrangements of its collection

    # -- bookkeeping ---------------------------------------------------------------------
    def _charge(self, n: int) -> None:
        self.rows_read += n
        if self.budget is not None and self.rows_read > self.budget:
            raise Budget(f"read more than {self.budget:,} rows")

    def updates(self, op, pattern) -> dict:
        """``{(record, inner time): diff}`` of ``op``'s output for the records matching
        ``pattern``."""
        if pattern is not None and not pattern:
            return {}
        key = (op.id, pattern)
        store = self._store
        found = store.memo.get(key)
        if found is None:
            trace = self._trace_for(op, pattern)
            found = self._by_key(trace, pattern) if trace is not None else None
            if found is None:
                found = self._compute(op, pattern, trace)
            store.kept(len(found))
            store.memo[key] = found
        if key not in self._used:
            self._used.add(key)
            self._charge(len(found))
        return found

    def per_epoch(self, key, build):
        """The value of ``build() -> (value, rows)``, computed once per epoch for ``key`` and
        kept in the epoch's store (what every explanation of the epoch would otherwise
        rebuild: a witness's index of its argument), counted there as ``rows`` rows; it
        must hold records and numbers, never an operator."""
        store = self._store
        found = store.memo.get(("per epoch",) + key)
        if found is None:
            found, rows = build()
            store.memo[("per epoch",) + key] = found
            store.kept(rows)
        return found

    def rows_held(self, op) -> int | None:
        """How many rows the trace holding ``op``'s history has (``None``: it is derived
        from its inputs), to choose between reading it whole and by key."""
        trace = self._trace_for(op, None)
        return None if trace is None else len(trace)

    def matcher(self, pattern):
        """:func:`matcher` of ``pattern``, built once per epoch."""
        matchers = self._store.matchers
        test = matchers.get(pattern)
        if test is None:
            test = matchers[pattern] = matcher(pattern)
        return test

    def matches(self, record, pattern) -> bool:
        """Whether ``record`` matches ``pattern`` (``None``: every record)."""
        return pattern is None or self.matcher(pattern)(record)

    def estimate(self, op, conj) -> float:
        """How many rows reading ``op`` with one conjunction finds (memoised: a path's
        steps ask the same side with the same label again and again)."""
        key = ("estimate", op.id, conj)
        found = self._store.memo.get(key)
        if found is None:
            found = self._store.memo[key] = _estimate(op, conj, self)
        return found

    def content(self, op, pattern, t) -> Counter:
        return accumulate(self.updates(op, pattern), t)

    def first(self, op, record, t, sign: int):
        """:func:`first_time` of ``record`` in ``op``'s history (memoised for the epoch: a
        path's candidates are ranked again by the steps that choose among them)."""
        key = (op.id, record, t, sign)
        found = self._store.firsts.get(key)
        if found is None:
            pattern = record_pattern([record])
            ups = self.updates(op, pattern)
            found = self._store.firsts[key] = (first_time(ups, record, t, sign), len(ups),
                                               (op.id, pattern))
        elif found[2] not in self._used:      # charged to this explanation as if read
            self._used.add(found[2])
            self._charge(found[1])
        return found[0]

    def preimages(self, op) -> dict:
        """For an operator mapping each record to records (``map``, ``flat_map``,
        ``map_columns``: its ``images`` hook): ``{output record: {input record:
        how many times it maps to it (a multiplicity: negative for an ``explode``
        that negates)}}`` over every record its input holds at any time of
        the epoch's state, computed once per epoch: a user function cannot be inverted, but
        evaluating it over the whole input at every step of a path (a shortest path's
        relaxation ``d + w`` at each of 150 iterations) costs that many passes."""
        store = self._store
        found = store.preimages.get(op.id)
        if found is None:
            xs = list(dict.fromkeys(rec for rec, _ in self.updates(op.inputs[0], None)))
            images = op.images(xs)
            found = {}
            for x, imgs in zip(xs, images):
                for y, n in imgs:
                    into = found.setdefault(y, {})
                    into[x] = into.get(x, 0) + n
            store.kept(len(xs))
            store.preimages[op.id] = found
        return found

    # -- per operator kind -----------------------------------------------------------------
    def _by_key(self, trace, pattern) -> dict | None:
        """The updates of ``trace`` matching ``pattern`` when every conjunction fixes the
        trace's key, from the rows of each key, read once per epoch (an operator's record,
        its group, its arrangement's twin read the same key again and again), or ``None`` for
        a pattern that does not fix the key."""
        if pattern is None or trace.kinds is None:
            return None
        arity = len(trace.kinds)
        nkey = trace.nkey or arity
        keys = []
        for conj in pattern:
            if len(conj) < nkey or any(j != c for (j, _), c in zip(conj, range(nkey))):
                return None      # (conjunctions are sorted by field)
            keys.append(tuple(v for _, v in conj[:nkey]))
        keys = list(dict.fromkeys(keys))
        cache = self._store.keys.setdefault(id(trace), {})
        missing = [k for k in keys if k not in cache]
        if missing:
            for key, rows in self._store.read_keys(trace, self.interner, missing).items():
                cache[key] = _by_record(rows)
                self._store.kept(len(rows))
        if all(len(conj) == arity for conj in pattern):   # records: looked up by record
            out = {}
            for conj in pattern:
                rec = tuple(v for _, v in conj)
                for t, d in cache[rec[:nkey]].get(rec, {}).items():
                    out[(rec, t)] = d
            return out
        test = self.matcher(pattern)
        return {(rec, t): d for key in keys for rec, times in cache[key].items() if test(rec)
                for t, d in times.items()}

    def _arrangement_of(self, op, pattern):
        """An arrangement of ``op``'s collection (same scope: the same updates at the same
        times) whose key ``pattern`` fixes, or any one for every record (``None``): reading
        its trace is a lookup where deriving ``op`` (a concat, a join's output) reads and
        combines its inputs."""
        if self._arranged is None:
            self._arranged = {}
            for o in self.flow.operators:
                if o.kind == "arrange" and o.inputs[0].scope is o.scope:
                    self._arranged.setdefault(o.inputs[0].id, []).append(o)
        for arranged in self._arranged.get(op.id, ()):
            nkey = arranged.nkey or None
            if pattern is None or (nkey is not None and all(
                    all(any(j == c for j, _ in conj) for c in range(nkey)) for conj in pattern)):
                return arranged
        return None

    def _trace_for(self, op, pattern):
        """The trace holding ``op``'s history: its own, or an arrangement's of its collection
        (:meth:`_arrangement_of`); ``None`` when it is derived from its inputs."""
        trace = reading.trace_of(op)
        if trace is None:
            arranged = self._arrangement_of(op, pattern)
            trace = reading.trace_of(arranged) if arranged is not None else None
        return trace

    def _compute(self, op, pattern, trace) -> dict:
        if trace is not None:
            test = None if pattern is None else self.matcher(pattern)
            return _consolidate(reading.read(trace, self.interner, pattern, test))
        return op.derive_history(self, pattern)

    # -- for the operators' ``derive_history`` hooks ---------------------------------------
    #: the pattern of records, and of keys (:mod:`.patterns`), for hooks that build them
    record_pattern = staticmethod(record_pattern)
    key_pattern = staticmethod(key_pattern)

    def consolidated(self, triples) -> dict:
        """``{(record, time): diff}`` of ``(record, time, diff)`` triples, summed, no zeros."""
        return _consolidate(triples)

    def mapped(self, op, pattern):
        """An operator mapping records through :meth:`preimages` (``map``, ``flat_map``,
        ``map_columns``): the updates of the input records that map into ``pattern``,
        mapped."""
        pre = self.preimages(op)
        if not pre:
            return {}
        targets = None
        if pattern is not None and len(pattern) == 1:
            (conj,) = pattern
            width = len(next(iter(pre)))
            if len(conj) == width and all(j == c for (j, _), c in zip(conj, range(width))):
                rec = tuple(v for _, v in conj)     # one record: a lookup
                targets = [(rec, pre[rec])] if rec in pre else []
        if targets is None:
            targets = [(y, xs) for y, xs in pre.items() if self.matches(y, pattern)]
        if not targets:
            return {}
        inputs = list(dict.fromkeys(x for _, xs in targets for x in xs))
        by_input: dict = {}
        for (x, t), d in self.updates(op.inputs[0], record_pattern(inputs)).items():
            by_input.setdefault(x, []).append((t, d))
        return _consolidate((y, t, d * n) for y, xs in targets for x, n in xs.items()
                            for t, d in by_input.get(x, ()))

    def join_updates(self, op, pattern) -> dict:
        """A join's output history (:func:`join_updates`)."""
        return join_updates(self, op, pattern)


def _by_record(rows) -> dict:
    """``{record: {time: diff}}`` of ``[(record, time, diff)]``, consolidated."""
    out: dict = {}
    for rec, t, d in rows:
        times = out.setdefault(rec, {})
        times[t] = times.get(t, 0) + d
    return {rec: {t: d for t, d in times.items() if d} for rec, times in out.items()}


def _consolidate(triples) -> dict:
    out: Counter = Counter()
    for rec, t, d in triples:
        out[(rec, t)] += d
    return {k: d for k, d in out.items() if d}


# -- joins --------------------------------------------------------------------------------------
def join_layout(op, hist: Histories):
    """``(nkey, left arity, right arity)`` of a join, from its arranged inputs."""
    lk = reading.kinds_of(op.inputs[0])
    rk = reading.kinds_of(op.inputs[1])
    if lk is None or rk is None:
        return None
    return op.nkey, len(lk), len(rk)


def join_output(op, nkey, nleft, left_rec, right_rec):
    joint = left_rec + right_rec[nkey:]
    sel = op.select
    if sel is None:
        return joint
    if isinstance(sel, tuple):
        return tuple(joint[j] for j in sel)

    def part(lo, hi):
        return joint[lo] if hi - lo == 1 else (joint[lo:hi] if hi > lo else None)

    return as_record(sel(part(0, nkey), part(nkey, nleft), part(nleft, len(joint))))


def push_join(op, conj, nkey, nleft):
    """``(left conjunction, right conjunction)`` for an output conjunction."""
    sel = op.select
    if sel is not None and not isinstance(sel, tuple):
        return (), ()
    left, right = {}, {}
    for c, v in conj:
        j = c if sel is None else (sel[c] if c < len(sel) else None)
        if j is None:
            continue
        if j < nkey:
            for side in (left, right):
                if side.get(j, v) != v:
                    return None
                side[j] = v
        elif j < nleft:
            if left.get(j, v) != v:
                return None
            left[j] = v
        else:
            k = j - nleft + nkey
            if right.get(k, v) != v:
                return None
            right[k] = v
    return tuple(sorted(left.items())), tuple(sorted(right.items()))


def _traced_source(op):
    """The traced operator whose history ``op`` presents unchanged (through the operators
    that present their input's collection: enter, consolidate, choose...)."""
    while reading.trace_of(op) is None and op.presents_input:
        op = op.inputs[0]
    return op if reading.trace_of(op) is not None else None


def _estimate(op, conj, hist) -> float:
    """How many rows reading ``op`` with ``conj`` would find (cheap: no decoding)."""
    if not conj:
        return float("inf")
    src = _traced_source(op)
    if src is None:
        return float("inf")
    trace = reading.trace_of(src)
    if trace.kinds is None:
        return 0
    fixed = dict(conj)
    nkey = trace.nkey or len(trace.kinds)
    if all(j in fixed for j in range(nkey)):
        return 1
    j = min(fixed)
    code = reading.encode_value(fixed[j], trace.kinds[j], hist.interner)
    if code is None:
        return 0
    return len(trace.rows_where(j, [code]).diffs)


#: A join's side found with at most this many rows is read first without counting the
#: other side's matches (counting scans a trace; a neighbour list is small).
FEW_ROWS = 256


def _size(op) -> float:
    src = _traced_source(op)
    return len(reading.trace_of(src)) if src is not None else float("inf")


def join_sides(hist: Histories, op, lconj, rconj, nkey):
    """``(left updates, right updates)`` a join needs for one pushed conjunction: both by
    key when the key is fixed, else one side by its own fields first and the other by the
    keys found there: the side with fewer matching rows (counted by scanning, the smaller
    trace first; a side with few matches is taken without counting the other)."""
    left_op, right_op = op.inputs
    if all(any(j == c for j, _ in lconj) for c in range(nkey)):
        return (hist.updates(left_op, frozenset([lconj])),
                hist.updates(right_op, frozenset([rconj])))
    sides = [(left_op, lconj, True), (right_op, rconj, False)]
    sides.sort(key=lambda side: (not side[1], _size(side[0])))   # constrained, smaller first
    count = hist.estimate(sides[0][0], sides[0][1])
    if count > FEW_ROWS and hist.estimate(sides[1][0], sides[1][1]) < count:
        sides.reverse()
    (first_op, first_conj, left_first), (other_op, other_conj, _) = sides
    first = hist.updates(first_op, frozenset([first_conj]))
    keys = {rec[:nkey] for (rec, _) in first}
    fixed = dict(other_conj)
    other_pattern = frozenset(
        tuple(sorted({**fixed, **dict(enumerate(k))}.items())) for k in keys
        if all(fixed.get(j, k[j]) == k[j] for j in range(nkey)))
    other = hist.updates(other_op, other_pattern)
    return (first, other) if left_first else (other, first)


def join_updates(hist: Histories, op, pattern) -> dict:
    layout = join_layout(op, hist)
    if layout is None:
        return {}
    nkey, nleft, nright = layout
    conjs = [()] if pattern is None else list(pattern)
    result: dict = {}
    for conj in conjs:
        pushed = push_join(op, conj, nkey, nleft)
        if pushed is None:
            continue
        lups, rups = join_sides(hist, op, *pushed, nkey)
        by_key: dict = {}
        for (rec, t), d in rups.items():
            by_key.setdefault(rec[:nkey], []).append((rec, t, d))
        part: Counter = Counter()
        for (lrec, lt), ld in lups.items():
            for rrec, rt, rd in by_key.get(lrec[:nkey], ()):
                out = join_output(op, nkey, nleft, lrec, rrec)
                if not conj or all(j < len(out) and out[j] == v for j, v in conj):
                    part[(out, lub(lt, rt))] += ld * rd
        hist._charge(len(part))
        for k, d in part.items():
            if d:
                result[k] = d  # each conjunction's result is complete for its records
    return result


__all__ = ["Histories", "Budget", "INF", "record_pattern", "key_pattern", "matches", "matcher",
           "accumulate", "first_time", "normalized", "user_form", "as_record", "leq", "lub",
           "columns_of", "push_join", "join_layout", "join_output", "join_sides"]
