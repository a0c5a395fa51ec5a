"""The key facts lessons 06-10 teach, asserted from the engine against independent computations.

Each test reads the lesson's parameters from its notebook, and where a lesson defines a program
or a model in a cell tagged ``program`` or ``model``, runs that very cell, so what a lesson
shows is what is checked here.  The oracles: label propagation evaluated from scratch with
numpy (the per-iteration differences of the CIDR paper's Figure 1 and of the Naiad report's
Figure 6), networkx (components), a from-scratch dataflow on the same window (compaction), and a
brute-force walk of the timely dataflow graph (could-result-in, frontiers, notifications).
Twitter 24h is used when ``../shared/data`` has it, CollegeMsg otherwise, as in the lessons.
"""
from __future__ import annotations

import ast
import json
import random
from collections import Counter
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import ddlab
from ddlab.algorithms import connected_components
from ddlab.sources import collegemsg_pandas, events_in_window, shared_data_dir

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
TWITTER = shared_data_dir() / "twitter24h" / "twitter_24h.csv.gz"


# -- reading the lessons ----------------------------------------------------------------------
def _cells(name):
    return json.loads((NOTEBOOKS / name).read_text())["cells"]


def _source(cell):
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def parameters(name) -> dict:
    """The lesson's parameters cell, evaluated (it only assigns literals)."""
    cell = next(c for c in _cells(name) if "parameters" in c.get("metadata", {}).get("tags", []))
    out = {}
    for node in ast.parse(_source(cell)).body:
        out[node.targets[0].id] = ast.literal_eval(node.value)
    return out


def run_tagged(name, tag, namespace, **overrides) -> dict:
    """Run the lesson's parameters cell (with ``overrides``), then its cells tagged ``tag``."""
    namespace.update(parameters(name), **overrides)
    for cell in _cells(name):
        if tag in cell.get("metadata", {}).get("tags", []):
            exec(compile(_source(cell), f"{name}:{tag}", "exec"), namespace)
    return namespace


def twitter_or_collegemsg(mentions_only=False):
    if TWITTER.exists():
        raw = pd.read_csv(TWITTER)
        if mentions_only:
            raw = raw[raw["type"] == "m"]
        return "twitter", raw.rename(columns={"source": "src", "target": "dst"})[["src", "dst", "time"]]
    return "collegemsg", collegemsg_pandas()


def edge_set(events, lo, hi):
    w = events_in_window(events, lo, hi)
    return set(zip(w["src"].tolist(), w["dst"].tolist()))


# -- the oracle: synchronous label propagation with numpy --------------------------------------
def propagate(edges, ids):
    """Labels of the nodes ``ids`` (sorted; -1 for a node without an edge) after each min step
    ``[f^1(A), f^2(A), ...]`` until they stop changing (the last array repeats the one before),
    every node of the undirected graph seeded with its own id."""
    present = np.zeros(len(ids), dtype=bool)
    if not edges:
        return [np.full(len(ids), -1)]
    pairs = np.searchsorted(ids, np.array(sorted(edges), dtype=np.int64))
    u, v = pairs[:, 0], pairs[:, 1]
    present[u] = present[v] = True
    label = ids.copy()
    out = []
    while True:
        new = label.copy()
        np.minimum.at(new, u, label[v])
        np.minimum.at(new, v, label[u])
        out.append(np.where(present, new, -1))
        if (new == label).all():
            return out
        label = new


def _net_records(labels, signs):
    """Per row, the number of distinct labels whose signs do not cancel; summed over rows."""
    order = np.argsort(labels, axis=1, kind="stable")
    lab, sig = np.take_along_axis(labels, order, 1), np.take_along_axis(signs, order, 1)
    count, run = 0, np.zeros(len(lab), dtype=np.int64)
    for j in range(lab.shape[1]):
        run = run + sig[:, j]
        ends = np.ones(len(lab), dtype=bool) if j == lab.shape[1] - 1 else lab[:, j] != lab[:, j + 1]
        count += int((ends & (run != 0)).sum())
        run = np.where(ends, 0, run)
    return count


