"""Benchmarks: ``python -m benchmarks WORKLOAD [--dataset NAME] [--json]``."""
