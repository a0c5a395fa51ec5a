"""Traces (``engine/trace/``): every lookup and merge path equals the general one and a
from-scratch reading of what was inserted; recent rows and cached histories read like the
spine; the entered view answers every reader question like the trace it enters."""
from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, strategies as st

import ddlab
from ddlab import algorithms
from ddlab.engine.batch import Batch
from ddlab.engine.lattice import leq
from ddlab.engine.trace import EnteredTrace, Trace, TraceReader
from ddlab.engine.testing import tuned
from graph_oracle import cc_oracle


class _Clock:
    epoch = 0


class _EpochClock:
    def __init__(self):
        self.epoch = 0


def _summed(rows):
    """Rows ``(..., diff)`` with the diffs of equal fields summed, zeros dropped, sorted."""
    out = Counter()
    for *fields, d in rows:
        out[tuple(fields)] += d
    return sorted((k, v) for k, v in out.items() if v)


def _trace_rows(trace):
    r = trace.all_rows()
    return _summed(zip(r.keycode.tolist(), *[c.tolist() for c in r.cols],
                       map(tuple, r.times.tolist()), r.diffs.tolist()))


def _split_at(rows, codes, t):
    """The from-scratch answer to ``accumulate_until(codes, t)``: ``(c0, c1, diff)`` of the
    rows of ``codes`` at times ``<= t``, and the sorted distinct ``(code, time)`` of the others."""
    wanted, now, later = set(codes.tolist()), [], set()
    for k, c0, c1, time, d in zip(rows.keycode.tolist(), rows.cols[0].tolist(),
                                  rows.cols[1].tolist(), map(tuple, rows.times.tolist()),
                                  rows.diffs.tolist()):
        if k in wanted:
            if leq(time, t):
                now.append((c0, c1, d))
            else:
                later.add((k, time))
    return now, sorted(later)


@given(batches=st.lists(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 5)),
                                 min_size=1, max_size=12), min_size=1, max_size=6),
       queries=st.lists(st.integers(-1, 31), max_size=24))
def test_small_lookups_equal_general(batches, queries):
    trace = Trace(1, 2, _Clock(), "t")
    for i, rows in enumerate(batches):
        a = np.array(rows, dtype=np.int64)
        trace.insert((0, i), Batch([a[:, 0], a[:, 1]], ("i", "i"),
                                   np.ones(len(a), dtype=np.int64)))
    codes = np.unique(np.array(queries, dtype=np.int64))
    repeated = np.array(queries, dtype=np.int64)

    def rows_of(r):
        return sorted(zip(r.keycode.tolist(), *[c.tolist() for c in r.cols],
                          map(tuple, r.times.tolist()), r.diffs.tolist()))

    fast_g, (fq, fr) = trace.gather(codes), trace.gather_matches(repeated)
    with tuned("general"):
        gen_g, (gq, gr) = trace.gather(codes), trace.gather_matches(repeated)
    assert rows_of(fast_g) == rows_of(gen_g)
    assert sorted(zip(fq.tolist(), fr.keycode.tolist(), fr.cols[1].tolist())) == \
        sorted(zip(gq.tolist(), gr.keycode.tolist(), gr.cols[1].tolist()))
    # the oracle: every inserted row whose key is queried
    want = sorted((k, k, v, (0, i), 1) for i, rows in enumerate(batches) for k, v in rows
                  if k in set(codes.tolist()))
    assert rows_of(fast_g) == want



def test_lookup_of_the_largest_code_takes_the_two_search_path():
    trace = Trace(1, 1, _Clock(), "t")
    top = np.iinfo(np.int64).max
    trace.insert((0,), Batch([np.array([5, top, top])], ("i",), np.array([1, 1, -2])))
    rows = trace.gather(np.array([top]))
    assert sorted(rows.diffs.tolist()) == [-2, 1]