def difference_curve(before, after):
    """Records in difference per iteration of the epoch that changes the edge set ``before``
    into ``after``: the non-zero records of ``F1[i] - F0[i] - F1[i-1] + F0[i-1]`` where
    ``F[i] = f^(i+1)`` is the loop body's output (the Naiad report's equation 5)."""
    ids = np.unique(np.array(sorted(before | after), dtype=np.int64).reshape(-1, 2))
    old, new = propagate(before, ids), propagate(after, ids)
    at = lambda seq, i: seq[min(i, len(seq) - 1)]
    curve = []
    for i in range(max(len(old), len(new)) + 1):
        cols = [at(new, i), at(old, i)] + ([at(new, i - 1), at(old, i - 1)] if i else [])
        signs = [1, -1, -1, 1][:len(cols)]
        labels = np.stack(cols, axis=1)
        sign = np.stack([np.where(c >= 0, s, 0) for c, s in zip(cols, signs)], axis=1)
        curve.append(_net_records(labels, sign))
    while curve and curve[-1] == 0:
        curve.pop()
    return curve


def components(edges):
    g = nx.Graph(sorted(edges))
    return {(n, low) for c in nx.connected_components(g) for low in [min(c)] for n in c}


# -- lesson 06: Figure 1 and Figure 6 ------------------------------------------------------------
@pytest.fixture(scope="module")
def lesson06():
    p = parameters("06_figure1_and_figure6.ipynb")
    source, events = twitter_or_collegemsg(p["MENTIONS_ONLY"])
    if source == "twitter":
        start, width, step = 0, 86_400 - sum(length * count for length, count in p["SLIDE_PLAN"]), 1
    else:
        start, width, step = int(events["time"].min()), 30 * 86_400, 3_600
    return p, events, start, width, step


def _flow(prioritized):
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    view = connected_components(edges, prioritized=prioritized).view()
    return flow, edges, view


def test_figure1_lines_use_one_metric(lesson06):
    """Incremental = label propagation from scratch on the window (its records in difference
    per iteration); stateless = one record per node for as many iterations; prioritized gives
    the same labels; every line counts what the loop's feedback carried."""
    _, events, start, width, _ = lesson06
    window = edge_set(events, start, start + width)
    plain, edges, labels = _flow(False)
    edges.insert(sorted(window))
    plain.step()
    incremental = plain.loop_differences(0, plain.loops()[0], with_empty=True)["records"].tolist()
    assert incremental == difference_curve(set(), window)
    nodes = len({n for e in window for n in e})
    assert len(labels) == nodes and set(labels.to_dict()) == components(window)
    stateless = [nodes] * len(incremental)        # the lesson's stateless line
    assert incremental[0] == stateless[0]         # the body's first output is every label
    prio, pedges, plabels = _flow(True)
    pedges.insert(sorted(window))
    prio.step()
    assert plabels.to_dict() == labels.to_dict()
    for flow in (plain, prio):
        loop = flow.loops()[0]
        stats = flow.stats(0)
        fed = stats[(stats.kind == "feedback") & (stats.scope == loop)]["out"].sum()
        assert flow.loop_differences(0, loop, with_empty=True)["records"].sum() == fed


def test_differential_slides_are_the_epochs_differences(lesson06):
    """Each slide's curve (empty iterations included) equals the difference of two from-scratch
    propagations, on the window before and after the slide; the labels stay networkx's."""
    _, events, start, width, step = lesson06
    plain, edges, labels = _flow(False)
    prio, pedges, plabels = _flow(True)
    before = edge_set(events, start, start + width)
    for flow, inp in ((plain, edges), (prio, pedges)):
        inp.insert(sorted(before))
        flow.step()
    checked = empty_seen = 0
    for k in range(1, 61):
        now = edge_set(events, start + k * step, start + k * step + width)
        for flow, inp in ((plain, edges), (prio, pedges)):
            if now - before:
                inp.insert(sorted(now - before))
            if before - now:
                inp.remove(sorted(before - now))
            flow.step()
        curve = plain.loop_differences(k, plain.loops()[0], with_empty=True)["records"].tolist()
        if now != before:
            assert curve == difference_curve(before, now), f"slide {k}"
            checked += 1
            empty_seen += 0 in curve
        else:
            assert curve == []
        busy = prio.loop_differences(k, prio.loops()[0], with_empty=False)["records"].tolist()
        full = prio.loop_differences(k, prio.loops()[0], with_empty=True)["records"].tolist()
        assert [r for r in full if r] == busy
        before = now
        if checked == 6:
            break
    assert checked > 0
    assert set(labels.to_dict()) == set(plabels.to_dict()) == components(before)


