"""Every runnable example in the kernel extension's docstrings runs (and passes)."""
from __future__ import annotations

import doctest

import pytest

from ddlab.kernel_ext import declarations, evaluate, messages, session, summaries
from ddlab.kernel_ext.commands import stepping
from ddlab.kernel_ext.display import lattice, tables


@pytest.mark.parametrize("module", [messages, declarations, evaluate, session, summaries,
                                    stepping, tables, lattice], ids=lambda m: m.__name__)
def test_examples(module):
    result = doctest.testmod(module)
    assert result.attempted >= 1 and result.failed == 0