def test_large_gathers_equal_the_oracle():
    trace = Trace(1, 2, _Clock(), "t")
    rng = np.random.default_rng(3)
    inserted = []
    for i, n in enumerate([6000, 5000, 300, 9000]):
        a = rng.integers(0, 2000, size=(n, 2))
        inserted += [(int(k), int(v), (0, i)) for k, v in a]
        trace.insert((0, i), Batch([a[:, 0], a[:, 1]], ("i", "i"), np.ones(n, dtype=np.int64)))
    codes = np.unique(rng.integers(0, 2000, 1500))
    rows = trace.gather(codes)
    got = sorted(zip(rows.cols[0].tolist(), rows.cols[1].tolist(), map(tuple, rows.times.tolist())))
    keep = set(codes.tolist())
    assert got == sorted(r for r in inserted if r[0] in keep)



@given(batches=st.lists(st.lists(st.tuples(st.integers(0, 30), st.integers(-3, 5),
                                           st.sampled_from([1, -1, 2])),
                                 min_size=1, max_size=40), min_size=1, max_size=12),
       nkey=st.sampled_from([1, 2]), floats=st.booleans())
def test_large_trace_merges_equal_general(batches, nkey, floats):
    """Merged spines (and their lookups) hold the same rows on both paths."""
    clock = _Clock()
    traces = []
    for preset in ("tiny", "general"):
        with tuned(preset):
            trace = Trace(nkey, 2, clock, "t")
            for i, rows_ in enumerate(batches):
                a = np.array(rows_, dtype=np.int64)
                second = a[:, 1].astype(np.float64) / 2 if floats else a[:, 1]
                trace.insert((0, i), Batch([a[:, 0], second], ("i", "f" if floats else "i"),
                                           a[:, 2]).consolidate())
            got = [_trace_rows(trace)]
            codes = np.unique(trace.all_rows().keycode)[::2]
            g = trace.gather(codes)
            got.append(_summed(zip(g.keycode.tolist(), g.cols[1].tolist(),
                                   map(tuple, g.times.tolist()), g.diffs.tolist())))
            now, later = _split_at(trace.all_rows(), codes, (0, 3))
            got.append(_summed(now))
            cols, weights, later_codes, later_times = trace.accumulate_until(codes, (0, 3))
            got.append(list(zip(cols[0].tolist(), cols[1].tolist(), weights.tolist())))
            assert got[-1] == [k + (v,) for k, v in got[-2]]  # sorted, summed, no zeros
            found_later = sorted(set(zip(np.concatenate(later_codes or [np.zeros(0, int)]).tolist(),
                                         map(tuple, np.concatenate(later_times or [
                                             np.zeros((0, 2), int)]).tolist()))))
            assert found_later == later
            got.append(found_later)
            clock.epoch = 1
            trace.compact()
            got.append(_trace_rows(trace))
            clock.epoch = 0
            traces.append(got)
    assert traces[0] == traces[1]



@given(inserts=st.lists(st.tuples(st.integers(0, 3),  # epoch advance before the insert
                                  st.lists(st.tuples(st.integers(0, 12), st.integers(0, 3),
                                                     st.sampled_from([-2, -1, 1, 2])),
                                           min_size=1, max_size=9)),
                        min_size=1, max_size=12),
       queries=st.lists(st.integers(-1, 13), max_size=20),
       capacity=st.sampled_from([2, 5, 1000]))