def test_report_figure6_counts_the_loop_variables_differences():
    """The lesson's report Figure 6: the variable's differences per iteration, numbered from the
    seeds, are n at iteration 0 and twice the labels that change at each later step; the seconds
    per iteration add up to the loop's seconds."""
    p = parameters("06_figure1_and_figure6.ipynb")
    n = {"ci": 20_000, "paper": 400_000}[p["SCALE"]] // 10          # a tenth of the lesson's graph
    m = int(round(n * 8.5))
    rng = np.random.default_rng(p["SEED"])
    pairs = rng.integers(0, n, size=(int(m * 1.05) + 100, 2))
    pairs = np.unique(pairs[pairs[:, 0] != pairs[:, 1]], axis=0)
    pairs = pairs[rng.permutation(len(pairs))[:m]]
    flow, edges, labels = _flow(False)
    edges.insert(pd.DataFrame(pairs, columns=["src", "dst"]))
    flow.step()
    loop = flow.loops()[0]
    stats = flow.stats(0)
    inside = stats[stats.scope == loop]
    variable = inside[inside.operator.str.startswith("variable")].groupby("iteration")["out"].sum()
    graph = set(map(tuple, pairs.tolist()))
    ids = np.unique(pairs)
    steps = [ids] + propagate(graph, ids)
    expected = [len(ids)] + [2 * int((a != b).sum()) for a, b in zip(steps, steps[1:])]
    while expected[-1] == 0:
        expected.pop()
    got = variable.reindex(range(len(expected)), fill_value=0).tolist()
    assert got == expected and variable.drop(range(len(expected)), errors="ignore").sum() == 0
    assert set(labels.to_dict()) == components(graph)
    per_iteration = inside.groupby("iteration")["seconds"].sum()
    assert per_iteration.sum() == pytest.approx(inside["seconds"].sum())


# -- lesson 07: SCC as nested loops ----------------------------------------------------------------
def _scc_edges(present):
    g = nx.DiGraph(sorted(present))
    comp = {n: i for i, c in enumerate(nx.strongly_connected_components(g)) for n in c}
    return {(a, b) for a, b in present if comp[a] == comp[b]}


@pytest.mark.parametrize("prioritized", [True, False])
def test_lesson07_program_equals_networkx_on_random_epochs(prioritized):
    ns = run_tagged("07_nested_loops_scc.ipynb", "program", {"np": np, "ddlab": ddlab, "print": lambda *a, **k: None},
                    PRIORITIZED=prioritized)
    flow, edges, view = ns["flow"], ns["edges"], ns["scc_view"]
    rng = random.Random(7)
    present = set()
    for epoch in range(12):
        change = {(rng.randrange(12), rng.randrange(12)) for _ in range(6)}
        add = {e for e in change if e not in present and e[0] != e[1]}
        drop = set(rng.sample(sorted(present), min(3, len(present))))
        if add:
            edges.insert(sorted(add))
        if drop:
            edges.remove(sorted(drop))
        present = (present | add) - drop
        flow.step()
        assert set(view.to_dict()) == _scc_edges(present), f"epoch {epoch}"
    assert flow.loops() == ["root/scc", "root/scc/reach", "root/scc/reach2"]
    inner = flow.stats()
    inner = inner[inner.scope == "root/scc/reach"]
    coordinates = {sum(2 if isinstance(c, tuple) else 1 for c in t) for t in inner.time}
    assert coordinates == {4 if prioritized else 3}
    for loop in flow.loops():   # each loop's lattice sums the updates of its scope and the nested ones
        stats = flow.stats()
        mine = stats[(stats.scope == loop) | stats.scope.str.startswith(loop + "/")]
        assert flow.lattice(loop).updates.sum() == mine.out.sum()


