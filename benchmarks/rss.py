"""This process's memory as the benchmarks report it: resident now, and the peak so far."""
from __future__ import annotations

import os
import resource


def resident_mb(live: bool = False) -> float:
    """Resident memory now (``/proc/self/statm``; Linux).  ``live``: the heap's free pages
    given back first, so what is counted is what the process holds, not what earlier
    temporaries left resident (which depends on the order of allocations: the 3.4M-edge
    frame built after the kernels' load left 65 MB more of it in one build than another)."""
    if live:
        from ddlab.engine.memory import release_free_memory

        release_free_memory()
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mb() -> float:
    """The process's peak resident memory so far (``ru_maxrss``), to a tenth of a MB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)