def test_recent_rows_read_like_the_spine(inserts, queries, capacity):
    """Small inserts wait in the recent rows (spilled into the spine at ``capacity`` rows);
    every way of reading the trace sees the same updates as a trace built without them."""
    traces = {}
    for enabled in (True, False):
        with tuned(None if enabled else "general", RECENT_CAPACITY=capacity):
            clock = _EpochClock()
            tr = Trace(1, 2, clock, "t")
            for i, (advance, rows) in enumerate(inserts):
                clock.epoch += advance
                a = np.array(rows, dtype=np.int64)
                tr.insert((clock.epoch, i), Batch([a[:, 0], a[:, 1]], ("i", "i"), a[:, 2]))
            traces[enabled] = tr
    fast, general = traces[True], traces[False]
    codes = np.unique(np.array(queries, dtype=np.int64))
    repeated = np.array(queries, dtype=np.int64)

    def live(rows):  # the multiset of (key, value) as of every time: compaction-invariant
        acc = Counter()
        for k, v, d in zip(rows.keycode.tolist(), rows.cols[1].tolist(), rows.diffs.tolist()):
            acc[(k, v)] += d
        return {r: m for r, m in acc.items() if m}

    with tuned():
        fast_g, (fq, fr) = fast.gather(codes), fast.gather_matches(repeated)
        found = fast.histories(codes.tolist(), 10_000)
    with tuned("general"):
        gen_g, (gq, gr) = general.gather(codes), general.gather_matches(repeated)
    assert live(fast_g) == live(gen_g)
    assert _query_multiset(fq, fr) == _query_multiset(gq, gr)
    hist = Counter()
    for c, rows in found.items():
        for row in rows:
            assert row[0] == c
            hist[(row[1], row[2])] += row[-1]
    assert {r: m for r, m in hist.items() if m} == live(gen_g)
    assert live(fast.compacted_rows()) == live(general.compacted_rows())



def _query_multiset(q, rows):
    acc = Counter()
    for i, v, d in zip(q.tolist(), rows.cols[1].tolist(), rows.diffs.tolist()):
        acc[(i, v)] += d
    return {r: m for r, m in acc.items() if m}



def test_large_batches_take_the_field_by_field_paths_and_match_the_oracle():
    """Batches past the packed paths' 4,096-row limits (field-by-field merges, gathers and
    permuted packing), on both paths, against networkx over epochs of changes."""
    rng = np.random.default_rng(7)
    pairs = rng.integers(0, 3000, size=(6000, 2))
    present = {(int(a), int(b)) for a, b in pairs if a != b}
    for enabled in (True, False):
        with tuned(None if enabled else "general"):
            flow = ddlab.Dataflow()
            edges = flow.input("edges", columns=["src", "dst"])
            views = [algorithms.connected_components(edges, prioritized=p).view()
                     for p in (False, True)]
            current = set(present)
            edges.insert(sorted(current))
            flow.step()
            for _ in range(3):
                pool = sorted(current)
                gone = {pool[i] for i in rng.integers(0, len(pool), 300)}
                new = {(int(a), int(b)) for a, b in rng.integers(0, 3000, size=(300, 2))} - current
                edges.remove(sorted(gone))
                edges.insert(sorted(new))
                current = (current - gone) | new
                flow.step()
                want = cc_oracle(current)
                assert [v.to_dict() for v in views] == [want, want]



def _filled_trace(batches, recent_capacity=4):
    """A trace of depth 2 holding ``batches`` of ``(key, value, diff)`` at times ``(0, i)``,
    some of them in its recent rows."""
    clock = _EpochClock()
    with tuned(RECENT_CAPACITY=recent_capacity):
        trace = Trace(1, 2, clock, "t")
        for i, rows in enumerate(batches):
            a = np.array(rows, dtype=np.int64)
            trace.insert((0, i), Batch([a[:, 0], a[:, 1]], ("i", "i"), a[:, 2]))
    clock.epoch = 1
    return trace


def _padded(rows, extra):
    """Comparable rows (key code, fields, time, diff) with ``extra`` zero coordinates added."""
    return sorted(zip(rows.keycode.tolist(), *[c.tolist() for c in rows.cols],
                      [tuple(t) + (0,) * extra for t in rows.times.tolist()],
                      rows.diffs.tolist()))


def test_the_entered_view_implements_every_reader_question():
    members = {n for n in vars(TraceReader) if not n.startswith("_")} | \
        set(TraceReader.__annotations__) | {"__len__"}
    assert {"gather", "accumulate_until", "histories", "compacted_rows", "nkey"} <= members
    trace = _filled_trace([[(1, 2, 1), (3, 4, 1)]])
    for view in (trace, EnteredTrace(trace, 1), EnteredTrace(EnteredTrace(trace, 1), 2)):
        assert isinstance(view, TraceReader)
        missing = [m for m in members if not hasattr(view, m)]
        assert not missing, (type(view).__name__, missing)