def test_lesson07_on_the_lessons_window():
    p = parameters("07_nested_loops_scc.ipynb")
    ns = run_tagged("07_nested_loops_scc.ipynb", "program", {"np": np, "ddlab": ddlab, "print": lambda *a, **k: None})
    source, events = twitter_or_collegemsg()
    if source == "twitter":
        start, width, step = p["START_HOUR"] * 3600, p["WINDOW_MINUTES"] * 60, p["STEP_MINUTES"] * 60
    else:
        start, width, step = int(events["time"].min()) + 30 * 86400, 7 * 86400, 86400
    before = set()
    for k in range(3):
        now = edge_set(events, start + k * step, start + k * step + width)
        if now - before:
            ns["edges"].insert(sorted(now - before))
        if before - now:
            ns["edges"].remove(sorted(before - now))
        ns["flow"].step()
        assert set(ns["scc_view"].to_dict()) == _scc_edges(now)
        before = now


# -- lesson 08: compaction and frontiers -----------------------------------------------------------
def test_lesson08_trace_is_the_tap_advanced_to_the_frontier():
    ns = run_tagged("08_compaction_and_frontiers.ipynb", "program",
                    {"np": np, "ddlab": ddlab, "Counter": Counter, "leq": ddlab.lattice.leq, "lub": ddlab.lattice.lub})
    for k in range(1, len(ns["SCRIPT"]) + 1):
        flow, tap, arranged, view = ns["run"](k)
        engine = sorted((tuple(r), tuple(t), int(d)) for *r, t, d in arranged.history().itertuples(index=False))
        assert engine == ns["advance_and_consolidate"](tap, (k - 1, 0))
        compacted = ns["advance_and_consolidate"](tap, (k, 0))
        for u in [(e, i) for e in (k, k + 1) for i in range(15)]:
            assert ns["accumulate"](tap, u) == ns["accumulate"](compacted, u)
        final = ns["accumulate"](tap, (k, 99))
        assert {r for r, d in final.items() if d} == set(view.to_dict())


def test_lesson08_compacted_state_is_a_fresh_computation_of_the_window():
    """After sliding, compacted state equals what a fresh dataflow keeps for the final window,
    trace by trace; compaction changes no output; the label trace holds at least the labels."""
    p = parameters("08_compaction_and_frontiers.ipynb")
    source, events = twitter_or_collegemsg()
    if source == "twitter":
        start, width, step = 6 * 3600, p["WINDOW_MINUTES"] * 60, p["STEP_MINUTES"] * 60
    else:
        start, width, step = int(events["time"].min()) + 30 * 86400, 7 * 86400, 3600
    lazy, compacted = _flow(True), _flow(True)
    before = set()
    for k in range(12):
        now = edge_set(events, start + k * step, start + k * step + width)
        for flow, inp, _ in (lazy, compacted):
            if now - before:
                inp.insert(sorted(now - before))
            if before - now:
                inp.remove(sorted(before - now))
            flow.step()
        compacted[0].compact()
        assert lazy[2].to_dict() == compacted[2].to_dict()
        before = now
    fresh = _flow(True)
    fresh[1].insert(sorted(before))
    fresh[0].step()
    for flow in (lazy[0], fresh[0]):
        flow.compact()
    a = lazy[0].retained_updates(by_operator=True)
    b = fresh[0].retained_updates(by_operator=True)
    assert a["updates"].tolist() == b["updates"].tolist()
    labels = a[(a.kind == "reduce") & (a.scope == lazy[0].loops()[0])]["updates"].sum()
    assert labels >= len(lazy[2]) and set(lazy[2].to_dict()) == components(before)


