"""The workers' faults and lifecycle (issue 49): a worker killed mid-step or mid-exchange, a
child raising outside an epoch, a full ``/dev/shm``, Jupyter's Stop (a process-directed SIGINT
with another thread alive) at every point of a step and between steps, late replies after an
interrupted request, and no process or shared-memory file left after ``close()``, a garbage
collection, the explorer's close or the parent's death.

Each scenario runs in a fresh Python process with a deadline (``subprocess.run(timeout=)``), so
a regression fails instead of hanging the suite; the scenario prints ``OK`` lines, each
checked here.  The oracle for every result is networkx (or the same flow on one worker)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="workers need os.fork; /proc and /dev/shm are Linux's")

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = r'''
import gc, glob, json, multiprocessing, os, signal, subprocess, sys, threading, time
import numpy as np, networkx as nx
import ddlab
from ddlab.algorithms import connected_components
from ddlab.engine.errors import DataflowError

PARENT = os.getpid()
import faulthandler  # (a hang prints where every thread of every process was, and ends it)
faulthandler.register(signal.SIGUSR1, all_threads=True)  # (the forked workers keep it)

def _watchdog():
    time.sleep(float(os.environ["DEADLINE"]))
    print("Timeout (the scenario's deadline)", file=sys.stderr, flush=True)
    for child in multiprocessing.active_children():
        os.kill(child.pid, signal.SIGUSR1)
    time.sleep(1.0)
    faulthandler.dump_traceback(all_threads=True)
    os._exit(3)

threading.Thread(target=_watchdog, daemon=True).start()

def cc_oracle(present):
    g = nx.Graph(list(present))
    out = {}
    for c in nx.connected_components(g):
        low = min(c)
        out.update({(n, low): 1 for n in c})
    return out

def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False

def gone(pids, within=10.0):
    """Whether every one of ``pids`` has ended within ``within`` seconds."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        multiprocessing.active_children()  # (reaps the ended ones)
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False

def worker_pids():
    return [p.pid for p in multiprocessing.active_children() if p.name.startswith("ddlab worker")]

def shm_files():
    """Named shared-memory files of this process or its children."""
    return sorted(glob.glob("/dev/shm/ddlab-*"))

def random_edges(n, nodes, seed):
    rng = np.random.default_rng(seed)
    return sorted({tuple(map(int, e)) for e in rng.integers(0, nodes, size=(n, 2))})
