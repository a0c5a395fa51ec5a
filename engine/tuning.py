"""Every size threshold of the engine, named once, each with the measurement that set it.

Why one module: the engine computes everything on a general path (numpy over whole columns)
and has specialised paths that win only in some range of sizes: plain Python for a handful of
rows (a numpy call costs 1-2 us before it touches any data), and large-batch paths that save
memory traffic.  Each threshold below chooses between them; none changes a result, and every
specialised path is tested equal to the general one.

The code reads the values from this module when it runs (``tuning.SMALL_QUERY``, never a copy
bound to another name), so a test's switch changes a threshold everywhere at once.  Tests set
them only through ``ddlab.engine.testing.tuned`` (process-wide, under a lock; not part of
ddlab's API):

- ``tuned("tiny")``: every threshold at a few rows (:data:`TINY`), so small test inputs take
  both sides of each one (the large paths from a handful of rows, the Python paths declining
  anything longer than a few rows, recent rows spilled every three);
- ``tuned("general")``: :data:`FAST_PATHS` off, so every specialised path yields to the
  general one (``DDLAB_FAST_PATHS=0`` does the same for a whole process);
- ``tuned("numpy")``: :data:`KERNELS` off, so the specialised numpy and Python paths run
  instead of the compiled kernels (``DDLAB_KERNELS=0`` for a whole process);
- ``tuned(NAME=value, ...)``: single values, alone or on top of a preset.

The figures quoted are from ``benchmarks/NOTES.md``, ``benchmarks/RESULTS.md`` and the commit
that introduced each path (2026-11-22/23, the project's 2-core machine, CPU time, A/B runs
interleaved in one session).  The compiled per-key kernels of issue 22 add theirs here.
"""
from __future__ import annotations

import os

#: The specialised paths on (True) or only the general ones (False; ``DDLAB_FAST_PATHS=0``).
FAST_PATHS: bool = os.environ.get("DDLAB_FAST_PATHS", "1") != "0"
#: The compiled per-key kernels (``engine/kernels``) on, when numba is usable and
#: :data:`FAST_PATHS` is on (``DDLAB_KERNELS=0`` turns them off; the numpy and Python paths
#: then run, the reference the kernels are tested against).
KERNELS: bool = os.environ.get("DDLAB_KERNELS", "1").strip().lower() not in ("0", "off", "false",
                                                                             "no")

# -- consolidation (batch.py) ------------------------------------------------------------------
#: Consolidations of at most this many integer rows sum their diffs in a Python dict.  A
#: one-edge CollegeMsg CC update spent most of its time in the fixed cost of ~80 numpy calls
#: of 1-2 us on a few dozen rows (commit 57b8b4b, "small-delta paths"); 32 rows cost less in
#: a dict than one sort plus a segmented sum.
SMALL_CONSOLIDATION = 32
#: Below this many rows a multi-column sort uses ``lexsort`` directly instead of first packing
#: integer columns into one int64: finding the columns' ranges costs more than it saves
#: (commit 2e39e9f, "lexsort below 512 rows").
PACK_KEYS_ROWS = 512
#: From this many rows a consolidation of int64 rows packs each row and its diff into one
#: int64 and sorts values instead of an index permutation: CC random-400k-3.4m from scratch
#: 12.0-14.6 s -> 8.1-8.7 s CPU, peak 2,972 -> 2,758 MB (commit 1fc9731).
PACKED_ROWS = 1024
#: Large arrays are scanned in chunks of this many rows through scratch buffers that stay in
#: cache and replace array-sized temporaries: CC 3.4M from scratch 7.9-10.4 -> 7.7-7.8 s CPU,
#: peak 1,912 -> 1,884 MB (commit 75702e6).
CHUNK_ROWS = 1 << 20
#: A reduce's numpy path evaluates at most this many keys at once (the chunks' outputs are
#: inserted and emitted one after another): a from-scratch run's last reduces read every
#: key's history, and their temporaries were the run's peak: CC random-400k-3.4m from
#: scratch, peak 1,895 -> 1,775 MB (traced allocations' peak 1,621 -> 1,416 MB), time alike
#: (16.9 -> 15.2 s; NOTES 2026-11-24, later).
REDUCE_CHUNK_KEYS = 1 << 15

