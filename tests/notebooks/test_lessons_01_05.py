"""Lessons 1-5 (notebooks/01_* to 05_*): each lesson's key facts, from the engine, against an
independent computation (a from-scratch recount, plain-Python label propagation, networkx, a
simulation of the prioritized schedule).

The tests do not execute the notebooks (nbmake does that, in the suite): they read each lesson's
parameters cell, rebuild the same small programs through the public API, and check what the
lesson claims. Where a lesson's own code is the subject (Algorithm 1 in Lesson 4, the Figure 12
measurement in Lesson 5), the test runs that code, taken from the notebook's cells by tag, so the
code the reader sees is the code that is checked.
"""
from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import ddlab
from ddlab import lattice
from ddlab.algorithms import connected_components

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
LESSONS = {1: "01_differences.ipynb", 2: "02_a_loop_is_differences.ipynb",
           3: "03_two_kinds_of_change.ipynb", 4: "04_inside_an_operator.ipynb",
           5: "05_prioritization.ipynb"}
OLD = ("01_model_basics", "02_connected_components", "03_prioritization.ipynb", "04_figure1",
       "05_performance", "06_your_own_data")


# -- reading the notebooks ------------------------------------------------------------------
def _cells(lesson: int) -> list[dict]:
    return json.loads((NOTEBOOKS / LESSONS[lesson]).read_text())["cells"]


def _source(cell: dict) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def _parameters(lesson: int) -> dict:
    cell = next(c for c in _cells(lesson) if c["cell_type"] == "code")
    ns: dict = {}
    exec(_source(cell), ns)
    return {k: v for k, v in ns.items() if k.isupper()}


def _tagged(lesson: int, tag: str) -> str:
    found = [_source(c) for c in _cells(lesson) if tag in c.get("metadata", {}).get("tags", [])]
    assert found, f"{LESSONS[lesson]} has no cell tagged {tag!r}"
    return "\n\n".join(found)


# -- independent oracles ----------------------------------------------------------------------
def propagate(edge_list, rounds):
    """Each node's label after 0..rounds rounds of min-propagation, in plain Python."""
    label = {n: n for e in edge_list for n in e}
    history = [dict(label)]
    for _ in range(rounds):
        new = dict(label)
        for a, b in edge_list:
            new[a], new[b] = min(new[a], label[b]), min(new[b], label[a])
        label = new
        history.append(dict(label))
    return history


def records(labels: dict) -> Counter:
    return Counter({(n, l): 1 for n, l in labels.items()})


def signed_size(*terms) -> int:
    """Records in difference of a signed sum of labellings: sum of |multiplicity|."""
    out = Counter()
    for sign, labels in terms:
        for r, n in records(labels).items():
            out[r] += sign * n
    return sum(abs(n) for n in out.values())


def _prioritized_simulation(edge_list, priority_of):
    """The prioritized loop run in plain Python on the loop variable as a multiset: for each
    priority in order, its seeds (n, n) are added, then the body ("smallest label among yourself
    and your neighbours") is applied until nothing changes.  Yields (priority, iteration,
    seeds added, X, f(X)) for every round evaluated, the last of each priority included."""
    nbrs: dict = {}
    for a, b in edge_list:
        nbrs.setdefault(a, []).append(b)
        nbrs.setdefault(b, []).append(a)
    classes: dict = {}
    for n in nbrs:
        classes.setdefault(priority_of(n), []).append(n)
    X = Counter()
    for p in sorted(classes):
        X.update({(n, n): 1 for n in classes[p]})
        i = 0
        while True:
            best: dict = {}
            for (n, l), c in X.items():
                if c > 0:
                    for m in [n] + nbrs[n]:
                        best[m] = min(best.get(m, l), l)
            fx = Counter({(n, l): 1 for n, l in best.items()})
            yield p, i, len(classes[p]) if i == 0 else 0, X, fx
            change = fx.copy()
            change.subtract(X)
            if not any(change.values()):
                break
            X, i = fx, i + 1


def _records(change: Counter) -> int:
    return sum(abs(v) for v in change.values())