@given(batches=st.lists(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 4),
                                           st.sampled_from([1, -1, 2])),
                                 min_size=1, max_size=8), min_size=1, max_size=6),
       queries=st.lists(st.integers(0, 10), min_size=1, max_size=12),
       extra=st.integers(1, 2), at=st.integers(0, 6), inner_at=st.integers(0, 3),
       preset=st.sampled_from([None, "tiny", "general"]))
def test_the_entered_view_reads_like_the_trace_with_zero_coordinates(
        batches, queries, extra, at, inner_at, preset):
    """Every answer of an entered view is the outer trace's with times ``(t, 0, ...)``; the
    accumulation at an inner time ``(t, i, ...)`` is the outer one at ``t``."""
    with tuned(preset):
        trace = _filled_trace(batches)
        view = EnteredTrace(trace, extra)
        codes = np.unique(np.array(queries, dtype=np.int64))
        repeated = np.array(queries, dtype=np.int64)
        assert (view.nkey, view.depth, view.kinds, view.row_depth, len(view)) == \
            (trace.nkey, trace.depth + extra, trace.kinds, trace.depth, 0)
        assert _padded(view.gather(codes), 0) == _padded(trace.gather(codes), extra)
        for reader_rows, trace_rows in ((view.all_rows(), trace.all_rows()),
                                        (view.compacted_rows(), trace.compacted_rows())):
            assert _padded(reader_rows, 0) == _padded(trace_rows, extra)
        vq, vrows = view.gather_matches(repeated)
        tq, trows = trace.gather_matches(repeated)
        assert sorted(zip(vq.tolist(), _padded(vrows, 0))) == \
            sorted(zip(tq.tolist(), _padded(trows, extra)))
        assert view.histories(codes.tolist(), 1000) == trace.histories(codes.tolist(), 1000)
        t = (0, at)
        inner = t + (inner_at,) * extra
        vcols, vweights, vcodes, vtimes = view.accumulate_until(codes, inner)
        tcols, tweights, tcodes, ttimes = trace.accumulate_until(codes, t)
        assert [c.tolist() for c in vcols] == [c.tolist() for c in tcols]
        assert vweights.tolist() == tweights.tolist()
        assert [c.tolist() for c in vcodes] == [c.tolist() for c in tcodes]
        assert [v.tolist() for v in vtimes] == \
            [[list(row) + [0] * extra for row in u.tolist()] for u in ttimes]


BIG = 2**31 - 1   # the int32 maximum: a batch holding it (or more) is not narrowed


@given(batches=st.lists(st.lists(st.tuples(st.integers(0, 12),
                                           st.sampled_from([0, 3, -7, BIG - 1]),
                                           st.sampled_from([1, -1, 2])),
                                 min_size=1, max_size=30), min_size=1, max_size=8),
       wide=st.sampled_from([None, BIG, 2**40]), nkey=st.sampled_from([1, 2]),
       epochs=st.booleans(),
       queries=st.lists(st.sampled_from([1, 5, 12, 13, -2**40, BIG, 2**40, 2**40 + 5]),
                        max_size=6))