# -- traces (trace/) ---------------------------------------------------------------------------
#: Inserts of at most this many rows wait in the trace's recent rows (Python, no numpy) ...
#: (7-8 inserts per CollegeMsg CC update had cost ~35 us each as packed, merged batches:
#: update 1.25 -> 1.00 ms CPU, commit 8d53889; NOTES "Recent rows").
SMALL_INSERT = 64
#: ... which become one sorted spine batch once they hold this many rows (512 at first; 128
#: since the reduce's Python path reads them key by key, commit 8e9b119).
RECENT_CAPACITY = 128
#: Lookups of at most this many keys read the recent rows key by key; larger ones sort them
#: into one batch, cached until the next insert (commit 8e9b119).  NOTES suspects these
#: per-key reads in window-scc's 3-4% slowdown (unprofiled).
RECENT_QUERY = 128
#: Lookups of at most this many keys search each spine batch once for both ends of every
#: key's run and expand the ranges in Python (commit 57b8b4b, with SMALL_CONSOLIDATION).
SMALL_QUERY = 16
#: ``Trace.histories`` keeps at most this many spine rows cached in Python between spine
#: changes (a key re-read at its later interesting times of one update is a dict lookup).
CACHE_ROWS = 65536
#: Merges of at least this many rows within one epoch scatter every part's rows to their
#: merged positions instead of gathering from a concatenated copy: half the memory traffic,
#: CC 3.4M from scratch 8.3-11.5 -> 7.9-8.1 s CPU, peak 2,245 -> 2,139 MB (commit 9cd2cc8).
LARGE_MERGE_ROWS = 4096
#: Gathers of at least this many rows from several spine batches copy field by field into
#: the result instead of concatenating per-batch copies: the packed layout had added one full
#: temporary copy to the largest gathers, +240 MB peak on 3.4M edges (commit b58b192; the
#: same 4,096-row bound as the merges, not measured separately).
LARGE_GATHER_ROWS = 4096
#: A merge of at least this many rows waits until the newer batch is twice the older or the
#: spine holds more than :data:`MAX_SPINE_BATCHES` batches: with the geometric rule a loop's
#: input doubling from one time to the next rewrote its whole 15M-row trace every other time
#: (45.5M rows merged for a 15.4M-row trace; 30.5M with 8M/4).  CC random-400k-3.4m:
#: update median 2.30-2.33 ms with 8M/4 against 2.42-2.50 ms with 4M/8 (commit fdbc260).
LARGE_SPINE_ROWS = 8_000_000
#: Spine batches of at least this many rows whose fields all fit in 32 bits (node ids,
#: labels, epochs, iterations, small priorities, diffs; no float field) are stored as int32
#: (:func:`~ddlab.engine.trace.layout.narrowed`): half the memory of the large batches a
#: from-scratch load leaves (CC random-400k-3.4m: NOTES 2026-11-24, later).  Everything
#: read out of the trace is int64 again; the kernels scan either width.
NARROW_ROWS = 65536
#: See :data:`LARGE_SPINE_ROWS`: each extra batch of a large trace costs every small lookup
#: one more search (4M/8 kept 6 batches of the 15M-row loop trace, 8M/4 keeps 3).
MAX_SPINE_BATCHES = 4
#: Spine batches of at least this many rows with at most a quarter as many distinct keys get
#: an index of their distinct keys for large lookups: CC 3.4M from scratch 6.7-7.6 ->
#: 5.9-6.6 s CPU in warm repeats (commit 0be74a0).
KEY_INDEX_ROWS = 65536

