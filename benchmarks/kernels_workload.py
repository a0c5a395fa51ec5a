"""``kernels``: what the compiled kernels cost before they pay: compiling them from nothing
(a fresh process with an empty numba cache: what the first session on a machine pays, in a
background process, see ``ddlab.engine.kernels``), and loading them from the disk cache in a
fresh process (what every later session pays the first time an operator needs them).
Each is measured in its own fresh interpreter, ``--repeat`` times (median reported)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

_PROBE = """
import json, time
t0, c0 = time.perf_counter(), time.process_time()
import numba, numpy
from ddlab.engine import kernels
assert kernels.available()
t1, c1 = time.perf_counter(), time.process_time()
kernels.warm_up()
t2, c2 = time.perf_counter(), time.process_time()
print(json.dumps({"import_s": t1 - t0, "warm_up_s": t2 - t1, "warm_up_cpu_s": c2 - c1,
                  "numba": numba.__version__, "numpy": numpy.__version__}))
"""


def _probe(cache: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, DDLAB_KERNELS="sync")
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          env=env, timeout=1800)
    if done.returncode:
        raise RuntimeError(f"the kernel probe failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(args):
    repeat = max(1, getattr(args, "repeat", None) or 3)
    cold, warm = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="ddlab-numba-") as cache:
            cold.append(_probe(cache))   # empty cache: numba compiles every kernel
            warm.append(_probe(cache))   # the same cache, a fresh process: loads them
    med = lambda rows, key: round(float(np.median([r[key] for r in rows])), 3)  # noqa: E731
    return {
        "workload": "kernels", "dataset": None, "repeat": repeat,
        "numba": cold[0]["numba"], "numpy": cold[0]["numpy"],
        "kernels_compile_s": med(cold, "warm_up_s"),
        "kernels_compile_cpu_s": med(cold, "warm_up_cpu_s"),
        "kernels_first_use_s": med(warm, "warm_up_s"),
        "kernels_first_use_cpu_s": med(warm, "warm_up_cpu_s"),
        "import_numba_s": med(warm, "import_s"),
        "load_average": round(os.getloadavg()[0], 2),
    }
