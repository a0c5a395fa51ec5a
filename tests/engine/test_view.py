"""Views (``engine/view.py``): contents, limits, last changes, and names that never drop a
field."""
from __future__ import annotations

import ddlab


def test_view_limit_label_and_changes():
    flow = ddlab.Dataflow()
    x = flow.input("x", columns=["k", "v"])
    view = x.view()
    x.insert([(i, i * i) for i in range(10)])
    flow.step()
    assert len(view.to_pandas(limit=3)) == 3
    assert view.to_pandas(limit=3)["k"].tolist() == [0, 1, 2]
    assert view.label.startswith("x#")
    x.remove([(0, 0)])
    flow.step()
    assert view.changes().to_dict("list") == {"k": [0], "v": [0], "diff": [-1]}



def test_repeated_column_names_keep_every_field():
    flow = ddlab.Dataflow()
    b = flow.input("b", columns=["k", "v"])
    joined = b.join(b, select=(1, 2))
    assert joined.columns == ["v", "v"]
    view = joined.view()
    b.insert([(1, 2), (1, 3)])
    flow.step()
    frame = view.to_pandas()
    assert list(frame.columns) == ["v", "v_2", "multiplicity"]
    assert sorted(map(tuple, frame[["v", "v_2"]].itertuples(index=False))) == [
        (2, 2), (2, 3), (3, 2), (3, 3)]
    changes = view.changes()
    assert list(changes.columns) == ["v", "v_2", "diff"] and len(changes) == 4



def test_a_field_named_like_the_multiplicity_column_is_kept():
    flow = ddlab.Dataflow()
    x = flow.input("x", columns=["multiplicity", "diff"])
    view = x.view()
    x.insert([(5, 6)])
    flow.step()
    assert list(view.to_pandas().columns) == ["multiplicity_2", "diff", "multiplicity"]
    assert list(view.changes().columns) == ["multiplicity", "diff_2", "diff"]
    assert view.to_pandas().iloc[0].tolist() == [5, 6, 1]

