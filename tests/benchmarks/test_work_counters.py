"""The benchmarks' machine-independent counters of interpreter work (``benchmarks/work.py``):
``python_calls`` counts what a function's updates really ran, checked against loops whose
work is known from their length."""
from __future__ import annotations

import dis

import pytest
from benchmark_modules import load_benchmark


@pytest.fixture(scope="module")
def work():
    return load_benchmark("work")


def _leaf(x):
    return x + 1


def _loop(k):
    def fn():
        total = 0
        for _ in range(k):
            total = _leaf(total)
        return total
    return fn


def test_calls_and_bytecodes_grow_with_the_work_done(work):
    """Ten more calls of a leaf function add ten calls, and the same number of bytecode
    instructions every ten; per update is the total over the updates made."""
    counts = [work.python_calls(_loop(k), 1) for k in (10, 20, 30)]
    calls = [c["work_python_calls_per_update"] for c in counts]
    ops = [c["work_python_bytecodes_per_update"] for c in counts]
    assert calls[1] - calls[0] == calls[2] - calls[1] == 10
    assert ops[1] - ops[0] == ops[2] - ops[1] > 0
    # each iteration runs at least the leaf's own instructions
    leaf = len(list(dis.get_instructions(_leaf)))
    assert ops[1] - ops[0] >= 10 * leaf
    halves = work.python_calls(_loop(20), 2)
    assert halves["work_python_bytecodes_per_update"] == pytest.approx(ops[1] / 2)


def test_a_trace_function_already_set_is_put_back(work):
    """(The counting must not take over a debugger's or coverage's trace function.)"""
    import sys

    def mine(frame, event, arg):
        return None

    before = sys.gettrace()
    sys.settrace(mine)
    try:
        work.python_calls(_loop(3), 1)
        assert sys.gettrace() is mine
    finally:
        sys.settrace(before)
