"""The fluent API (``engine/collection.py``): every public method shows a runnable example
(the examples themselves run in ``tests/test_doctests.py``)."""
from __future__ import annotations

import ddlab


def test_every_public_collection_method_has_an_example():
    public = [n for n, f in vars(ddlab.Collection).items()
              if callable(f) and not n.startswith("_") and n != "group_by"]
    missing = [n for n in public if ">>>" not in (getattr(ddlab.Collection, n).__doc__ or "")]
    assert not missing, f"Collection methods without an example: {missing}"

