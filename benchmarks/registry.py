"""Workload name -> ``module:function`` that runs it.

A workload function takes the parsed arguments (``args.dataset`` and friends) and returns a
flat dict of figures (at least ``workload`` and ``dataset``); the runner adds ``peak_rss_mb``
and prints JSON or a markdown table.  Modules are imported only when their workload runs, so a
missing optional dependency (pyspark, scipy) only affects the workloads that need it.
"""
WORKLOADS = {
    "cc": "benchmarks.graph_workloads:run_cc",
    "scc": "benchmarks.graph_workloads:run_scc",
    "sssp": "benchmarks.graph_workloads:run_sssp",
    "window-scc": "benchmarks.window_workloads:run_window_scc",
    "figure1": "benchmarks.window_workloads:run_figure1",
    "spark-windows": "benchmarks.spark_windows:run",
    "explore": "benchmarks.explore_workload:run",
    "demo-start": "benchmarks.explore_workload:run_start",
    "soak": "benchmarks.soak:run",
    "rules": "benchmarks.rules_workload:run",
    "sql": "benchmarks.sql_workload:run",
    "why": "benchmarks.why_workload:run",
    "kernels": "benchmarks.kernels_workload:run",
    "ipc": "benchmarks.ipc_workload:run",
    "scaling": "benchmarks.scaling_workload:run",
}
