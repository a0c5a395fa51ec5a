"""Bad input and failing epochs: a clear error naming what and where, and the dataflow reads
exactly as before (the failed epoch is rolled back; nothing already accepted is lost)."""
from __future__ import annotations

import pytest

import ddlab
from ddlab import InputError, NonConvergenceError, OperatorError, SchemaError
from ddlab.algorithms import connected_components


def _flow_with_cc():
    flow = ddlab.Dataflow(max_iterations=50)
    edges = flow.input("edges", columns=["src", "dst"])
    labels = connected_components(edges).view()
    edges.insert([(1, 2), (3, 4)])
    flow.step()
    return flow, edges, labels


def _state(flow, labels):
    return labels.to_dict(), flow.retained_updates(), flow.epoch, len(flow.stats())


def test_wrong_arity_names_the_row():
    flow, edges, labels = _flow_with_cc()
    before = _state(flow, labels)
    with pytest.raises(InputError, match=r"input 'edges': row 1 \(5, 6, 7\) has 3 fields, expected 2"):
        edges.insert([(5, 6), (5, 6, 7)])
    flow.step()
    assert _state(flow, labels)[0] == before[0]


def test_unhashable_value_is_named():
    flow, edges, labels = _flow_with_cc()
    with pytest.raises(InputError, match=r"unhashable value \[1, 2\] \(list\)"):
        edges.insert([(5, [1, 2])])


def test_mixed_types_in_a_column():
    flow, edges, labels = _flow_with_cc()
    with pytest.raises(InputError, match=r"column 0 held int values and these rows give object"):
        edges.insert([("5", 6)])
    flow2 = ddlab.Dataflow()
    x = flow2.input("x")
    with pytest.raises(InputError, match=r"column 0 mixes types: 'a' \(str\), 1 \(int\)"):
        x.insert([("a", 1), (1, 2)])


def test_join_of_int_keys_with_string_keys():
    flow = ddlab.Dataflow()
    a, b = flow.input("a"), flow.input("b")
    out = a.join(b).view()
    a.insert([(1, 2)])
    b.insert([("1", 3)])
    with pytest.raises(SchemaError, match=r"key column 0 is int on the left and object on the right"):
        flow.step()
    assert out.to_dict() == {}
    assert flow.epoch == 0