# -- lesson 09: timely dataflow ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def timely():
    return run_tagged("09_timely_dataflow.ipynb", "model", {"random": random, "Counter": Counter})


def test_lesson09_could_result_in_and_frontier_against_brute_force(timely):
    m = timely
    rng = random.Random(0)
    stamps = ([((e,), l) for e in range(3) for l in ("input", "output", ("input", "ingress"), ("egress", "output"))]
              + [((e, i), l) for e in range(3) for i in range(5) for l in m["LOCATIONS"]
                 if l not in ("input", "output", ("input", "ingress"), ("egress", "output"))])
    for a in stamps:
        for b in rng.sample(stamps, 20):
            assert m["could_result_in"](a, b) == m["could_result_in_brute_force"](a, b, hops=20)
    for _ in range(200):
        counts = Counter({s: rng.randint(1, 2) for s in rng.sample(stamps, rng.randint(1, 6))})
        brute = sorted((p for p in counts if not any(q != p and m["could_result_in_brute_force"](q, p, hops=20)
                                                      for q in counts)), key=repr)
        assert m["frontier"](counts) == brute


@pytest.mark.parametrize("seed", range(8))
def test_lesson09_notifications_are_safe_and_results_right(timely, seed):
    m = timely
    rng = random.Random(seed)
    inputs = [rng.randint(1, 200) for _ in range(rng.randint(1, 4))]
    model = m["Model"](inputs, seed).run()          # its own checks run at every step
    for e, n in enumerate(inputs):
        total, x = 0, n
        while True:
            total += x
            if x <= 1:
                break
            x //= 2
        assert model.results[e] == total
    seen = {}
    for i, (kind, t, vertex) in enumerate(model.delivered):
        if kind == "notify":
            later = [u for k, u, v in model.delivered[i + 1:] if k == "message" and v == vertex]
            assert not any(m["leq"](u, t) for u in later)
            for earlier in seen.get(vertex, []):
                assert not m["leq"](t, earlier) or t == earlier   # never a time before one already notified
            seen.setdefault(vertex, []).append(t)
    assert not model.requested and not model.messages and all(c == 0 for c in model.counts.values())


@pytest.mark.parametrize("seed", range(5))
def test_lesson09_engine_runs_in_time_order_within_each_scope(seed):
    rng = random.Random(seed)
    flow, edges, view = _flow(False)
    present = set()
    for _ in range(5):
        add = {(rng.randrange(15), rng.randrange(15)) for _ in range(6)} - present
        add = {e for e in add if e[0] != e[1]}
        drop = set(rng.sample(sorted(present), min(3, len(present))))
        if add:
            edges.insert(sorted(add))
        if drop:
            edges.remove(sorted(drop))
        present = (present | add) - drop
        flow.step()
        runs = flow.stats(flow.epoch - 1)
        for _, scope_runs in runs.groupby("scope", sort=False):
            assert list(scope_runs.time) == sorted(scope_runs.time)
    assert set(view.to_dict()) == components(present)


# -- lesson 10: performance -------------------------------------------------------------------------
def _table2_rows(report: Path) -> dict:
    """Table 2 of the Naiad report, read from its text: {"SSSP 1M": (LINQ s, Naiad s, LINQ MB, Naiad MB, update)}."""
    rows = {}
    for line in report.read_text().splitlines():
        cells = line.split("\t")
        if cells[0] in ("SSSP", "SCC", "CC") and len(cells) == 7:
            rows[f"{cells[0]} {cells[1]}"] = tuple(c.replace(" ", "") for c in cells[2:])
    return rows


