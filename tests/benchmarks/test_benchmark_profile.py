"""``python -m benchmarks WORKLOAD --profile``: every engine function lands in the layer it
belongs to.  The benchmarks folder is not part of the installed package, so its module is
loaded from the checkout by path."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from benchmark_modules import ROOT, load_benchmark

ENGINE = ROOT / "engine"


@pytest.fixture(scope="module")
def profile():
    return load_benchmark("profile")


def _functions(path: Path) -> list[str]:
    return [node.name for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_every_trace_function_has_a_layer(profile):
    """No function of the trace package falls through to a default layer by accident."""
    for path in sorted((ENGINE / "trace").glob("*.py")):
        table = profile._LAYERS.get(f"trace/{path.name}")
        if path.name == "__init__.py":
            continue
        assert table is not None, path.name
        missing = [f for f in _functions(path) if f not in table and "*" not in table]
        assert not missing, (path.name, missing)


@pytest.mark.parametrize("where, function, layer", [
    # the large-path lookups (they used to count as trace maintenance)
    ("trace/lookup.py", "key_rows", "trace lookups"),
    ("trace/lookup.py", "key_ranges", "trace lookups"),
    ("trace/lookup.py", "picks_until", "trace lookups"),
    ("trace/lookup.py", "gather_fields", "trace lookups"),
    ("trace/lookup.py", "accumulate", "trace lookups"),
    ("trace/lookup.py", "collect", "trace lookups"),
    ("trace/spine.py", "accumulate_until", "trace lookups"),
    ("trace/spine.py", "gather", "trace lookups"),
    ("trace/recent.py", "histories", "trace lookups"),
    ("trace/spine.py", "insert", "trace maintenance"),
    ("trace/spine.py", "_merge_by_key", "trace maintenance"),
    ("trace/layout.py", "take_columns", None),           # a helper: its caller's layer
    ("batch.py", "consolidate", "consolidation"),
    ("runtime/protocol.py", "emit", "scheduling"),
    ("runtime/progress/tracker.py", "apply", "scheduling"),
    ("operators/join.py", "_match", "operator logic"),
    ("algorithms/graphs.py", "priority", "user code"),
])
def test_layer_of_engine_functions(profile, where, function, layer):
    path = str(ENGINE / where)
    assert (ENGINE / where).exists()
    assert function in _functions(ENGINE / where)
    assert profile.layer_of(path, function) == layer
