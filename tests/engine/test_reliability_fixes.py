"""The four contract breaks of issue 14, each pinned: reducer user functions raise
OperatorError, a failing subscriber cannot corrupt the others, loops whose body returns an outer
collection build, and views never drop a column whose name repeats."""
from __future__ import annotations

import pytest

import ddlab
from ddlab import OperatorError, SubscriberError


def test_threshold_function_error_names_operator_and_record():
    flow = ddlab.Dataflow()
    x = flow.input("x")

    def picky(w):
        if (w > 1).any():
            raise ZeroDivisionError("no duplicates please")
        return w

    out = x.threshold(picky, name="picky").view()
    x.insert([1, 2])
    flow.step()
    before = (out.to_dict(), flow.epoch, flow.retained_updates(), len(flow.stats()))
    x.insert([2])
    with pytest.raises(OperatorError, match=r"picky#\d+: .*picky raised ZeroDivisionError: no "
                                            r"duplicates please on the multiplicities") as info:
        flow.step()
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert info.value.operator.startswith("picky#")
    assert (out.to_dict(), flow.epoch, flow.retained_updates(), len(flow.stats())) == before


def test_threshold_function_returning_the_wrong_shape():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    x.threshold(lambda w: 1).view()
    x.insert([1, 2])
    with pytest.raises(OperatorError, match=r"must return one integer per multiplicity"):
        flow.step()
    assert flow.epoch == 0


@pytest.mark.parametrize("build", [
    lambda x: x.reduce(lambda k, vs: [(1 // 0, 1)]),
    lambda x: x.cogroup(x, lambda k, a, b: [(len(a) / 0, 1)]),
    lambda x: x.join(x, select=lambda k, a, b: a / 0),
    lambda x: x.prioritize(lambda *cols: 1 // 0, lambda v: v),
])
def test_other_user_functions_raise_operator_error(build):
    flow = ddlab.Dataflow()
    x = flow.input("x")
    build(x).view()
    x.insert([(1, 2)])
    with pytest.raises(OperatorError, match=r"#\d+: .*ZeroDivisionError") as info:
        flow.step()
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert flow.epoch == 0


def test_failing_subscriber_does_not_corrupt_the_others():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    seen_a, seen_c = [], []
    x.subscribe(seen_a.append, name="first")

    def bad(updates):
        raise RuntimeError("display broke")

    x.subscribe(bad, name="broken")
    x.subscribe(seen_c.append, name="third")
    view = x.view()
    x.insert([1])
    with pytest.raises(SubscriberError, match=r"subscriber broken#\d+ raised RuntimeError: "
                                              r"display broke while receiving epoch 0\. The "
                                              r"epoch committed and stands") as info:
        flow.step()
    assert info.value.report.epoch == 0
    assert flow.epoch == 1 and view.to_dict() == {1: 1}
    x.insert([2])
    with pytest.raises(SubscriberError):
        flow.step()
    expected = [[(1, (0,), 1)], [(2, (1,), 1)]]
    assert seen_a == expected
    assert seen_c == expected  # every epoch, with its true time


def test_interrupt_in_a_subscriber_still_serves_the_others():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    seen = []

    def stop(updates):
        raise KeyboardInterrupt

    x.subscribe(stop)
    x.subscribe(seen.append)
    x.insert([1])
    with pytest.raises(KeyboardInterrupt) as info:
        flow.step()
    assert any("epoch committed" in n for n in info.value.__notes__)
    assert seen == [[(1, (0,), 1)]] and flow.epoch == 1


def _reach(edges, roots):
    # roots.iterate whose body ignores the variable and returns an outer collection
    return roots.iterate(lambda v: edges.project(1).distinct())


@pytest.mark.parametrize("how", ["iterate", "prioritize", "flow.iterate"])
def test_loop_body_returning_an_outer_collection(how):
    flow = ddlab.Dataflow()
    seed, outer = flow.input("seed"), flow.input("outer")
    if how == "iterate":
        out = seed.iterate(lambda v: outer)
    elif how == "prioritize":
        out = seed.prioritize(0, lambda v: outer)
    else:
        (out,) = flow.iterate([seed], lambda v: outer)
    view = out.view()
    seed.insert([(1, 1)])
    outer.insert([(2, 2), (3, 0)])
    flow.step()
    assert view.to_dict() == {(2, 2): 1, (3, 0): 1}  # x1 = outer, and it stays there
    outer.remove([(3, 0)])
    flow.step()
    assert view.to_dict() == {(2, 2): 1}


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
