"""Linear operators (``operators/linear.py``: map, flat_map, filter, their column-wise forms,
project, concat, negate, consolidate, inspect) against the from-scratch oracle after every
epoch, at the top level, in a loop and in a doubly nested loop."""
from __future__ import annotations

import pytest
from hypothesis import given

from .record_programs import EPOCHS, check_operator


#: the operators of ``operators/linear.py``, each against its oracle (``record_programs.UNARY``)
NAMES = ["map", "map_to_scalar", "flat_map", "filter", "map_columns", "filter_columns",
         "project", "negate", "concat", "consolidate", "inspect"]


@pytest.mark.parametrize("depth", [0, 1, 2], ids=["top", "loop", "nested"])
@pytest.mark.parametrize("name", sorted(NAMES))
@given(epochs=EPOCHS)
def test_operator_matches_oracle(name, depth, epochs):
    check_operator(name, depth, epochs)