def prioritized_rounds(edge_list, priority_of):
    """{(priority, iteration): records in difference} of prioritized label propagation's loop
    variable: a priority's seeds at (p, 0), then each round's change f(X) - X."""
    out = {}
    for p, i, seeds, X, fx in _prioritized_simulation(edge_list, priority_of):
        if seeds:
            out[(p, 0)] = seeds
        change = fx.copy()
        change.subtract(X)
        if any(change.values()):
            out[(p, i + 1)] = _records(change)
    return out


def prioritized_body_changes(edge_list, priority_of):
    """{(priority, iteration): records in difference of the loop body's output} (what the feedback
    carries: labels that change, seeds that lose at once counting nothing): each round's f(X)
    against the round before it, in lexicographic order."""
    out, before = {}, Counter()
    for p, i, _, _, fx in _prioritized_simulation(edge_list, priority_of):
        change = fx.copy()
        change.subtract(before)
        out[(p, i)] = _records(change)
        before = fx
    return out


# -- the programs, rebuilt through the public API ---------------------------------------------
def label_propagation(edges, deltas, priority=None):
    """The lessons' loop: seeds (node, node), body join + concat + min; the loop variable's
    updates go to deltas[time] through an inspect tap."""
    graph = edges.concat(edges.project(1, 0))
    seeds = graph.project(0).distinct().project(0, 0)

    def body(labels):
        labels.inspect(lambda r, t, d: deltas.setdefault(t, Counter()).update({r: d}))
        return labels.join(graph, select=(2, 1)).concat(labels).min()

    if priority is None:
        return seeds.iterate(body, name="cc")
    return seeds.prioritize(priority, body, name="cc")


def clean(deltas: dict) -> dict:
    out = {t: Counter({r: n for r, n in c.items() if n}) for t, c in deltas.items()}
    return {t: c for t, c in out.items() if c}


def collection_at(deltas, t, leq=lattice.leq) -> dict:
    total = Counter()
    for s, c in deltas.items():
        if leq(s, t):
            total.update(c)
    return {n: l for (n, l), k in total.items() if k}


def run_epochs(edge_sets_changes, priority=None):
    """A flow with the lessons' loop, stepped through [(inserts, removes), ...]."""
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    deltas: dict = {}
    view = label_propagation(edges, deltas, priority).view()
    for inserts, removes in edge_sets_changes:
        edges.insert(inserts)
        edges.remove(removes)
        flow.step()
    return flow, view, clean(deltas)


# -- conventions of these five lessons ----------------------------------------------------------
#: shared-decisions.md: which lesson defines which glossary term first.
GLOSSARY = {1: ["collection", "update", "difference", "epoch", "time", "trace"],
            2: ["iteration", "loop variable", "lattice", "ingress, feedback, egress"],
            4: ["arrangement", "interesting time"],
            5: ["priority", "lexicographic order"]}


@pytest.mark.parametrize("lesson", sorted(GLOSSARY))
def test_glossary_entries_where_shared_decisions_put_them(lesson):
    text = "\n".join(_source(c) for c in _cells(lesson) if c["cell_type"] == "markdown")
    for term in GLOSSARY[lesson]:
        assert re.search(rf"\*\*Glossary · {re.escape(term)}[ (.]", text), f"lesson {lesson}: no glossary entry for {term!r}"
    for other, terms in GLOSSARY.items():
        if other != lesson:
            for term in terms:
                assert f"**Glossary · {term}" not in text, f"lesson {lesson} redefines {term!r} (lesson {other} owns it)"


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_each_lesson_has_exercises_with_checks_and_a_widget(lesson):
    cells = _cells(lesson)
    start = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and "## Exercises" in _source(c))
    after = cells[start:]
    assert any(c["cell_type"] == "code" and ("assert" in _source(c) or "right" in _source(c)) for c in after), \
        f"lesson {lesson}: an exercise needs a check cell"
    assert any("Worked answer" in _source(c) for c in after if c["cell_type"] == "markdown"), \
        f"lesson {lesson}: give at least one worked answer"
    code = "\n".join(_source(c) for c in cells if c["cell_type"] == "code")
    assert re.search(r"\.observe\(|\.on_click\(", code), f"lesson {lesson}: no widget callback (observe/on_click)"
    assert "add_class(\"lesson-" in code, f"lesson {lesson}: tag the widget with a lesson-* class (the browser test finds it)"


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_no_links_to_deleted_notebooks_and_plain_means_plain(lesson):
    text = "\n".join(_source(c) for c in _cells(lesson))
    for old in OLD:
        assert old not in text, f"lesson {lesson} still names {old}"
    for call in re.findall(r"connected_components\(([^)]*)\)", text):
        assert "prioritized=" in call, f"lesson {lesson}: connected_components({call}) must say prioritized="