# -- join (operators/join.py) ------------------------------------------------------------------
#: The join's Python path takes at most this many changed records per side ...  (SCC
#: random-1m-200k update 0.99 -> 0.83 ms, the join having been a third of it; commit 408682f)
SMALL_DELTA = 16
#: ... whose keys' histories on the other side hold at most this many rows ...
SMALL_MATCHES = 256
#: ... making at most this many output pairs: beyond 48, numpy's per-row cost is lower
#: (measured on CollegeMsg's hub nodes, commit 85a6280).
SMALL_PAIRS = 48
#: Deltas of more than this many rows joined with a column selection build only the selected
#: columns (CC 3.4M from scratch 8.3-9.6 -> 5.9-7.2 s CPU, commit 7843906); smaller ones keep
#: the plain path (the bound is SMALL_CONSOLIDATION's size, not measured separately).
JOIN_PRESELECT_ROWS = 32
#: When both sides changed and the right delta has more than this many rows, the dA x dB
#: correction indexes the smaller delta: a loop's first time meets the whole entered graph
#: (6.8M edges) with a handful of seeds (~0.3 s of packing less, commit 5a3e6ec).
JOIN_SMALLER_DELTA_ROWS = 32
#: A join's output of at most this many rows at several times is grouped by time in Python
#: (``np.unique`` over the time rows costs ~30 us; commit 57b8b4b).
JOIN_GROUP_TIMES_ROWS = 32

# -- reduce (operators/reduce.py) --------------------------------------------------------------
#: The reduce's Python path takes at most this many keys at one time ...  (SCC random-1m-200k
#: update 1.70 -> 0.99 ms, CollegeMsg CC 1.00 -> 0.93 ms; commit 8e9b119)
SMALL_KEYS = 16
#: ... whose histories (input and output) hold at most this many rows in all (on CollegeMsg
#: 388 of 1,526 runs of the loop's min declined for hub nodes' longer histories; NOTES).
SMALL_HISTORY = 256
#: At most this many future ``(key, time)`` pairs are grouped by time in Python instead of
#: one sort by (time, key) (commit 57b8b4b, with the join's grouping).
REDUCE_GROUP_TIMES_ROWS = 32
#: From this many keys a reduce accumulates its inputs straight from the trace batches
#: (packed, filtered by time batch by batch): CC 3.4M from scratch 9.1-10.9 -> 6.8-9.0 s
#: CPU, peak 2,511 -> 2,240 MB (commits 7978c83, 4a78477).
LARGE_KEYS = 1024

# -- compiled kernels (kernels/) ----------------------------------------------------------------
#: A reduce's kernel run evaluates at most this many keys at once; a run over more keys
#: (a loop's iterations from scratch) goes chunk by chunk, so the kernels' row buffers hold
#: one chunk's histories.  Before chunking, runs over more keys took the numpy path (in one
#: piece, unbounded the kernels' buffers grew CC on random-400k-3.4m to 3.0 GB); chunked, CC
#: 3.4M from scratch 15.2 -> 14.3 s (the loop's min 6.3 -> 4.1 s), peak 1,775 -> 1,742 MB
#: (16,384 keys: 14.2 s, 1,783 MB; 65,536: 14.9 s, 1,777 MB).
KERNEL_REDUCE_KEYS = 4096
#: A join run whose changes hold at most this many rows (both sides) takes the compiled
#: kernels; larger ones (a loop's first iterations from scratch) take the numpy path, which
#: builds only the selected columns of millions of pairs (not measured separately: set at
#: four times the reduce's bound of the time, 1,024 keys, a join's rows being narrower).
KERNEL_JOIN_ROWS = 4096
#: Consolidations of fewer rows than this take the compiled kernel (one call instead of a
#: dozen numpy calls or a Python dict); from here on the numpy path's packed sort is as
#: cheap (:data:`PACKED_ROWS`: it sorts values, the kernel merge-sorts indices).
KERNEL_CONSOLIDATION = 1024
#: Packed consolidations (:func:`~ddlab.engine.batch.sum_packed`) of rows in no particular
#: order sort from this many rows on with the kernels' radix sort instead of numpy's sort
#: (measured against it: 1,000 rows 0.8-1.1x its time, 10,000 rows 0.23-0.36x, 3.4M rows
#: 0.30-0.45x for 40-60 bits a row).
RADIX_SORT_ROWS = 4096
#: The kernels' scratch buffers that grew beyond this many rows (a large run) are released
#: afterwards, so a from-scratch run does not keep hundreds of megabytes alive.
KERNEL_KEEP_ROWS = 65536
#: An operator run, or a step, that took in or sent at least this many rows hands the free
#: pages of the heap back to the system when it ends (:mod:`~ddlab.engine.memory`).  3.4M-edge
#: CC from scratch (peak RSS 1,176-1,197 MB without): 1M rows: 39 calls, peak 1,071-1,079 MB,
#: 60,000 more page faults (the pages given back are faulted in again when the heap reuses
#: them: about 0.2 s of system time, 2-3% of the step); 2M: 29 calls, 1,071 MB, 45,000;
#: 3M: 17 calls, 1,078-1,094 MB, 20,000; 8M: only the step's own call, no lower peak.
RELEASE_AFTER_ROWS = 2_000_000