def test_lesson10_runs_every_table2_row_at_its_density():
    """Every row of the report's Table 2 is in the lesson, with the report's figures as printed,
    and its CI-scale graph keeps the row's edges per node (the paper's text is the oracle)."""
    report = shared_data_dir().parent / "papers" / "naiad-tech-report.txt"
    if not report.exists():
        pytest.skip(f"the papers' text is not at {report} (../shared absent)")
    table2 = _table2_rows(report)
    assert len(table2) == 5, table2
    cell = next(_source(c) for c in _cells("10_performance.ipynb") if "WORKLOADS = [" in _source(c))
    node = next(n for n in ast.parse(cell).body if isinstance(n, ast.Assign) and n.targets[0].id == "WORKLOADS")
    workloads = ast.literal_eval(node.value)
    assert {w[0] for w in workloads} == set(table2)
    size = {"K": 1_000, "M": 1_000_000}
    for row, program, nodes, edges, fraction, printed in workloads:
        assert row.split()[0] == program
        assert tuple(c.replace(" ", "") for c in printed) == table2[row], row
        label = row.split()[1]
        assert edges == round(float(label[:-1]) * size[label[-1]]), row
        assert nodes == (400_000 if program == "CC" else 1_000_000), row     # Section 6.2
        assert 0 < fraction <= 1 and (int(edges * fraction) / int(nodes * fraction)) == pytest.approx(edges / nodes, rel=1e-3)


def test_lesson10_memory_columns_measure_the_dataflow():
    """Table 2's footprint for ours: the lesson's own ``memory_mb`` (run from its cells) counts what a
    from-scratch run allocates: a peak at least what the dataflow holds after it, more for a larger
    graph, and nothing left over once the dataflow is gone."""
    import gc
    import tracemalloc

    from ddlab.algorithms import shortest_paths, strongly_connected_components

    cells = "\n".join(_source(c) for c in _cells("10_performance.ipynb") if "def memory_mb" in _source(c)
                      or "def random_edges" in _source(c))
    ns = dict(np=np, pd=pd, ddlab=ddlab, gc=gc, tracemalloc=tracemalloc, connected_components=connected_components,
              shortest_paths=shortest_paths, strongly_connected_components=strongly_connected_components,
              rng=np.random.default_rng(0))
    for node in ast.parse(cells).body:
        if isinstance(node, ast.FunctionDef) and node.name in ("random_edges", "build", "memory_mb"):
            exec(compile(ast.Module([node], []), "10_performance.ipynb", "exec"), ns)
    small, large = ns["random_edges"](2_000, 17_000), ns["random_edges"](8_000, 68_000)
    for name in ("CC", "SCC"):
        (peak, held), (peak4, held4) = ns["memory_mb"](name, small), ns["memory_mb"](name, large)
        assert peak >= held > 0 and peak4 >= held4 > 0, name
        assert held4 > held and peak4 > peak, name                  # four times the graph: more memory
    gc.collect()
    tracemalloc.start()
    ns["memory_mb"]("CC", small)                  # the dataflow it measured is gone when it returns
    gc.collect()
    left, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert left < 1_000_000


def test_lesson10_adversarial_deletions_touch_the_component():
    """The lesson's caveat as a count, not a time: deleting the edges of the node with the
    smallest id processes far more updates than deleting random edges, and the labels stay right."""
    p = parameters("10_performance.ipynb")
    rng = np.random.default_rng(p["SEED"])
    n, m = 2_000, 10_000
    pairs = rng.integers(0, n, size=(int(m * 1.05) + 100, 2))
    pairs = np.unique(pairs[pairs[:, 0] != pairs[:, 1]], axis=0)[:m]
    frame = pd.DataFrame(pairs, columns=["src", "dst"])
    work = {}
    for kind in ("random", "adversarial"):
        flow, edges, labels = _flow(False)
        edges.insert(frame)
        flow.step()
        smallest = int(pairs.min())
        incident = frame[(frame.src == smallest) | (frame.dst == smallest)]
        chosen = incident if kind == "adversarial" else frame.sample(len(incident), random_state=1)
        present = set(map(tuple, pairs.tolist()))
        for row in chosen.itertuples(index=False):
            edges.remove([tuple(row)])
            flow.step()
            present.discard(tuple(row))
        work[kind] = flow.epoch_log(last=len(chosen))["updates_processed"].median()
        assert set(labels.to_dict()) == components(present)
    assert work["adversarial"] > 10 * work["random"]