# -- Lesson 1: Figure 13 --------------------------------------------------------------------------
def _distinct_differences(epochs):
    flow = ddlab.Dataflow()
    xs = flow.input("records", columns=["record"])
    got = []
    xs.distinct().subscribe(lambda updates: got.append(Counter({r: d for r, _, d in updates})))
    for changes in epochs:
        xs.update(changes)
        flow.step()
    return got


def _recount(epochs):
    """Output differences of distinct from scratch: distinct(A[t]) - distinct(A[t-1])."""
    total, before, out = Counter(), Counter(), []
    for changes in epochs:
        for r, d in changes:
            total[r] += d
        now = Counter({r for r, n in total.items() if n > 0})
        diff = now.copy()
        diff.subtract(before)
        out.append(Counter({r: n for r, n in diff.items() if n}))
        before = now
    return out


def test_lesson1_figure13_distinct_equals_a_recount():
    epochs = _parameters(1)["FIGURE_13"]
    got = _distinct_differences(epochs)
    assert got == _recount(epochs)
    # the figure's story: +A +B +C at t=1, nothing at t=2 (one A of two left), -A at t=3
    assert got == [Counter(), Counter({"A": 1, "B": 1, "C": 1}), Counter(), Counter({"A": -1})]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from("ABCD"), st.sampled_from([1, 1, -1, 2])), max_size=5),
                min_size=1, max_size=6))
def test_lesson1_distinct_differences_equal_a_recount_on_any_changes(epochs):
    assert _distinct_differences(epochs) == _recount(epochs)


# -- Lesson 2: Figure 5 and the harness -------------------------------------------------------------
def test_lesson2_graph_meets_what_the_report_says():
    edges = _parameters(2)["EDGES"]
    nodes = {n for e in edges for n in e}
    assert nodes == {1, 2, 3, 4, 5, 6}
    assert (1, 3) in edges or (3, 1) in edges
    g = nx.Graph(edges)
    assert g.degree[1] >= 2 and g.degree[3] >= 2            # (1, 0) keeps every node after removing 1-3
    assert all(n > 3 for n in g[3] if n != 1)                 # node 3's label is 3 at (1, 1)


def test_lesson2_six_node_loop_converges_at_0_3_with_own_ids_at_0_0():
    edges = _parameters(2)["EDGES"]
    flow, view, deltas = run_epochs([(edges, [])])
    expected = propagate(edges, 8)
    assert collection_at(deltas, (0, 0)) == {n: n for n in expected[0]}
    for i in range(9):
        assert collection_at(deltas, (0, i)) == expected[i]
    assert max(deltas)[1] == 3 and sorted(deltas) == [(0, 0), (0, 1), (0, 2), (0, 3)]
    stats = flow.stats(epoch=0)
    assert sorted(set(stats.loc[stats["scope"] == "root/cc", "time"])) == [(0, i) for i in range(4)]
    components = {n: min(c) for c in nx.connected_components(nx.Graph(edges)) for n in c}
    assert view.to_dict() == {(n, l): 1 for n, l in components.items()}
    lib = ddlab.Dataflow()
    e = lib.input("edges", columns=["src", "dst"])
    lib_view = connected_components(e, prioritized=False).view()
    e.insert(edges)
    lib.step()
    assert lib_view.to_dict() == view.to_dict()