def test_narrowed_batches_read_like_wide_ones(batches, wide, nkey, epochs, queries):
    """Spine batches whose values all fit in 32 bits are stored as int32 (from
    ``NARROW_ROWS`` rows; five here); every read returns int64 and the same rows as a trace
    that never narrows, for queries inside and far outside the int32 range (a key code of
    ``2**40`` must not match a clipped one)."""
    answers, widths = [], set()
    for narrow in (5, 10**9):
        clock = _EpochClock()
        with tuned("tiny", NARROW_ROWS=narrow):
            trace = Trace(nkey, 2, clock, "t")
            for i, rows_ in enumerate(batches):
                clock.epoch = i // 2 if epochs else 0
                a = np.array(rows_, dtype=np.int64)
                if wide is not None and i == len(batches) - 1:
                    a[0, 1] = wide     # one value that does not fit: that batch stays int64
                trace.insert((clock.epoch, i), Batch([a[:, 0], a[:, 1]], ("i", "i"),
                                                     a[:, 2]).consolidate())
            widths |= {(narrow, b.data.dtype.name) for b in trace.batches}
            codes = np.unique(np.array(queries + [0, 3], dtype=np.int64)) if nkey == 1 else \
                np.unique(trace.all_rows().keycode)[::2]
            got = [_trace_rows(trace)]
            for rows in (trace.gather(codes), trace.gather_matches(codes)[1],
                         trace.all_rows()):
                assert all(c.dtype == np.int64 for c in rows.cols + [rows.times, rows.diffs])
                got.append(_summed(zip(rows.keycode.tolist(), *[c.tolist() for c in rows.cols],
                                       map(tuple, rows.times.tolist()), rows.diffs.tolist())))
            cols, weights, later_codes, later_times = trace.accumulate_until(codes, (0, 3))
            assert all(c.dtype == np.int64 for c in [*cols, *later_codes, *later_times])
            got.append(_summed(zip(*[c.tolist() for c in cols], weights.tolist())))
            got.append(sorted(zip(np.concatenate(later_codes or [codes[:0]]).tolist(),
                                  map(tuple, np.concatenate(
                                      later_times or [np.zeros((0, 2), np.int64)]).tolist()))))
            got.append(trace.histories(codes.tolist(), 10**6))
            answers.append(got)
    assert answers[0] == answers[1]
    assert (10**9, "int32") not in widths


def test_a_trace_whose_batches_all_cancelled_reads_as_empty():
    """Every batch consolidated to nothing: the trace never learned its kinds, and a large
    accumulation over it is empty (it raised TypeError; found by the narrowing test)."""
    clock = _EpochClock()
    trace = Trace(1, 2, clock, "t")
    a = np.array([[0, 3, 1], [0, 3, -1]], dtype=np.int64)
    trace.insert((0, 0), Batch([a[:, 0], a[:, 1]], ("i", "i"), a[:, 2]).consolidate())
    cols, weights, later_codes, later_times = trace.accumulate_until(
        np.array([0, 3], dtype=np.int64), (0, 3))
    assert list(cols) == [] and len(weights) == 0 and later_codes == [] and later_times == []


def test_a_batch_holding_a_value_beyond_int32_stays_wide():
    """Narrowing needs every value strictly inside the int32 range; float columns never
    narrow (their bits are int64)."""
    from ddlab.engine.trace.layout import narrowed

    fits = np.array([[1, 2, 3, 4, 5, 6], [-5, 0, 7, 2**31 - 2, 1, 1]], dtype=np.int64)
    with tuned(NARROW_ROWS=4):
        assert narrowed(fits, (None, False)).dtype == np.int32
        assert (narrowed(fits, (None, False)) == fits).all()
        for edge in (2**31 - 1, -2**31, 2**40):
            wide = fits.copy()
            wide[1, 2] = edge
            assert narrowed(wide, (None, False)).dtype == np.int64
        assert narrowed(fits, (None, True)).dtype == np.int64
    assert narrowed(fits, (None, False)).dtype == np.int64   # fewer rows than NARROW_ROWS


@given(rows=st.lists(st.tuples(st.integers(-5, 40), st.sampled_from([0, 7, BIG - 1, BIG, -BIG]),
                               st.integers(0, 3), st.sampled_from([1, -1, 2])),
                     min_size=1, max_size=40),
       floats=st.booleans(), permute=st.booleans())
