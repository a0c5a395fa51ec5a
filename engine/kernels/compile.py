"""``python -m ddlab.engine.kernels.compile``: compile every kernel into numba's disk cache.

The engine runs this in a background process the first time a program needs the kernels and
their cache is cold (see :mod:`ddlab.engine.kernels`); running it by hand (say, in a Docker
build or after ``pip install``) makes the first session start with the kernels loaded.
Prints the seconds it took and where the cache is."""
from __future__ import annotations

import sys
from time import perf_counter, process_time

from . import available, cache_dir, warm_up


def main() -> int:
    if not available():
        print("numba is not usable here: nothing to compile", file=sys.stderr)
        return 1
    start, cpu = perf_counter(), process_time()
    warm_up()
    print(f"compiled the ddlab kernels in {perf_counter() - start:.1f} s "
          f"({process_time() - cpu:.1f} s CPU) into {cache_dir()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
