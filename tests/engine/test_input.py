"""Inputs (``engine/input.py``): rows, DataFrames and diffs in, pending updates visible until
the step, removals of absent records as negative multiplicities."""
from __future__ import annotations

import pytest

import ddlab


def test_pending_updates_are_visible_until_the_step():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    x.insert([(1, 2)])
    x.remove([(3, 4)])
    assert x.pending_count == 2
    assert sorted(x.pending_updates()) == [((1, 2), 1), ((3, 4), -1)]
    flow.step()
    assert x.pending_count == 0 and x.pending_updates() == []



def test_removing_absent_record_gives_negative_multiplicity():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    view = x.view()
    counts = x.count().view()
    x.remove([(1, 2)])
    flow.step()
    assert view.to_dict() == {(1, 2): -1}
    assert counts.to_dict() == {(1, -1): 1}
    assert view.to_pandas()["multiplicity"].tolist() == [-1]



def test_pandas_input_and_output():
    import pandas as pd

    flow = ddlab.Dataflow()
    x = flow.input("x")
    view = x.view()
    x.insert(pd.DataFrame({"user": ["a", "b"], "n": [1, 2]}))
    x.update(pd.DataFrame({"user": ["a"], "n": [1], "diff": [2]}))
    flow.step()
    df = view.to_pandas().sort_values("user").reset_index(drop=True)
    assert df.to_dict("list") == {"user": ["a", "b"], "n": [1, 2], "multiplicity": [3, 1]}
    assert x.columns == ["user", "n"]



# -- set inputs (distinct=True) ---------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ddlab.engine.errors import InputError  # noqa: E402


def test_a_set_input_refuses_a_second_copy_and_a_removal_of_what_is_absent():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"], distinct=True)
    view, degree = edges.view(), edges.count().view()
    assert edges.holds_set and not ddlab.Dataflow().input("plain").holds_set
    edges.insert([(1, 2), (2, 3)])
    flow.step()
    edges.remove([(1, 2)])
    edges.insert([(1, 2), (3, 4)])          # out and back in within one epoch: fine
    flow.step()
    for bad, multiplicity in (([((2, 3), 1)], 2), ([((9, 9), -1)], -1),
                              ([((5, 6), 1), ((5, 6), 1)], 2)):
        edges.update(bad)
        with pytest.raises(InputError, match=rf"input 'edges' holds a set .* record "
                                             rf"\({bad[0][0][0]}, {bad[0][0][1]}\) "
                                             rf"multiplicity {multiplicity}") as err:
            flow.step()
        assert err.value.discarded_updates == {"edges": bad}
        assert view.to_dict() == {(1, 2): 1, (2, 3): 1, (3, 4): 1}   # as before
        assert degree.to_dict() == {(1, 1): 1, (2, 1): 1, (3, 1): 1}
        assert flow.epoch == 2
    edges.update([((5, 6), 1), ((5, 6), 1), ((5, 6), -1)])   # nets to one copy
    flow.step()
    assert view.to_dict() == {(1, 2): 1, (2, 3): 1, (3, 4): 1, (5, 6): 1}


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.tuples(st.tuples(st.integers(0, 3), st.integers(0, 2)),
                                   st.sampled_from([1, -1])), max_size=6), max_size=8),
       st.booleans())
def test_a_set_input_accepts_exactly_the_epochs_that_keep_a_set(epochs, retain):
    """Oracle: a Python multiset; an epoch is refused iff some record would leave {0, 1},
    and then everything reads as before it."""
    flow = ddlab.Dataflow(retain_inputs=retain)
    xs = flow.input("xs", columns=["a", "b"], distinct=True)
    view = xs.view()
    held: dict = {}
    for ups in epochs:
        after = dict(held)
        for record, diff in ups:
            after[record] = after.get(record, 0) + diff
        xs.update(ups)
        if all(m in (0, 1) for m in after.values()):
            flow.step()
            held = {r: m for r, m in after.items() if m}
        else:
            with pytest.raises(InputError, match="holds a set"):
                flow.step()
        assert view.to_dict() == held