# -- algorithms (algorithms/graphs.py) ---------------------------------------------------------
#: ``connected_components(prioritized=None)`` takes the prioritized fixed point when the first
#: load has at least this many edges: on CollegeMsg (20k edges) and Travian (155k) plain
#: propagation is 2-3x cheaper per update and as fast from scratch; from 500k edges plain from
#: scratch costs 2.5-4x the time and 3x the memory (random 100k/500k: 15.9 s, 1.6 GB against
#: 6.4 s, 0.6 GB; 3.4M edges: 67 s, 9 GB against 16 s, 2.7 GB) and its updates are no cheaper.
CC_PRIORITIZED_FROM_EDGES = 250_000
#: The same for SCC's trim loops: plain on a notebook's sliding windows, prioritized from 50k
#: edges, where plain propagation from scratch becomes the larger cost (SCC on 2M edges took
#: 331 s plain against 29 s prioritized).
SCC_PRIORITIZED_FROM_EDGES = 50_000

#: Every threshold's name (the integers above); :data:`FAST_PATHS` and :data:`KERNELS` are the
#: switches.
THRESHOLDS = tuple(name for name, value in list(globals().items())
                   if name.isupper() and type(value) is int)
#: The measured values above, as this module was loaded.
DEFAULTS = {name: globals()[name] for name in ("FAST_PATHS", "KERNELS") + THRESHOLDS}

#: Every threshold at a few rows: small inputs take both sides of each (a test asserts that
#: no threshold is missing here).
TINY = {
    "SMALL_CONSOLIDATION": 3, "PACK_KEYS_ROWS": 2, "PACKED_ROWS": 4, "CHUNK_ROWS": 5,
    "REDUCE_CHUNK_KEYS": 4,
    "SMALL_INSERT": 2, "RECENT_CAPACITY": 3, "RECENT_QUERY": 2, "SMALL_QUERY": 2,
    "CACHE_ROWS": 4, "LARGE_MERGE_ROWS": 4, "LARGE_GATHER_ROWS": 4, "LARGE_SPINE_ROWS": 6,
    "MAX_SPINE_BATCHES": 2, "KEY_INDEX_ROWS": 4, "NARROW_ROWS": 5,
    "SMALL_DELTA": 2, "SMALL_MATCHES": 3, "SMALL_PAIRS": 3, "JOIN_PRESELECT_ROWS": 2,
    "JOIN_SMALLER_DELTA_ROWS": 2, "JOIN_GROUP_TIMES_ROWS": 2,
    "SMALL_KEYS": 2, "SMALL_HISTORY": 3, "REDUCE_GROUP_TIMES_ROWS": 2, "LARGE_KEYS": 3,
    "KERNEL_REDUCE_KEYS": 2, "KERNEL_JOIN_ROWS": 2, "KERNEL_CONSOLIDATION": 3,
    "KERNEL_KEEP_ROWS": 4, "RADIX_SORT_ROWS": 5, "RELEASE_AFTER_ROWS": 40,
    "CC_PRIORITIZED_FROM_EDGES": 4, "SCC_PRIORITIZED_FROM_EDGES": 4,
}
#: Only the general paths.
GENERAL = {"FAST_PATHS": False}
#: The specialised numpy and Python paths, without the compiled kernels.
NUMPY = {"KERNELS": False}
PRESETS = {"tiny": TINY, "general": GENERAL, "numpy": NUMPY, "default": DEFAULTS}
