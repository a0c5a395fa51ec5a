"""Inputs (``engine/input.py``): rows, DataFrames and diffs in, pending updates visible until
the step, removals of absent records as negative multiplicities."""
from __future__ import annotations

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

