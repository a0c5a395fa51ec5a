"""None in an object column keeps one code across batches (SQL's NULL rides on it)."""
from ddlab import Dataflow
from ddlab.engine.columns import Interner


def test_none_interns_to_one_code_and_decodes_as_none():
    interner = Interner()
    first = interner.intern([None, "a"])
    again = interner.intern(["b", None])
    assert first[0] == again[1]
    assert interner.decode(again).tolist() == ["b", None]


def test_a_row_with_none_is_removed_by_its_removal():
    flow = Dataflow()
    xs = flow.input("xs", columns=["k", "v"])
    view = xs.view()
    xs.insert([("a", None)])
    flow.step()
    xs.remove([("a", None)])
    flow.step()
    assert view.to_dict() == {}
