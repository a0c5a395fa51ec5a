"""Join (``operators/join.py``): the bilinear join with tuple and function selectors against
the from-scratch oracle after every epoch, at every loop depth."""
from __future__ import annotations

import pytest
from hypothesis import given

from .record_programs import EPOCHS, check_operator


#: the operators of ``operators/join.py``, each against its oracle (``record_programs.UNARY``)
NAMES = ["self_join", "join_select_tuple", "join_select_fn"]


@pytest.mark.parametrize("depth", [0, 1, 2], ids=["top", "loop", "nested"])
@pytest.mark.parametrize("name", sorted(NAMES))
@given(epochs=EPOCHS)
def test_operator_matches_oracle(name, depth, epochs):
    check_operator(name, depth, epochs)