def test_lesson2_loop_variable_differences_follow_the_harness_formula():
    """delta X[(t, i)] = f^i(A) - f^(i-1)(A) (report, Section 5.1.1)."""
    edges = _parameters(2)["EDGES"]
    _, _, deltas = run_epochs([(edges, [])])
    expected = propagate(edges, 6)
    for i in range(7):
        formula = records(expected[i])
        formula.subtract(records(expected[i - 1]) if i else Counter())
        assert deltas.get((0, i), Counter()) == Counter({r: n for r, n in formula.items() if n})


def test_lesson2_ingress_sends_plus_a_at_0_and_minus_a_at_1():
    flow = ddlab.Dataflow()
    xs = flow.input("xs", columns=["x"])
    seen = Counter()

    def nothing(v):
        v.inspect(lambda r, t, d: seen.update({(r, t): d}))
        return v.filter(lambda r: False)

    out = xs.iterate(nothing).view()
    xs.insert(["a", "b"])
    flow.step()
    assert dict(seen) == {("a", (0, 0)): 1, ("b", (0, 0)): 1, ("a", (0, 1)): -1, ("b", (0, 1)): -1}
    assert out.to_dict() == {}
    ingress = flow.stats(epoch=0)
    assert ingress.loc[ingress["kind"] == "ingress", "out"].sum() == 4


# -- Lesson 3: Figure 7, Figures 14-15, CIDR (1, 1), Section 3.2 -------------------------------------
def _lesson3():
    p = _parameters(3)
    changes = [(p["EDGES"], []), ([], [p["REMOVED"]])] + ([([p["REMOVED"]], [])] if p["PUT_BACK"] else [])
    flow, view, deltas = run_epochs(changes)
    graphs = [p["EDGES"], [e for e in p["EDGES"] if e != p["REMOVED"]], p["EDGES"]][:len(changes)]
    return p, flow, view, deltas, graphs


def test_lesson3_removing_1_3_changes_node_3_at_1_1_and_almost_nothing_at_1_0():
    p, flow, _, deltas, graphs = _lesson3()
    assert p["REMOVED"] == (1, 3)
    for e, g in enumerate(graphs):
        scratch = propagate(g, p["GRID_ITERATIONS"])
        for i in range(p["GRID_ITERATIONS"]):
            assert collection_at(deltas, (e, i)) == scratch[i], (e, i)
    assert (1, 0) not in deltas                                  # the loop variable: no difference at (1, 0)
    assert collection_at(deltas, (0, 1))[3] == 1 and collection_at(deltas, (1, 1))[3] == 3
    assert deltas[(1, 1)] == Counter({(3, 1): -1, (3, 3): 1})
    stats = flow.stats()
    loop = stats[stats["scope"] == "root/cc"]
    at_10 = loop.loc[loop["time"] == (1, 0), "in"].sum()
    at_00 = loop.loc[loop["time"] == (0, 0), "in"].sum()
    assert 0 < at_10 <= 12 < at_00                                # only the removed edge's own updates


def test_lesson3_cells_that_work_after_convergence():
    p, flow, _, deltas, graphs = _lesson3()
    assert p["PUT_BACK"]

    def last_change(e):
        h = propagate(graphs[e], p["GRID_ITERATIONS"])
        return max([i for i in range(1, len(h)) if h[i] != h[i - 1]], default=0)

    after = sorted(t for t in deltas if t[1] > last_change(t[0]))
    assert after == [(2, 4), (2, 5)]
    # (2, 4) = lub((2, 0), (1, 4)), and the engine did work there (Figure 14's shading)
    assert lattice.lub((2, 0), (1, 4)) == (2, 4)
    work = flow.lattice("root/cc")
    assert int(work[(work["epoch"] == 2) & (work["iteration"] == 4)]["updates"].sum()) > 0


def test_lesson3_cidr_difference_at_1_1():
    _, _, _, deltas, _ = _lesson3()
    a11 = records(collection_at(deltas, (1, 1)))
    for s in [(0, 0), (0, 1), (1, 0)]:
        a11.subtract(deltas.get(s, Counter()))
    assert Counter({r: n for r, n in a11.items() if n}) == deltas[(1, 1)]
    assert not lattice.leq((0, 2), (1, 1))


