"""Columns (``engine/columns.py``): strings and floats are encoded and decoded losslessly, and
ordered by value where an operator compares them."""
from __future__ import annotations

import ddlab


def test_string_and_float_fields_round_trip():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    mins = x.min().view()
    sums = x.project(0, 2).sum().view()
    x.insert([("b", "zeta", 1.5), ("b", "alpha", 2.0), ("a", "mid", -1.0)])
    flow.step()
    assert mins.to_dict() == {("b", "alpha", 2.0): 1, ("a", "mid", -1.0): 1}
    assert sums.to_dict() == {("b", 3.5): 1, ("a", -1.0): 1}

