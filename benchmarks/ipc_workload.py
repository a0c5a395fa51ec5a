"""``python -m benchmarks ipc``: what moving work between worker processes costs here.

Data-parallel workers (issue 31) as threads of one process run in parallel only where the
GIL is released (measured 1.16x at best: ``NOTES.md``, 2026-11-27), so workers would be
processes.  Their costs are these: a progress announcement and its answer (a pipe round
trip of a small message), moving a batch of rows to the worker that owns their keys (pickled
bytes through a pipe, or written into shared memory with only its name sent), and starting a
worker by forking a process that holds a loaded dataflow (copy on write).  A window step of
``window-scc`` makes about 33 sweeps (rounds of progress), so its coordination is about 33
round trips; with these figures the choice can be checked against a step's time.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import time

import numpy as np

#: batch sizes (rows of four int64 fields) moved between two processes
ROWS = (1_000, 100_000, 1_000_000)


def _echo(conn) -> None:
    """Answer every message with itself (a progress announcement's round trip)."""
    while True:
        msg = conn.recv()
        if msg is None:
            return
        conn.send(msg)


def _sink(conn) -> None:
    """Receive batches as bytes, or as the name of a shared-memory block; answer with their
    last value (so every byte was there to read)."""
    from multiprocessing import shared_memory

    while True:
        msg = conn.recv_bytes()
        if msg == b"stop":
            return
        if msg.startswith(b"shm:"):
            name, rows = msg[4:].decode().split(",")
            block = shared_memory.SharedMemory(name=name)
            last = int(np.ndarray((4, int(rows)), dtype=np.int64, buffer=block.buf)[-1, -1])
            block.close()
        else:
            last = int(np.frombuffer(msg, dtype=np.int64)[-1])
        conn.send_bytes(str(last).encode())


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return round(float(np.median(times)) * 1000, 3)


def _move_batches(conn, rows: int, repeat: int) -> tuple:
    """Median milliseconds to move a batch of ``rows`` rows to the sink and hear back:
    pickled bytes through the pipe, and through shared memory."""
    from multiprocessing import shared_memory

    batch = np.arange(rows * 4, dtype=np.int64).reshape(4, rows)
    last = int(batch[-1, -1])

    def by_pipe():
        conn.send_bytes(batch.tobytes())
        assert int(conn.recv_bytes()) == last

    block = shared_memory.SharedMemory(create=True, size=batch.nbytes)
    def by_shared_memory():
        view = np.ndarray(batch.shape, dtype=batch.dtype, buffer=block.buf)
        view[:] = batch
        del view  # (the block closes only once no array looks into it)
        conn.send_bytes(f"shm:{block.name},{rows}".encode())
        assert int(conn.recv_bytes()) == last

    try:
        times = _median_ms(by_pipe, repeat), _median_ms(by_shared_memory, repeat)
    finally:
        block.close()
        block.unlink()
    return times


def run(args) -> dict:
    out: dict = {"workload": "ipc", "dataset": "-", "cores": os.cpu_count()}
    if "fork" not in mp.get_all_start_methods():
        out["note"] = "no fork on this platform: workers would start with spawn"
        return out
    ctx = mp.get_context("fork")
    here, there = ctx.Pipe()
    echo = ctx.Process(target=_echo, args=(there,))
    echo.start()
    message = {(3, (7, 2)): -1, (4, (7, 3)): 1}  # a small batch of count changes
    lat = []
    for i in range(2_200):
        start = time.perf_counter()
        here.send(message)
        here.recv()
        if i >= 200:
            lat.append(time.perf_counter() - start)
    here.send(None)
    echo.join()
    out["round_trip_median_us"] = round(float(np.median(lat)) * 1e6, 1)
    out["round_trip_p99_us"] = round(float(np.percentile(lat, 99)) * 1e6, 1)

    here, there = ctx.Pipe()
    sink = ctx.Process(target=_sink, args=(there,))
    sink.start()
    for rows in ROWS:
        repeat = 5 if rows >= 1_000_000 else 30
        pipe_ms, shared_ms = _move_batches(here, rows, repeat)
        out[f"pipe_{rows}_rows_ms"] = pipe_ms
        out[f"shared_memory_{rows}_rows_ms"] = shared_ms
    here.send_bytes(b"stop")
    sink.join()

    import ddlab
    from ddlab.engine import algorithms

    rng = np.random.default_rng(0)
    src, dst = rng.integers(0, 100_000, 500_000), rng.integers(0, 100_000, 500_000)
    flow = ddlab.Dataflow("ipc")
    edges = flow.input("edges", columns=["src", "dst"])
    algorithms.connected_components(edges).view()
    edges.insert(list(zip(src.tolist(), dst.tolist())))
    flow.step()

    def fork():
        child = ctx.Process(target=os._exit, args=(0,))
        child.start()
        child.join()

    out["fork_with_loaded_cc_500k_ms"] = _median_ms(fork, 5)
    out["load_average"] = round(os.getloadavg()[0], 2)
    return out