def _three_strategies_by_hand(edges, removed, rounds=7):
    old, new = propagate(edges, rounds), propagate([e for e in edges if e != removed], rounds)
    out = []
    for i in range(rounds):
        pn, po = (new[i - 1], old[i - 1]) if i else ({}, {})
        out.append((signed_size((1, new[i]), (-1, pn)), signed_size((1, new[i]), (-1, old[i])),
                    signed_size((1, new[i]), (-1, pn), (-1, old[i]), (1, po))))
    return out


def test_lesson3_three_strategies_counted_from_the_engine():
    edges = _parameters(3)["EDGES"]
    for removed in edges:
        _, _, running = run_epochs([(edges, []), ([], [removed])])
        _, _, fresh = run_epochs([([e for e in edges if e != removed], [])])
        engine = []
        for i in range(7):
            restart = sum(abs(n) for n in fresh.get((0, i), Counter()).values())
            same = signed_size((1, collection_at(running, (1, i))), (-1, collection_at(running, (0, i))))
            grid = sum(abs(n) for n in running.get((1, i), Counter()).values())
            engine.append((restart, same, grid))
        assert engine == _three_strategies_by_hand(edges, removed), removed
    totals = [tuple(map(sum, zip(*_three_strategies_by_hand(edges, r)))) for r in edges]
    assert totals[edges.index((1, 3))] == (28, 12, 12)
    assert all(restart > max(same, grid) for restart, same, grid in totals)
    assert [r for r, t in zip(edges, totals) if t[2] == 0] == [(5, 6)]   # exercise 2's answer


# -- Lesson 4: Algorithm 1 ------------------------------------------------------------------------
def _algorithm1_namespace():
    ns: dict = {}
    exec(_tagged(4, "algorithm1"), ns)
    return ns


def _engine_min(epochs):
    """The engine's min on records (key, value) released at (epoch, delay) by a delay loop."""
    flow = ddlab.Dataflow()
    timed = flow.input("timed", columns=["key", "value", "delay"])
    seen = []

    def countdown(pending):
        released = pending.filter(lambda r: r[2] == 0).project(0, 1)
        released.min().inspect(lambda r, t, d: seen.append((r, t, d)))
        return pending.map(lambda r: (r[0], r[1], max(r[2] - 1, 0)))

    timed.iterate(countdown)
    for changes in epochs:
        timed.update(changes)
        flow.step()
    return seen


def _net(updates):
    total = Counter()
    for r, t, d in updates:
        total[(r, t)] += d
    return {k: n for k, n in total.items() if n}


@st.composite
def timed_epochs(draw):
    epochs, present = [], []
    for _ in range(draw(st.integers(1, 4))):
        changes = []
        for _ in range(draw(st.integers(1, 5))):
            if present and draw(st.booleans()):
                changes.append((present.pop(draw(st.integers(0, len(present) - 1))), -1))
            else:
                rec = (draw(st.integers(0, 2)), draw(st.integers(0, 5)), draw(st.integers(0, 3)))
                present.append(rec)
                changes.append((rec, 1))
        epochs.append(changes)
    return epochs


@settings(max_examples=60, deadline=None)
@given(timed_epochs())
def test_lesson4_algorithm1_min_equals_the_engines_min(epochs):
    ns = _algorithm1_namespace()
    plain, mine = ns["PlainMin"](), []
    for e, changes in enumerate(epochs):
        mine += plain.update([((k, v), (e, d), diff) for (k, v, d), diff in changes])
    assert _net(mine) == _net(_engine_min(epochs))


def _brute_force_lubs(old, new):
    out = set()
    pool = sorted(set(old) | set(new))
    for r in range(1, len(pool) + 1):
        for subset in itertools.combinations(pool, r):
            if any(s in new for s in subset):
                t = subset[0]
                for s in subset[1:]:
                    t = lattice.lub(t, s)
                out.add(t)
    return sorted(out)


@settings(max_examples=80, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=5),
       st.sets(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=3))
def test_lesson4_interesting_times_are_the_lubs_of_subsets_with_a_new_time(old, new):
    ns = _algorithm1_namespace()
    assert ns["interesting_times"](old, new) == _brute_force_lubs(old, new)


