"""``explode`` (engine/operators/explode.py): CONTRIBUTING.md's example of an operator added
as one file.  It must compute what a from-scratch evaluation says, be explained and replayed
by ``flow.why`` with no change to ``engine/why`` (its hooks are inherited), and be the very
file the guide shows."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import ddlab
from ddlab.engine.operators import explode as explode_module

ROOT = Path(__file__).resolve().parents[2]


def _weights(record):
    """A shop's sale ``(shop, amount)`` as the shop with multiplicity ``amount`` (a refund,
    a negative amount, subtracts)."""
    shop, amount = record
    return [(shop, amount)] if amount else []


def _expected_totals(sales: dict) -> dict:
    """The oracle: each shop's sum of amount * multiplicity, from scratch."""
    totals: dict = {}
    for (shop, amount), mult in sales.items():
        totals[shop] = totals.get(shop, 0) + amount * mult
    return {(shop, n): 1 for shop, n in totals.items() if n}


UPDATES = st.lists(st.lists(st.tuples(st.tuples(st.sampled_from("abc"), st.integers(-3, 4)),
                                      st.sampled_from([1, -1, 2])), max_size=6),
                   min_size=1, max_size=4)


@settings(max_examples=40, deadline=None)
@given(epochs=UPDATES)
def test_explode_then_count_sums_the_weights_in_every_epoch(epochs):
    flow = ddlab.Dataflow()
    sales = flow.input("sales", columns=["shop", "amount"])
    totals = sales.explode(_weights).count().view()
    accumulated: dict = {}
    for updates in epochs:
        sales.update(updates)
        flow.step()
        for rec, d in updates:
            accumulated[rec] = accumulated.get(rec, 0) + d
        assert totals.to_dict() == _expected_totals(accumulated)


def test_why_explains_a_total_through_explode_and_replays_it():
    flow = ddlab.Dataflow()
    sales = flow.input("sales", columns=["shop", "amount"])
    totals = sales.explode(_weights).count()
    sales.insert([("a", 5), ("a", 3), ("b", 2), ("c", 4)])
    flow.step()
    why = flow.why(totals, ("a", 8))
    assert why.verified
    assert sorted(map(tuple, why.inputs["sales"][["shop", "amount"]].values.tolist())) == \
        [("a", 3), ("a", 5)]
    assert "explode" in [n["kind"] for n in why.nodes()]      # shown: it computes something


def test_why_picks_one_record_an_exploded_record_came_from():
    """A present demand through explode: one input record whose image holds the record."""
    flow = ddlab.Dataflow()
    words = flow.input("words", columns=["doc", "word"])
    exploded = words.explode(lambda r: [(r[1], 2), (r[1] + "!", -1)])
    view = exploded.view()
    words.insert([(1, "hi"), (2, "yo")])
    flow.step()
    assert view.to_dict() == {"hi": 2, "hi!": -1, "yo": 2, "yo!": -1}
    why = flow.why(exploded, "hi")
    assert why.verified and why.inputs["words"][["doc", "word"]].values.tolist() == [[1, "hi"]]


def test_a_bad_pair_names_the_record_and_rolls_the_epoch_back():
    flow = ddlab.Dataflow()
    xs = flow.input("xs")
    out = xs.explode(lambda x: [x]).view()
    xs.insert([7])
    with pytest.raises(ddlab.OperatorError, match=r"explode#\d+: .*\(record, multiplicity\) "
                                                  r"pairs; for 7 it gave 7"):
        flow.step()
    assert out.to_dict() == {} and flow.epoch == 0


def test_the_guide_shows_this_very_file():
    """CONTRIBUTING.md's worked example is engine/operators/explode.py, verbatim."""
    guide = (ROOT / "CONTRIBUTING.md").read_text()
    shown = re.search(r"<!-- explode-example -->\n```python\n(.*?)```", guide, flags=re.S)
    assert shown is not None, "the example block is missing from CONTRIBUTING.md"
    assert shown.group(1) == Path(explode_module.__file__).read_text()