def test_packing_straight_to_int32_equals_narrowing_the_int64_matrix(rows, floats, permute):
    """``pack(..., narrow=True)`` writes int32 at once exactly where packing in int64 and then
    :func:`~ddlab.engine.trace.layout.narrowed` would narrow: same dtype, same values (values
    at the int32 limits, float columns and small matrices stay int64)."""
    from ddlab.engine.trace.layout import narrowed, pack

    a = np.array(rows, dtype=np.int64)
    cols = [a[:, 0], a[:, 1].astype(np.float64) if floats else a[:, 1]]
    times = np.stack([np.zeros(len(a), dtype=np.int64), a[:, 2]], axis=1)
    order = np.argsort(-a[:, 0], kind="stable") if permute else None
    for keycode in (cols[0], a[:, 1] * 3):
        with tuned(NARROW_ROWS=4):
            wide, layout = pack(keycode, cols, times, a[:, 3], order)
            straight, layout2 = pack(keycode, cols, times, a[:, 3], order, narrow=True)
            expected = narrowed(wide, layout)
        assert layout2 == layout and wide.dtype == np.int64
        assert straight.dtype == expected.dtype and (straight == expected).all()


def _merged_rows(monkeypatch) -> list:
    """Rows of every spine merge from now on (one entry per merge: its parts' sizes)."""
    merges = []
    original = Trace._merge
    monkeypatch.setattr(Trace, "_merge", lambda self, parts, force=False:
                        merges.append([len(p) for p in parts]) or original(self, parts, force))
    return merges


def test_small_inserts_into_a_large_trace_never_rewrite_its_large_batches(monkeypatch):
    """Issue 48: with more than ``MAX_SPINE_BATCHES`` batches in a trace past
    ``LARGE_SPINE_ROWS``, each spill of the recent rows (a few rows, once per update or so)
    was merged into the newest large batch, rewriting it (24M rows for 129 in CC
    random-400k-3.4m plain: updates of seconds).  The large batches are merged only when
    what joins them is a comparable size: the rows merged over many small inserts stay a
    small multiple of the rows inserted (geometric merging), and the trace reads what was
    inserted."""
    clock = _EpochClock()
    rng = np.random.default_rng(3)
    with tuned(LARGE_SPINE_ROWS=1_000, MAX_SPINE_BATCHES=3, SMALL_INSERT=4, RECENT_CAPACITY=8,
               KERNELS=False):
        trace = Trace(1, 1, clock)
        inserted = []
        for size in (4_000, 1_500, 700):  # three large batches (left waits for right)
            rows = rng.integers(0, 500, size=(size, 2))
            trace.insert((clock.epoch,), Batch([rows[:, 0], rows[:, 1]], ("i", "i"),
                                               np.ones(size, dtype=np.int64)))
            inserted += [(a, b, (clock.epoch,), 1) for a, b in rows.tolist()]
            clock.epoch += 1
        large = sorted(len(b) for b in trace.batches)
        assert len(trace.batches) == 3 and large[0] >= 700, large
        merges = _merged_rows(monkeypatch)
        small = 0
        for _ in range(400):  # updates of 3 rows each: a spill every few of them
            rows = rng.integers(0, 500, size=(3, 2))
            diffs = np.array([1, -1, 1], dtype=np.int64)
            trace.insert((clock.epoch,), Batch([rows[:, 0], rows[:, 1]], ("i", "i"), diffs))
            inserted += [(a, b, (clock.epoch,), d) for (a, b), d in zip(rows.tolist(), diffs)]
            small += 3
            clock.epoch += 1
    rewritten = sum(sum(m) for m in merges)
    # geometric merging of ~1,200 small rows: each row merged about log2(1,200/8) times, plus
    # at most one merge into a large batch once the small ones grew to half its size
    assert rewritten <= 12 * small + 2 * sum(large), (rewritten, merges[:10])
    assert not any(max(m) >= 700 and min(m) * 2 < max(m) for m in merges), merges
    want = _summed((a, b, (clock.epoch - 1,), d) for a, b, _, d in inserted)
    got = trace.compacted_rows()
    assert _summed(zip(got.cols[0].tolist(), got.cols[1].tolist(),
                       map(tuple, got.times.tolist()), got.diffs.tolist())) == want
