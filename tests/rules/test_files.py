"""Soufflé's file IO and types: a program runs unchanged beside its facts folder.

``.input`` reads ``<facts_dir>/<name>.facts`` (or its options' file: delimiter, headers,
rfc4180 quoting, gzip), ``.output`` relations are written as Soufflé writes them; ``.type``
subtypes and unions resolve to their base types (checked on constants, used to read files);
relations with no fields.  Expected outputs come from clingo or plain Python."""
from __future__ import annotations

import csv
import gzip
import random

import pytest

import ddlab
from ddlab.engine.rules import RulesError, RulesTypeError, UnsupportedError

clingo = pytest.importorskip("clingo", reason="clingo is in the test extra")

# Soufflé's tutorial style: types, declarations, IO directives, comments
PROGRAM = """
// reachability over typed nodes
.type Node <: number
.type Name <: symbol
.type Label = Name | Tag
.type Tag <: symbol

.decl edge(x: Node, y: Node)
.input edge
.decl label(n: Node, l: Label)
.input label(IO=file, filename="labels.csv", delimiter=",", headers=true)
.decl root(n: Node)
.input root
.decl reach(n: Node)
.output reach
.decl named(n: Node, l: Label)
.output named(IO=file, filename="named.tsv")
.decl Reachable()
.output Reachable

reach(x) :- root(x).
reach(y) :- reach(x), edge(x, y).
named(n, l) :- reach(n), label(n, l).
Reachable() :- reach(_).
"""


def _write(folder, edges, labels, roots):
    (folder / "edge.facts").write_text("".join(f"{a}\t{b}\n" for a, b in edges))
    (folder / "labels.csv").write_text("node,label\n" + "".join(f"{n},{lab}\n"
                                                                for n, lab in labels))
    (folder / "root.facts").write_text("".join(f"{r}\n" for r in roots))


def _clingo_reach(edges, roots) -> set:
    ctl = clingo.Control()
    facts = "".join(f"edge({a},{b})." for a, b in edges) + "".join(f"root({r})." for r in roots)
    ctl.add("base", [], facts + "reach(X) :- root(X). reach(Y) :- reach(X), edge(X,Y).")
    ctl.ground([("base", [])])
    out = set()
    ctl.solve(on_model=lambda m: out.update(s.arguments[0].number for s in m.symbols(atoms=True)
                                            if s.name == "reach"))
    return out


def test_a_souffle_program_runs_unchanged_from_its_facts_folder(tmp_path):
    rng = random.Random(4)
    edges = sorted({(rng.randrange(20), rng.randrange(20)) for _ in range(35)})
    labels = [(n, f"n{n}") for n in range(0, 20, 3)]
    _write(tmp_path, edges, labels, [0, 7])
    out = tmp_path / "out"
    p = ddlab.rules(PROGRAM, facts_dir=tmp_path, output_dir=out)
    p.flow.step()
    written = sorted(path.name for path in p.write_outputs())
    assert written == ["Reachable.csv", "named.tsv", "reach.csv"]
    reach = _clingo_reach(edges, [0, 7])
    assert (out / "reach.csv").read_text() == "".join(f"{n}\n" for n in sorted(reach))
    assert (out / "named.tsv").read_text() == "".join(
        f"{n}\t{lab}\n" for n, lab in sorted(labels) if n in reach)
    assert (out / "Reachable.csv").read_text() == "()\n"
    # the files' relations are input collections: an update changes the outputs incrementally
    p.file_inputs["root"].remove([0, 7])
    p.flow.step()
    p.write_outputs()
    assert (out / "reach.csv").read_text() == "" and (out / "Reachable.csv").read_text() == ""


def test_csv_options_rfc4180_and_gzip(tmp_path):
    rows = [(1, "plain"), (2, "with, comma"), (3, 'a "quote"')]
    with gzip.open(tmp_path / "t.csv.gz", "wt", newline="") as fh:
        fh.write('id,text\n1,plain\n2,"with, comma"\n3,"a ""quote"""\n')
    p = ddlab.rules('.decl t(id: number, text: symbol)\n'
                    '.input t(IO=file, filename="t.csv.gz", delimiter=",", headers=true, '
                    'rfc4180=true)\n.decl long(id: number, text: symbol)\n'
                    'long(i, s) :- t(i, s), strlen(s) > 5.\n'
                    '.output long(IO=file, filename="long.csv", delimiter=",", rfc4180=true, '
                    'headers=true)', facts_dir=tmp_path, output_dir=tmp_path)
    p.flow.step()
    p.write_outputs()
    with open(tmp_path / "long.csv", newline="") as fh:
        got = list(csv.reader(fh))
    assert got == [["id", "text"]] + [[str(i), s] for i, s in rows if len(s) > 5]
    assert '"with, comma"' in (tmp_path / "long.csv").read_text()


def test_a_missing_file_and_a_bad_value_are_rules_errors(tmp_path):
    with pytest.raises(RulesError, match="no file .*edge.facts") as info:
        ddlab.rules(".decl edge(a: number, b: number)\n.input edge\nr(x) :- edge(x, _).",
                    facts_dir=tmp_path)
    assert info.value.line == 2
    (tmp_path / "edge.facts").write_text("1\t2\n3\tx\n")
    with pytest.raises(RulesTypeError, match=r"edge.facts, line 2: 'x' is not a number"):
        ddlab.rules(".decl edge(a: number, b: number)\n.input edge\nr(x) :- edge(x, _).",
                    facts_dir=tmp_path)
    (tmp_path / "edge.facts").write_text("1,2\n")
    with pytest.raises(RulesError, match="(?s)1 field.*delimiter"):
        ddlab.rules(".decl edge(a: number, b: number)\n.input edge\nr(x) :- edge(x, _).",
                    facts_dir=tmp_path)


def test_unsupported_io_is_refused_by_name(tmp_path):
    with pytest.raises(UnsupportedError, match="IO=sqlite is not supported"):
        ddlab.rules(".decl e(a: number)\n.input e(IO=sqlite, dbname=\"x\")\nr(x) :- e(x).",
                    facts_dir=tmp_path)


def test_subtypes_and_unions_are_checked_on_constants():
    flow = ddlab.Dataflow()
    with pytest.raises(RulesTypeError, match="1 is a number but field l of p is a symbol"):
        ddlab.rules(".type Name <: symbol\n.type L = Name | Name\n.decl p(l: L)\np(1).",
                    flow=flow)
    with pytest.raises(RulesTypeError, match="mixes types of different bases"):
        ddlab.rules(".type A <: symbol\n.type B <: number\n.type U = A | B\n.decl p(u: U)\n"
                    "p(1).", flow=flow)
    p = ddlab.rules(".type Weight <: float\n.decl w(x: Weight)\nw(1).\nw(2.5).", flow=flow)
    view = p["w"].view()
    flow.step()
    assert view.to_dict() == {1.0: 1, 2.5: 1}


def test_stdout_output_prints_like_souffle(capsys):
    flow = ddlab.Dataflow()
    p = ddlab.rules(".decl r(x: number)\nr(2).\nr(1).\n.output r(IO=stdout)", flow=flow)
    flow.step()
    assert p.write_outputs() == []
    assert capsys.readouterr().out == "---------------\nr\n===============\n1\n2\n===============\n"
