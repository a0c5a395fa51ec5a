"""The benchmarks folder is not part of the installed package: tests load its modules from
the checkout by path (``load_benchmark("profile")``)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_benchmark(name: str):
    """``benchmarks/NAME.py`` of the checkout, as a module of its own."""
    spec = importlib.util.spec_from_file_location(f"ddlab_bench_{name}",
                                                  ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
