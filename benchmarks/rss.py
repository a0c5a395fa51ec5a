"""This process's memory as the benchmarks report it: resident now, and the peak so far."""
from __future__ import annotations

import os
import resource


def resident_mb() -> float:
    """Resident memory now (``/proc/self/statm``; Linux)."""
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mb() -> float:
    """The process's peak resident memory so far (``ru_maxrss``), to a tenth of a MB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)
