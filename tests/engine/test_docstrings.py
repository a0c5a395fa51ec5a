"""Every public operator's docstring example runs as written (Collection, Dataflow, inputs,
views, loops), like the Rust crate's examples."""
from __future__ import annotations

import doctest

import pytest

import ddlab
from ddlab.engine import collection, dataflow, input as input_module, loops, view


@pytest.mark.parametrize("module", [collection, dataflow, input_module, view, loops],
                         ids=lambda m: m.__name__)
def test_examples(module):
    result = doctest.testmod(module, extraglobs={"Dataflow": ddlab.Dataflow})
    assert result.failed == 0 and result.attempted >= 10


def test_every_public_collection_method_has_an_example():
    public = [n for n, f in vars(ddlab.Collection).items()
              if callable(f) and not n.startswith("_") and n != "group_by"]
    missing = [n for n in public if ">>>" not in (getattr(ddlab.Collection, n).__doc__ or "")]
    assert not missing, f"Collection methods without an example: {missing}"