def test_lesson4_algorithm1_at_interesting_times_equals_every_time_of_the_grid():
    """Restricting Algorithm 1 to interesting times changes nothing: compare with evaluating
    equation 9 at every time of a bounding grid (the report's Figure 18, literally)."""
    ns = _algorithm1_namespace()
    rng = np.random.default_rng(4)
    for _ in range(30):
        dA = {(int(a), int(b)): Counter({int(v): 1}) for a, b, v in rng.integers(0, 4, size=(4, 3))}
        da = {(int(a), int(b)): Counter({int(v): int(rng.choice([-1, 1]))}) for a, b, v in rng.integers(0, 4, size=(2, 3))}
        fast = ns["algorithm1"](dA, da)
        slow = {}
        for t in sorted(itertools.product(range(4), range(4))):
            before = ns["accumulate"](dA, t)
            after = before.copy()
            after.update(ns["accumulate"](da, t))
            change = ns["min_of"](after)
            change.subtract(ns["min_of"](before))
            for s, d in slow.items():
                if lattice.leq(s, t):
                    change.subtract(d)
            change = Counter({r: n for r, n in change.items() if n})
            if change:
                slow[t] = change
        assert fast == slow


def test_lesson4_join_is_three_terms():
    """The engine's join output in a second epoch = A⋈b + a⋈B + a⋈b, at lubs of times."""
    rng = np.random.default_rng(7)
    for _ in range(10):
        left0, right0 = rng.integers(0, 4, size=(6, 2)), rng.integers(0, 4, size=(6, 2))
        left1, right1 = rng.integers(0, 4, size=(3, 2)), rng.integers(0, 4, size=(3, 2))
        flow = ddlab.Dataflow()
        a, b = flow.input("a", columns=["k", "x"]), flow.input("b", columns=["k", "y"])
        got = []
        a.join(b).subscribe(lambda u: got.append(u))
        a.insert([tuple(map(int, r)) for r in left0]); b.insert([tuple(map(int, r)) for r in right0]); flow.step()
        a.insert([tuple(map(int, r)) for r in left1]); b.remove([tuple(map(int, r)) for r in right1]); flow.step()

        def j(x, y, sign):
            out = Counter()
            for k1, v in x:
                for k2, w in y:
                    if k1 == k2:
                        out[(k1, v, w)] += sign
            return out

        A, B = [tuple(map(int, r)) for r in left0], [tuple(map(int, r)) for r in right0]
        da, db = [tuple(map(int, r)) for r in left1], [tuple(map(int, r)) for r in right1]
        expected = Counter()
        for term in (j(A, db, -1), j(da, B, 1), j(da, db, -1)):
            for k, n in term.items():
                expected[k] += n
        engine = Counter()
        for r, t, d in got[1]:
            engine[r] += d
        assert {k: n for k, n in engine.items() if n} == {k: n for k, n in expected.items() if n}


# -- Lesson 5: Figures 11 and 12 ---------------------------------------------------------------------
def test_lesson5_figure11_label_as_priority():
    edges = _parameters(5)["EDGES"]
    pflow, pview, prio = run_epochs([(edges, [])], priority=1)
    flow, view, plain = run_epochs([(edges, [])])
    assert pview.to_dict() == view.to_dict()
    assert prio[(0, (2, 0))] == Counter({(2, 2): 1})              # "label 2 is introduced at (0, 2, 0)"
    assert {t[1]: sum(abs(n) for n in c.values()) for t, c in prio.items()} == \
        prioritized_rounds(edges, lambda label: label)
    versions = lambda d: sum(n for c in d.values() for n in c.values() if n > 0)
    assert versions(prio) < versions(plain)                       # fewer label versions ...
    rounds = lambda f: len(set(f.stats(epoch=0).query("scope == 'root/cc'")["time"]))
    assert rounds(pflow) > rounds(flow)                           # ... in more rounds


def test_lesson5_lexicographic_versus_product_order_at_2_0():
    edges = _parameters(5)["EDGES"]
    _, _, prio = run_epochs([(edges, [])], priority=1)
    lex = lambda s, t: s[0] <= t[0] and s[1] <= t[1]
    product = lambda s, t: s[0] <= t[0] and lattice.leq(s[1], t[1])
    fixed_point_of_1 = {n: 1 for n in range(1, 7)}
    held = Counter()
    for s, c in prio.items():
        if lex(s, (0, (2, 0))):
            held.update(c)
    assert sorted(r for r, n in held.items() if n) == sorted(list(fixed_point_of_1.items()) + [(2, 2)])
    assert collection_at(prio, (0, (2, 0)), product) != fixed_point_of_1