def test_user_function_error_rolls_back_the_epoch():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    doubled = x.map(lambda r: (r[0], 10 // r[1])).view()
    counts = x.count().view()
    x.insert([(1, 1), (2, 5)])
    flow.step()
    before = (doubled.to_dict(), counts.to_dict(), flow.retained_updates(), len(flow.stats()))
    x.insert([(3, 0), (4, 4)])
    with pytest.raises(OperatorError, match=r"map#\d+: .* raised ZeroDivisionError: .* on record \(3, 0\)") as info:
        flow.step()
    assert info.value.row == (3, 0)
    assert sorted(info.value.discarded_updates["x"]) == [((3, 0), 1), ((4, 4), 1)]
    assert (doubled.to_dict(), counts.to_dict(), flow.retained_updates(), len(flow.stats())) == before
    assert flow.epoch == 1
    x.insert([(5, 5)])  # the engine stays usable
    flow.step()
    assert doubled.to_dict() == {(1, 10): 1, (2, 2): 1, (5, 2): 1}


def test_loop_that_never_converges_names_loop_and_bound():
    flow, edges, labels = _flow_with_cc()
    counter = flow.input("counter")
    runaway = counter.iterate(lambda v: v.map(lambda r: r + 1), max_iterations=30,
                              name="runaway").view()
    before = _state(flow, labels)
    counter.insert([0])
    edges.insert([(2, 3)])
    with pytest.raises(NonConvergenceError, match=r"loop 'root/runaway' did not converge within 30 iterations") as info:
        flow.step()
    assert info.value.loop == "root/runaway" and info.value.bound == 30
    assert _state(flow, labels) == before
    assert runaway.to_dict() == {}
    edges.insert([(2, 3)])
    flow.step()
    assert labels.to_dict() == {(1, 1): 1, (2, 1): 1, (3, 1): 1, (4, 1): 1}


def test_a_loop_that_never_converges_gives_its_builders_hint_instead_of_the_engines():
    """``Loop(hint=...)``: what built the loop (a rules program) words the advice."""
    from ddlab.engine.loops import Loop

    flow = ddlab.Dataflow()
    counter = flow.input("counter")
    loop = Loop(flow, flow.root, "runaway", max_iterations=20,
                hint="The relation n keeps growing: bound it, or give limit=N.")
    n = loop.variable(counter)
    loop.leave(n.set(n.map(lambda r: r + 1).concat(n).distinct())).view()
    counter.insert([0])
    with pytest.raises(NonConvergenceError) as info:
        flow.step()
    message = str(info.value)
    assert message.startswith("loop 'root/runaway' did not converge within 20 iterations")
    assert "The relation n keeps growing: bound it, or give limit=N." in message
    assert "max_iterations" not in message and "pending updates" not in message
    assert message.endswith("The epoch was rolled back.") and "\n" not in message


def test_failure_inside_nested_loop_rolls_back():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    out = x.iterate(lambda v: v.iterate(lambda w: w.map(lambda r: r if r != 7 else 1 // 0))
                    .concat(v).distinct()).view()
    x.insert([1, 2])
    flow.step()
    x.insert([7])
    with pytest.raises(OperatorError):
        flow.step()
    assert out.to_dict() == {1: 1, 2: 1}
    x.insert([3])
    flow.step()
    assert out.to_dict() == {1: 1, 2: 1, 3: 1}


def test_update_needs_integer_diffs():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    with pytest.raises(InputError, match=r"update 0 \(\(1, 2\), 'a'\) is not a \(record, diff\) pair"):
        x.update([((1, 2), "a")])


def test_view_inside_loop_is_refused():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    with pytest.raises(ddlab.DataflowError, match="inside loop"):
        x.iterate(lambda v: (v.view(), v)[1])


def test_a_cycle_without_feedback_is_refused_by_name():
    """A cycle that does not go around a loop's feedback has no order to run in (issue 29,
    item 8): the step refuses it, naming the operators on the cycle (not the ones merely
    downstream of it), and leaves the input's updates staged, not lost."""
    flow = ddlab.Dataflow()
    xs = flow.input("xs")
    a = xs.map(lambda r: r)
    b = a.map(lambda r: r)
    out = b.view()
    a.op.add_input(b.op)  # (no public call builds such a cycle: reach the operators)
    xs.insert([1])
    with pytest.raises(ddlab.DataflowError, match="cycle without a loop's feedback") as err:
        flow.step()
    message = str(err.value)
    assert a.op.label in message and b.op.label in message
    assert "view" not in message and xs.op.label not in message
    assert out.to_dict() == {} and flow.epoch == 0
    with pytest.raises(ddlab.DataflowError, match="cycle"):
        flow.step()


def test_operator_added_after_data_flowed_is_refused():
    """A late operator would miss the updates its input already sent: refuse it clearly,
    register nothing, and keep working; new inputs and their operators are still fine."""
    flow, edges, labels = _flow_with_cc()
    n_ops = len(flow.operators)
    with pytest.raises(ddlab.DataflowError, match=r"has already sent updates .* Build every "
                                                  r"operator before the first step"):
        edges.count()
    with pytest.raises(ddlab.DataflowError, match="already sent updates"):
        edges.view()
    assert len(flow.operators) == n_ops
    late = flow.input("late")
    late_counts = late.count().view()
    late.insert([(1, 2), (1, 3)])
    edges.insert([(4, 5)])
    flow.step()
    assert late_counts.to_dict() == {(1, 2): 1}
    assert labels.to_dict()[(5, 3)] == 1


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

