"""Global aggregates: ``key_columns=0`` (``GLOBAL``) on count, sum, min, max, top_k, reduce and
join means one group, the whole collection (join: no key field, the cross product).

Each operator against a from-scratch evaluation of the whole accumulated input after every
epoch (removals included, so multiplicities go negative), at the top level and inside one and
two nested loops
then issue 50's reproductions, each of which gave a wrong answer (or a raw
``IndexError``) when ``key_columns=0`` was read as "the whole record is the key"."""
from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings

import ddlab
from ddlab.engine import DataflowError
from ddlab.engine.collection import GLOBAL, WHOLE_RECORD

from . import oracle
from .record_programs import EPOCHS, _in_loop, accumulate


def _count(a):
    total = sum(a.values())
    return {total: 1} if total else {}


def _sum(a):
    # over the records' second field (the program projects it)
    values = Counter()
    for r, m in a.items():
        values[r[1]] += m
    values = oracle.clean(values)
    return {sum(v * m for v, m in values.items()): 1} if values else {}


def _extreme(a, largest):
    present = [r for r, m in a.items() if m > 0]
    return {(max if largest else min)(present): 1} if present else {}


def _top_k(a, k, largest=True):
    out, left = Counter(), k
    for r in sorted((r for r, m in a.items() if m > 0), reverse=largest):
        take = min(a[r], left)
        if take > 0:
            out[r] += take
        left -= take
    return dict(out)


def _spread(key, values):
    """A global reduce's function: the key is ``()``, the values are the whole records."""
    assert key == ()
    return [((len(values), sum(r[0] * m for r, m in values) % 7), 1)]


def _reduce(a):
    return {_spread((), sorted(a.items()))[0][0]: 1} if a else {}


def _cross(a, b):
    out = Counter()
    for ra, ma in a.items():
        for rb, mb in b.items():
            out[ra + rb] += ma * mb
    return oracle.clean(out)


GLOBAL_OPS = {
    "count": (lambda c: c.count(key_columns=GLOBAL), _count),
    "sum": (lambda c: c.project(1).sum(key_columns=GLOBAL), _sum),
    "min": (lambda c: c.min(key_columns=GLOBAL), lambda a: _extreme(a, False)),
    "max": (lambda c: c.max(key_columns=GLOBAL), lambda a: _extreme(a, True)),
    "top_2": (lambda c: c.top_k(2, key_columns=GLOBAL), lambda a: _top_k(a, 2)),
    "bottom_1": (lambda c: c.top_k(1, largest=False, key_columns=GLOBAL),
                 lambda a: _top_k(a, 1, False)),
    "reduce": (lambda c: c.reduce(_spread, key_columns=GLOBAL), _reduce),
    "cross_join": (lambda c: c.join(c.project(1), key_columns=GLOBAL),
                   lambda a: _cross(a, oracle.linear(a, lambda r: [(r[1],)]))),
    "cross_join_select": (lambda c: c.join(c, select=(3, 0), key_columns=GLOBAL),
                          lambda a: oracle.linear(_cross(a, a), lambda r: [(r[3], r[0])])),
}