def _figure12_namespace(nodes=600, edges_per_node=8.4, seed=3):
    p = _parameters(5)
    assert p["SCALE"] == "ci" and p["EDGES_PER_NODE"] == 8.4
    ns: dict = dict(np=np, pd=pd, ddlab=ddlab, time=__import__("time"), Counter=Counter)
    exec(_tagged(5, "figure12"), ns)
    ns["amazon_like"] = ns["random_graph"](nodes, int(nodes * edges_per_node), seed)
    return ns


def test_lesson5_scales_match_the_amazon_graph():
    """SCALE="paper" is the Amazon graph's size (SNAP amazon0601, the report's ~400k nodes and
    3.4M edges); the CI scale keeps its density."""
    src = next(_source(c) for c in _cells(5) if _source(c).startswith("NODES ="))
    sizes = "\n".join(line for line in src.splitlines() if line.startswith(("NODES =", "EDGE_COUNT =")))
    for scale in ("paper", "ci"):
        ns = {**_parameters(5), "SCALE": scale}
        exec(sizes, ns)
        if scale == "paper":
            assert (ns["NODES"], ns["EDGE_COUNT"]) == (403_394, 3_387_388)
        assert abs(ns["EDGE_COUNT"] / ns["NODES"] - 3_387_388 / 403_394) < 0.01


def test_lesson5_figure12_lines_use_one_metric():
    """Both counts of Figure 12 (and of the plain loop, Figure 6), per round, from the notebook's
    own measuring code, each equal to an independent computation: the loop variable's records in
    difference and the labels that change (the body's output); the baseline is the plain loop's
    first iteration (one record per node) in both."""
    ns = _figure12_namespace()
    graph = ns["amazon_like"]
    edge_list = list(map(tuple, graph[["src", "dst"]].to_numpy().tolist()))
    plain, plain_labels, _ = ns["per_round"](None)
    counts, expected_labels = [], propagate(edge_list, 50)
    for i, labels in enumerate(expected_labels):
        if i and labels == expected_labels[i - 1]:
            break
        counts.append(signed_size((1, labels), (-1, expected_labels[i - 1] if i else {})))
    assert plain["records"].tolist() == counts
    assert plain["records"].iloc[0] == len({n for e in edge_list for n in e})   # the baseline
    body = [signed_size((1, expected_labels[i + 1]), (-1, expected_labels[i] if i else {}))
            for i in range(len(plain))]
    assert plain["labels changed"].tolist() == body                   # what the feedback carries
    assert plain["labels changed"].iloc[0] == plain["records"].iloc[0]        # one baseline for both counts
    for name, fn in ns["PRIORITIES"].items():
        if fn is None:
            continue
        frame, labels, _ = ns["per_round"](fn)
        assert labels == plain_labels
        priority_of = lambda label, fn=fn: int(fn(np.array([label]), np.array([label]))[0])
        engine = {t[1]: n for t, n in zip(frame["time"], frame["records"]) if n}
        assert engine == prioritized_rounds(edge_list, priority_of), name
        changes = {t[1]: n for t, n in zip(frame["time"], frame["labels changed"]) if n}
        assert changes == {t: n for t, n in prioritized_body_changes(edge_list, priority_of).items() if n}, name
        assert frame["seconds"].notna().all() and list(frame["round"]) == list(range(len(frame)))


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_links_between_lessons_resolve(lesson):
    text = "\n".join(_source(c) for c in _cells(lesson) if c["cell_type"] == "markdown")
    links = re.findall(r"\]\(([^)#]+\.ipynb)", text)
    assert lesson == 1 or links, f"lesson {lesson} links back to no earlier lesson"
    for target in links:
        assert (NOTEBOOKS / target).exists(), f"lesson {lesson} links to {target}, which does not exist"
