"""Every shipped module's docstring examples run as written (collected automatically: a new
module's examples run without editing this file).  Engine examples may use ``Dataflow``
unimported, as the API reference shows them.  A module behind a missing extra skips, and fails
under CI (``DDLAB_CI=1``, set by ``.ci/run``, where every extra is installed)."""
from __future__ import annotations

import doctest
import importlib

import pytest

import ddlab
from ci import skip_unless_ci
from shipped import shipped_modules

#: modules whose examples document an API: at least this many must run (a module losing its
#: examples fails here instead of passing with none)
MIN_EXAMPLES = {
    "ddlab.engine.collection": 10, "ddlab.engine.dataflow": 10, "ddlab.engine.input": 10,
    "ddlab.engine.view": 10, "ddlab.engine.loops": 10, "ddlab.engine.algorithms.graphs": 5,
    "ddlab.kernel_ext.messages": 1, "ddlab.kernel_ext.declarations": 1,
    "ddlab.kernel_ext.evaluate": 1, "ddlab.kernel_ext.session": 1,
    "ddlab.kernel_ext.summaries": 1, "ddlab.kernel_ext.commands.stepping": 1,
    "ddlab.kernel_ext.display.tables": 1, "ddlab.kernel_ext.display.lattice": 1,
    "ddlab.engine.budget": 1, "ddlab.engine.checkpoint": 1, "ddlab.engine.testing": 1,
    "ddlab.sources.catalog": 1, "ddlab.sources.loaders": 1,
}


@pytest.mark.parametrize("name", shipped_modules())
def test_examples_run(name):
    try:
        module = importlib.import_module(name)
    except ImportError as err:  # an optional extra's module; test_imports checks the message
        skip_unless_ci(f"{name} needs an extra: {err}")
    result = doctest.testmod(module, extraglobs={"Dataflow": ddlab.Dataflow},
                             optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} example(s) of {name} failed (output above)"
    assert result.attempted >= MIN_EXAMPLES.get(name, 0), (name, result.attempted)


def test_every_module_with_examples_is_collected():
    assert set(MIN_EXAMPLES) <= set(shipped_modules())