@pytest.mark.parametrize("depth", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(GLOBAL_OPS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(epochs=EPOCHS)
def test_global_operator_matches_from_scratch(name, depth, epochs):
    program, expect = GLOBAL_OPS[name]
    flow = ddlab.Dataflow()
    records = flow.input("records", columns=["k", "v"])
    view = _in_loop(program, depth)(records).view()
    for epoch, want in zip(epochs, accumulate(epochs)):
        records.update(epoch)
        flow.step()
        assert view.to_dict() == expect(want), (name, depth, want)


def test_max_of_no_key_follows_deletions():
    """Issue 50: max(key_columns=0) gave {} after removing the largest, then {10, 30}."""
    flow = ddlab.Dataflow()
    e = flow.input("e", columns=["a", "b"])
    m = e.project(1).max(key_columns=GLOBAL).view()
    e.insert([(1, 10), (2, 20), (3, 30)])
    flow.step()
    assert m.to_dict() == {30: 1}
    e.remove([(3, 30)])
    flow.step()
    assert m.to_dict() == {20: 1}
    e.insert([(3, 30)])
    flow.step()
    e.remove([(1, 10)])
    flow.step()
    e.insert([(1, 10)])
    flow.step()
    assert m.to_dict() == {30: 1}


def test_count_of_no_key_counts_the_collection():
    """Issue 50: count(key_columns=0) gave {3}, then {3} after a removal, then {1, 3}."""
    flow = ddlab.Dataflow()
    e = flow.input("e", columns=["a", "b"])
    c = e.count(key_columns=GLOBAL)
    view = c.view()
    e.insert([(1, 10), (2, 20), (3, 30)])
    flow.step()
    assert view.to_dict() == {3: 1} and c.columns == ["count"]
    e.remove([(3, 30)])
    flow.step()
    assert view.to_dict() == {2: 1}
    e.insert([(3, 30)])
    flow.step()
    assert view.to_dict() == {3: 1}
    e.remove([(1, 10), (2, 20), (3, 30)])
    flow.step()
    assert view.to_dict() == {}      # no records, no group: nothing (as for an absent key)


def test_max_of_no_key_over_a_union_in_a_loop_flow():
    """Issue 50's third reproduction: the max of three-field records was two records."""
    flow = ddlab.Dataflow(max_iterations=10)
    a, b = flow.input("A"), flow.input("B")

    def tri(r):
        return (r[0], r[1], (r[0] + r[1]) % 3)
    m = a.map(tri).concat(b.map(tri)).max(key_columns=GLOBAL).view()
    b.insert([(2, 1)])
    flow.step()
    assert m.to_dict() == {(2, 1, 0): 1}
    a.insert([(2, 2)])
    flow.step()
    assert m.to_dict() == {(2, 2, 1): 1}


def test_global_aggregates_over_text_fields():
    """Records with a text field raised a raw IndexError on the first step."""
    flow = ddlab.Dataflow()
    w = flow.input("w", columns=["name", "n"])
    views = {"max": w.max(key_columns=GLOBAL).view(), "min": w.min(key_columns=GLOBAL).view(),
             "count": w.count(key_columns=GLOBAL).view(),
             "top": w.top_k(2, largest=False, key_columns=GLOBAL).view(),
             "reduce": w.reduce(lambda k, vs: [(len(vs), 1)], key_columns=GLOBAL).view()}
    w.insert([("b", 1), ("a", 5), ("c", 0)])
    flow.step()
    assert {k: v.to_dict() for k, v in views.items()} == {
        "max": {("c", 0): 1}, "min": {("a", 5): 1}, "count": {3: 1},
        "top": {("a", 5): 1, ("b", 1): 1}, "reduce": {3: 1}}


def test_global_sum_needs_one_number_per_record():
    """The sum of the whole collection adds one-field records; wider records are refused by
    name (as a keyed sum with more than one value field is)."""
    flow = ddlab.Dataflow()
    e = flow.input("e", columns=["a", "b"])
    e.sum(key_columns=GLOBAL).view()
    e.insert([(1, 2)])
    with pytest.raises(DataflowError, match="sum needs records"):
        flow.step()


def test_whole_record_is_still_the_key_of_distinct():
    """WHOLE_RECORD (the same number) keeps its meaning for distinct and the set operations."""
    assert GLOBAL == WHOLE_RECORD == 0
    flow = ddlab.Dataflow()
    e = flow.input("e")
    d, u = e.distinct().view(), e.union(e).view()
    e.insert([(1, 2), (1, 2), (1, 3)])
    flow.step()
    assert d.to_dict() == {(1, 2): 1, (1, 3): 1} and u.to_dict() == {(1, 2): 2, (1, 3): 1}