'''


def run_scenario(body: str, timeout: float = 180, env: dict | None = None) -> str:
    """Run ``body`` (after :data:`PRELUDE`) in a new Python process; its output.  A hang is
    a failure (the deadline), and so is a non-zero exit (its stderr is shown)."""
    code = PRELUDE + textwrap.dedent(body)
    environment = {k: v for k, v in os.environ.items() if k != "DDLAB_WORKERS"}
    environment.update(env or {}, DEADLINE=str(max(timeout - 10, 5)))
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout, cwd=ROOT, env=environment,
                              start_new_session=True)
    except subprocess.TimeoutExpired as err:
        out = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        pytest.fail(f"the scenario hung (no end within {timeout} s); its output so far:\n{out}")
    if proc.returncode and "Timeout (" in proc.stderr:
        pytest.fail(f"the scenario hung; where:\n{proc.stderr[-6000:]}")
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr[-4000:]}"
    return proc.stdout


def lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.strip()]


# -- a worker killed ------------------------------------------------------------------------
def test_a_worker_killed_mid_step_is_named_the_epoch_rolled_back_and_the_flow_refused():
    out = run_scenario(r'''
        import tempfile
        where = tempfile.mkdtemp()
        ARM, PIDFILE = os.path.join(where, "arm"), os.path.join(where, "pid")

        def stall(r):
            if os.getpid() != PARENT and os.path.exists(ARM):
                with open(PIDFILE, "w") as f:
                    f.write(str(os.getpid()))
                time.sleep(120)
            return r

        flow = ddlab.Dataflow(workers=2)
        edges = flow.input("edges", columns=["src", "dst"])
        cc = connected_components(edges).view()
        edges.map(stall).view()
        first = [(i, i + 1) for i in range(60)]
        edges.insert(first)
        flow.step()
        pids = worker_pids()
        before = cc.to_dict()
        assert before == cc_oracle(first)
        open(ARM, "w").close()

        def kill_when_stalled():
            while not os.path.exists(PIDFILE):
                time.sleep(0.01)
            time.sleep(0.1)
            os.kill(int(open(PIDFILE).read()), signal.SIGKILL)

        threading.Thread(target=kill_when_stalled, daemon=True).start()
        edges.insert([(i, i + 1) for i in range(100, 160)])
        try:
            flow.step()
        except DataflowError as err:
            text = str(err)
            assert "worker 1" in text and "SIGKILL" in text, text
            notes = " ".join(getattr(err, "__notes__", []))
            assert "rolled back" in notes, notes
            print("OK named")
        assert flow.epoch == 1 and cc.to_dict() == before
        print("OK rolled back")
        try:
            flow.step()
        except DataflowError as err:
            assert "\n" not in str(err) and "build it again" in str(err), str(err)
            print("OK refused")
        assert gone(pids), "a worker outlived its lost team"
        assert shm_files() == [], shm_files()
        print("OK nothing left")
        flow.close()
    ''')
    assert lines(out) == ["OK named", "OK rolled back", "OK refused", "OK nothing left"]


def test_a_worker_killed_mid_exchange_at_any_moment():
    """A load large enough to send megabytes between the workers; worker 1 killed at several
    moments of it: the step says so naming the worker (or, killed after the step, the next
    step does), nothing is half applied, and nothing is left behind."""
    out = run_scenario(r'''
        load = random_edges(150_000, 60_000, seed=1)
        for delay in (0.0, 0.05, 0.15, 0.4, 0.8):
            flow = ddlab.Dataflow(workers=2)
            edges = flow.input("edges", columns=["src", "dst"])
            cc = connected_components(edges).view()
            edges.insert([(0, 1)])
            flow.step()
            pids = worker_pids()
            edges.insert(load)
            threading.Timer(delay, os.kill, (pids[0], signal.SIGKILL)).start()
            outcome = "committed"
            try:
                flow.step()
            except DataflowError as err:
                assert "worker 1 stopped" in str(err), str(err)
                assert flow.epoch == 1 and cc.to_dict() == {(0, 0): 1, (1, 0): 1}
                outcome = "rolled back"
            if outcome == "committed":
                assert cc.to_dict() == cc_oracle(load + [(0, 1)])
                time.sleep(delay + 0.1)
                try:
                    flow.step()
                    raise AssertionError("a step ran with a killed worker")
                except DataflowError as err:
                    assert "worker 1 stopped" in str(err), str(err)
            assert gone(pids) and shm_files() == []
            flow.close()
        print("OK")
    ''', timeout=300)
    assert lines(out) == ["OK"]


# -- an error in a child outside an epoch ---------------------------------------------------
def test_a_child_raising_on_a_shard_read_or_progress_request_leaves_the_flow_working():
    out = run_scenario(r'''
        import tempfile
        import ddlab.engine.workers as workers_pkg
        from ddlab.engine.workers import shards
        ARM = os.path.join(tempfile.mkdtemp(), "arm")
        real_read = shards.read_shard

        def failing_read(*args):
            if os.getpid() != PARENT and os.path.exists(ARM):
                raise RuntimeError("shard read failed on purpose")
            return real_read(*args)

        shards.read_shard = failing_read
        modules = [sys.modules[n] for n in list(sys.modules)
                   if n.startswith("ddlab.engine.workers.")]
        for mod in modules:
            if getattr(mod, "read_shard", None) is real_read:
                mod.read_shard = failing_read
            rows = getattr(mod, "view_rows", None)
            if rows is not None and mod.__name__.rsplit(".", 1)[-1] != "replica":
                def failing_rows(flow, real=rows):
                    if os.getpid() != PARENT and os.path.exists(ARM):
                        raise RuntimeError("progress failed on purpose")
                    return real(flow)
                mod.view_rows = failing_rows

        flow = ddlab.Dataflow(workers=2)
        edges = flow.input("edges", columns=["src", "dst"])
        cc_coll = connected_components(edges)
        cc = cc_coll.view()
        present = random_edges(300, 80, seed=2)
        edges.insert(present)
        flow.step()
        record = sorted(cc.to_dict())[5]
        want = flow.why(cc_coll, record).inputs["edges"].values.tolist()
        open(ARM, "w").close()
        flow._team._whole.clear()  # (read the shards again)
        try:
            flow.why(cc_coll, record)
            raise AssertionError("the child's error did not reach worker 0")
        except RuntimeError as err:
            assert "on purpose" in str(err)
            print("OK read error raised")
        try:
            flow.progress()
            raise AssertionError("the child's error did not reach worker 0")
        except RuntimeError as err:
            assert "on purpose" in str(err)
            print("OK progress error raised")
        os.unlink(ARM)
        more = random_edges(100, 120, seed=3)
        edges.insert(more)
        flow.step()
        assert cc.to_dict() == cc_oracle(set(present) | set(more))
        assert set(flow.progress()["worker"]) == {0, 1}
        print("OK next step right")
        flow.close()
    ''')
    assert lines(out) == ["OK read error raised", "OK progress error raised", "OK next step right"]


# -- shared memory --------------------------------------------------------------------------
def test_a_full_dev_shm_falls_back_to_the_socket_and_never_reads_as_a_lost_worker():
    """Every write to shared memory fails with ENOSPC (as in Docker's 64 MB ``/dev/shm``):
    a load whose messages are megabytes still runs, with the right answer."""
    out = run_scenario(r'''
        import errno
        real_pwrite = os.pwrite

        def full(fd, data, offset):
            raise OSError(errno.ENOSPC, "No space left on device (simulated)")

        os.pwrite = full  # (before the fork: every worker's shared memory is full)
        load = random_edges(120_000, 40_000, seed=4)
        flow = ddlab.Dataflow(workers=2)
        edges = flow.input("edges", columns=["src", "dst"])
        cc = connected_components(edges).view()
        edges.insert(load)
        flow.step()
        assert cc.to_dict() == cc_oracle(load)
        print("OK right")
        from ddlab.engine.workers import transport
        assert transport.counters.fell_back > 0 and transport.counters.shared == 0
        assert "ENOSPC" in transport.counters.last_fallback or "No space" in transport.counters.last_fallback
        print("OK fell back")
        pids = worker_pids()
        flow.close()
        assert gone(pids) and shm_files() == []
        print("OK nothing left")
    ''', timeout=90)
    assert lines(out) == ["OK right", "OK fell back", "OK nothing left"]


def test_messages_of_a_mebibyte_and_more_travel_in_shared_memory():
    out = run_scenario(r'''
        from ddlab.engine.workers import transport
        load = random_edges(120_000, 40_000, seed=5)
        with ddlab.Dataflow(workers=2) as flow:
            edges = flow.input("edges", columns=["src", "dst"])
            cc = connected_components(edges).view()
            edges.insert(load)
            flow.step()
            assert cc.to_dict() == cc_oracle(load)
            assert transport.counters.shared > 0 and transport.counters.fell_back == 0
            pids = worker_pids()
        assert gone(pids) and shm_files() == []
        print("OK")
    ''')
    assert lines(out) == ["OK"]


def test_the_frame_of_a_large_message_reads_back_through_shared_memory_or_the_socket(monkeypatch):
    """The transport alone, in this process: a message of arrays over 1 MiB crosses a socket
    pair through shared memory (the arrays are views of its pages), and, shared memory
    failing, through the socket; either way the receiver reads what was sent."""
    import errno
    import socket

    import numpy as np

    from ddlab.engine.workers import transport

    a, b = socket.socketpair()
    left, right = transport.Channel(a), transport.Channel(b)
    big = np.arange(300_000, dtype=np.int64)
    msg = ("m", [big, big[::-1].copy()], {"small": np.ones(3)})
    before = transport.counters.shared
    left.send(msg, 7)
    rid, got = right.recv()
    assert rid == 7 and transport.counters.shared == before + 1
    assert np.array_equal(got[1][0], big) and np.array_equal(got[1][1], big[::-1])
    assert got[1][0].base is not None  # (a view of the shared pages, not a copy)

    def full(fd, data, offset):
        raise OSError(errno.ENOSPC, "full")

    monkeypatch.setattr(os, "pwrite", full)
    fell = transport.counters.fell_back
    left.send(msg, 8)  # (4.8 MB: more than the socket holds; the writer thread sends the rest)
    rid, got = right.recv()
    assert rid == 8 and transport.counters.fell_back == fell + 1
    assert np.array_equal(got[1][1], big[::-1]) and np.array_equal(got[2]["small"], np.ones(3))
    left.close()
    with pytest.raises(EOFError):
        right.recv()
    right.close()


# -- Jupyter's Stop -------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.xfail(strict=False, reason=(
    "found, not fixed (issue 49): after two or three interrupted and re-run steps, a later "
    "step can leave worker 1 running its loop without end (its join, in numpy's unique) "
    "while worker 0 waits; no frame is torn and no reply is stale (the transport's tests "
    "pass), so the rollback of a step interrupted mid-run is the suspect"))
def test_a_process_directed_interrupt_at_every_point_of_a_step_and_between_steps():
    """``os.kill(os.getpid(), SIGINT)`` from another thread, with a helper thread alive (as
    in a Jupyter kernel), at moments spread over a two-worker step and past its end: each
    time the step either commits or raises KeyboardInterrupt with every collection as before
    it, and the flow goes on right."""
    out = run_scenario(r'''
        threading.Thread(target=time.sleep, args=(10 ** 6,), daemon=True).start()  # a helper
        flow = ddlab.Dataflow(workers=2)
        edges = flow.input("edges", columns=["src", "dst"])
        cc = connected_components(edges).view()
        present = set(random_edges(2000, 1500, seed=6))
        edges.insert(sorted(present))
        flow.step()
        batches = [random_edges(40_000, 30_000, seed=s) for s in range(7, 9)]
        start = time.perf_counter()
        edges.insert(batches[0])
        flow.step()
        present |= set(batches[0])
        took = time.perf_counter() - start
        edges.remove(batches[0])
        flow.step()
        present -= set(batches[0])
        outcomes = {"committed": 0, "interrupted": 0}
        k = 0
        for frac in [i / 16 for i in range(17)] + [1.2, 1.5]:
            batch = batches[k % 2]
            before, epoch = cc.to_dict(), flow.epoch
            timer = threading.Timer(frac * took, os.kill, (os.getpid(), signal.SIGINT))
            edges.insert(batch)  # (staged before the timer: an insert is not the step's to undo)
            try:
                timer.start()
                flow.step()
                present |= set(batch)
                outcomes["committed"] += 1
                timer.join()
                time.sleep(0.05)
            except KeyboardInterrupt as err:
                timer.join()
                if flow.epoch == epoch:
                    assert cc.to_dict() == before, "an interrupted step changed a collection"
                    outcomes["interrupted"] += 1
                    if hasattr(err, "discarded_updates"):  # (handed back, not staged again)
                        edges.insert(batch)
                    flow.step()
                    present |= set(batch)
                else:
                    outcomes["committed"] += 1  # (the interrupt came after the step)
            assert cc.to_dict() == cc_oracle(present), frac
            edges.remove(batch)
            flow.step()
            present -= set(batch)
            assert cc.to_dict() == cc_oracle(present), frac
            k += 1
        assert outcomes["interrupted"] >= 3, outcomes
        print("OK", outcomes["interrupted"] >= 3)
        pids = worker_pids()
        flow.close()
        assert gone(pids) and shm_files() == []
    ''', timeout=240)
    assert lines(out) == ["OK True"]


def test_an_interrupt_during_the_shard_reads_of_why_leaves_no_late_reply_behind():
    """Worker 1 answers a shard read late; Ctrl-C (process-directed, from another thread)
    stops worker 0's wait for it.  The next explanation must read its own answers, not the
    late one (request ids), and interrupts at random moments of ``why`` change nothing."""
    out = run_scenario(r'''
        import tempfile
        from ddlab.engine.workers import shards
        SLOW = os.path.join(tempfile.mkdtemp(), "slow")
        real_read = shards.read_shard

        def slow_read(*args):
            if os.getpid() != PARENT and os.path.exists(SLOW):
                os.unlink(SLOW)
                time.sleep(1.0)
            return real_read(*args)

        shards.read_shard = slow_read
        for mod in [sys.modules[n] for n in list(sys.modules) if n.startswith("ddlab.engine.workers.")]:
            if getattr(mod, "read_shard", None) is real_read:
                mod.read_shard = slow_read
        threading.Thread(target=time.sleep, args=(10 ** 6,), daemon=True).start()
        flow = ddlab.Dataflow(workers=2)
        edges = flow.input("edges", columns=["src", "dst"])
        cc_coll = connected_components(edges)
        cc = cc_coll.view()
        present = random_edges(400, 100, seed=9)
        edges.insert(present)
        flow.step()
        records = sorted(cc.to_dict())[::20][:4]

        def explain():
            flow._team._whole.clear()
            return [sorted(map(tuple, flow.why(cc_coll, r).inputs["edges"].values.tolist()))
                    for r in records]

        want = explain()
        open(SLOW, "w").close()
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            explain()
            raise AssertionError("the interrupt did not stop the read")
        except KeyboardInterrupt:
            pass
        timer.join()
        time.sleep(1.2)  # (the late answer is in the channel now)
        assert explain() == want, "an explanation read a late answer"
        print("OK late answer dropped")
        rng = np.random.default_rng(10)
        for _ in range(12):
            timer = threading.Timer(float(rng.uniform(0, 0.05)), os.kill, (os.getpid(), signal.SIGINT))
            timer.start()
            try:
                explain()
                timer.join()
                time.sleep(0.01)
            except KeyboardInterrupt:
                timer.join()
            assert explain() == want
        more = random_edges(50, 150, seed=11)
        edges.insert(more)
        flow.step()
        assert cc.to_dict() == cc_oracle(set(present) | set(more))
        print("OK")
        flow.close()
    ''', timeout=300)
    assert lines(out) == ["OK late answer dropped", "OK"]


# -- lifecycle ------------------------------------------------------------------------------
def test_with_close_and_garbage_collection_leave_no_process():
    out = run_scenario(r'''
        with ddlab.Dataflow(workers=2) as flow:
            xs = flow.input("xs")
            view = xs.distinct().view()
            xs.insert([1, 2, 2])
            flow.step()
            pids = worker_pids()
            assert len(pids) == 1
        assert gone(pids) and view.to_dict() == {1: 1, 2: 1}
        try:
            flow.step()
        except DataflowError as err:
            assert "closed" in str(err)
        print("OK with")

        flow = ddlab.Dataflow(workers=3)
        xs = flow.input("xs")
        xs.count().view()
        xs.insert([1])
        flow.step()
        pids = worker_pids()
        assert len(pids) == 2
        flow.close()
        assert gone(pids)
        print("OK close")

        def build():
            flow = ddlab.Dataflow(workers=2)
            edges = flow.input("edges", columns=["src", "dst"])
            connected_components(edges).view()
            edges.insert(random_edges(100_000, 30_000, seed=12))
            flow.step()
        build()
        pids = worker_pids()
        assert len(pids) == 1
        gc.collect()
        assert gone(pids) and shm_files() == []
        print("OK gc")
    ''')
    assert lines(out) == ["OK with", "OK close", "OK gc"]


def test_a_hung_worker_is_killed_when_its_flow_closes():
    """A worker that does not answer (stopped with SIGSTOP) is killed after a bounded wait:
    ``close`` returns and no process remains."""
    out = run_scenario(r'''
        flow = ddlab.Dataflow(workers=3)
        xs = flow.input("xs")
        xs.count().view()
        xs.insert([1, 2])
        flow.step()
        pids = worker_pids()
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        flow.close()
        assert gone(pids, within=1.0), [p for p in pids if alive(p)]
        print("OK")
    ''', timeout=60)
    assert lines(out) == ["OK"]


#: a kernel with two idle teams and a third whose worker runs a long user function; it
#: prints its children's pids before and during that step
BUSY_KERNEL = r"""
import os, sys, time, json, threading
import ddlab
parent = os.getpid()
def busy(r):
    if os.getpid() != parent:
        time.sleep(120)
    return r
flows = []
for n in (2, 3):
    flow = ddlab.Dataflow(workers=n)
    xs = flow.input("xs")
    xs.count().view()
    xs.insert([1, 2, 3])
    flow.step()
    flows.append(flow)
import multiprocessing
print(json.dumps([p.pid for p in multiprocessing.active_children()]), flush=True)
flow = ddlab.Dataflow(workers=2)
zs = flow.input("zs")
zs.map(busy).view()
zs.insert(list(range(20)))
threading.Timer(0.5, lambda: print(json.dumps([p.pid for p in multiprocessing.active_children()]), flush=True)).start()
flow.step()
"""


def test_workers_die_with_their_parent_even_while_busy():
    """A kernel killed by ``kill -9`` (a restart) while a worker runs a long user function
    and a second flow's workers wait: none of them outlives it."""
    out = run_scenario(r'''
        inner = INNER
        proc = subprocess.Popen([sys.executable, "-c", inner], stdout=subprocess.PIPE, text=True)
        first = json.loads(proc.stdout.readline())
        every = json.loads(proc.stdout.readline())
        assert len(first) == 3 and len(every) == 4, (first, every)
        time.sleep(0.5)
        proc.kill()
        proc.wait()
        assert gone(every, within=5.0), [p for p in every if alive(p)]
        print("OK")
    '''.replace("INNER", repr(BUSY_KERNEL)), timeout=120)
    assert lines(out) == ["OK"]


def test_the_explorer_closes_the_flow_it_built_and_the_references_use_one_worker():
    out = run_scenario(r'''
        import pandas as pd
        from tests.support.pandas_windows import pandas_windows
        from ddlab.widgets import explore_graph
        rng = np.random.default_rng(13)
        n = 3000
        events = pd.DataFrame({"time": np.sort(rng.integers(0, 40 * 86_400, n)),
                               "src": rng.integers(0, 300, n), "dst": rng.integers(0, 300, n)})
        batches = pandas_windows(events, steps=8)
        ex = explore_graph(batches, "scc", settle_ms=None, workers=2)
        ex.slider.value = 3
        pids = worker_pids()
        assert len(pids) == 1
        ex.close()
        assert gone(pids)
        print("OK explorer")

        from ddlab.widgets.references import scratch_curves
        os.environ["DDLAB_WORKERS"] = "2"
        frame = pd.DataFrame(random_edges(500, 200, seed=14), columns=["src", "dst"])
        curves = scratch_curves(frame, "cc", prioritized=False)
        assert curves and worker_pids() == []
        print("OK references")
    ''')
    assert lines(out) == ["OK explorer", "OK references"]


def test_the_session_reset_stops_the_workers_of_the_flow_it_replaces():
    out = run_scenario(r'''
        from ddlab.kernel_ext.session import Session
        session = Session()
        session.reset(workers=2)
        flow = session.flow
        xs = flow.input("xs")
        xs.count().view()
        xs.insert([1])
        flow.step()
        pids = worker_pids()
        assert len(pids) == 1
        session.reset()
        assert gone(pids)
        print("OK")
    ''')
    assert lines(out) == ["OK"]


# -- the rollback's own failure ---------------------------------------------------------------
def test_updates_are_handed_back_when_the_workers_rollback_itself_fails():
    out = run_scenario(r'''
        flow = ddlab.Dataflow(workers=2)
        xs = flow.input("xs", columns=["k"])
        xs.map(lambda r: 1 // (r - 7)).view()
        xs.insert([1])
        flow.step()

        def broken_abort(epoch):
            raise DataflowError("the rollback failed (simulated)")

        flow._team.abort = broken_abort
        xs.insert([7, 8])
        try:
            flow.step()
        except DataflowError as err:
            assert "simulated" in str(err)
            lost = getattr(err, "discarded_updates", None)
            assert lost is not None and len(lost["xs"]) == 2, lost
            print("OK")
        flow.close()
    ''')
    assert lines(out) == ["OK"]


# -- the background compiler of the kernels ---------------------------------------------------
def test_a_forked_worker_does_not_take_the_background_compiler_for_its_own(monkeypatch):
    """A worker forked while the kernels compile in the background is not that compiler's
    parent: asking its ``Popen`` there read as finished, and the worker compiled the kernels
    itself.  It must wait for the compiler like any other process (answer: not yet)."""
    from ddlab.engine import kernels, tuning

    compiler = subprocess.Popen(["sleep", "30"])
    try:
        for key, value in (("compiling", compiler), ("ready", False), ("failed", False),
                           ("next_poll", 0.0), ("waiting", False)):
            monkeypatch.setitem(kernels._state, key, value)
        monkeypatch.setattr(tuning, "KERNELS", True)
        monkeypatch.setattr(tuning, "FAST_PATHS", True)
        monkeypatch.setattr(kernels, "background", True)
        monkeypatch.setattr(kernels, "available", lambda: True)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the forked worker
            try:
                kernels.warm_up = lambda: os.write(w, b"compiled here;") and 0.0
                kernels.cache_is_warm = lambda: False
                kernels._compiler_elsewhere = lambda: True  # (the parent's lock)
                os.write(w, b"answer=%d" % kernels.active())
            finally:
                os._exit(0)
        os.close(w)
        os.waitpid(pid, 0)
        got = os.read(r, 200)
        os.close(r)
        assert got == b"answer=0"
        assert compiler.poll() is None  # (still the parent's, still running)
    finally:
        compiler.kill()
        compiler.wait()


def test_the_background_compiler_runs_in_a_session_of_its_own(monkeypatch, tmp_path):
    """Jupyter's Stop signals the kernel's process group: the compiler must not be in it."""
    from ddlab.engine import kernels

    real, started = subprocess.Popen, []

    def popen(args, **options):
        proc = real(["sleep", "30"], **options)  # (the compiler's options, a stand-in's work)
        started.append(proc)
        return proc

    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr(kernels, "_log_path", lambda: tmp_path / "compile.log")
    monkeypatch.setitem(kernels._state, "compiling", None)
    kernels._start_background()
    try:
        assert started, "no compiler was started"
        assert os.getsid(started[0].pid) == started[0].pid != os.getsid(0)
    finally:
        for proc in started:
            proc.kill()
            proc.wait()
        kernels._state["compiling"] = None
