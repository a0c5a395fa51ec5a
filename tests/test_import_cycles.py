"""No import cycle inside ``ddlab.engine`` or ``ddlab.sources``.

Why: a cycle is held together by imports hidden inside functions (or by import order), so a
module cannot be read, tested or moved on its own, and a new import in the wrong place breaks
``import ddlab``.  The graph is read from the sources (the AST), with every import a module
executes: top-level ones and those inside functions (a function-local import is still an
edge; hiding one does not end a cycle), but not those under ``if TYPE_CHECKING``.  Importing
``a.b.c`` also runs the ``__init__`` of each package on the way that the importer is not
already inside (``a.b`` from ``x.y``), so that is an edge too.
"""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]        # the checkout is the ddlab package
CHECKED = ("ddlab.engine", "ddlab.sources")


def module_files(root: Path = ROOT) -> dict:
    """``{module name: path}`` of the package's modules (tests, notebooks, benchmarks out)."""
    out = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if rel.parts[0] in ("tests", "notebooks", "benchmarks", "binder") or \
                any(p.startswith(".") or p == "__pycache__" for p in rel.parts):
            continue
        parts = ["ddlab", *rel.with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking_only(node, parents) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imported(name: str, path: Path, modules: dict) -> set:
    """The package modules ``name`` (at ``path``) imports, with the packages whose
    ``__init__`` each import runs."""
    tree = ast.parse(path.read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    targets = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module
                     for a in node.names]
        elif isinstance(node, ast.Import):
            found = [a.name for a in node.names]
        else:
            continue
        if _type_checking_only(node, parents):
            continue
        for target in found:
            parts = target.split(".")
            for n in range(1, len(parts) + 1):   # the packages on the way, then the module
                step = ".".join(parts[:n])
                if step in modules and step != name and not name.startswith(step + "."):
                    targets.add(step)
    return targets


def import_graph(root: Path = ROOT) -> nx.DiGraph:
    modules = module_files(root)
    graph = nx.DiGraph()
    for name, path in modules.items():
        graph.add_node(name)
        graph.add_edges_from((name, target) for target in imported(name, path, modules))
    return graph


def cycles(root: Path = ROOT) -> list:
    """Each group of engine or sources modules that import each other (round and round)."""
    graph = import_graph(root)
    checked = graph.subgraph(n for n in graph if n.startswith(CHECKED))
    return sorted(sorted(c) for c in nx.strongly_connected_components(checked) if len(c) > 1)


def test_no_import_cycle_in_the_engine_or_the_sources():
    found = cycles()
    assert not found, "modules importing each other:\n" + "\n".join(map(str, found))


def test_the_graph_sees_function_local_imports_and_packages_on_the_way(tmp_path):
    """The check could fail: a cycle closed by an import inside a function is found, and so
    is one closed by a package ``__init__`` its import runs."""
    engine = tmp_path / "engine"
    (engine / "sub").mkdir(parents=True)
    (tmp_path / "__init__.py").write_text("")
    (engine / "__init__.py").write_text("")
    (engine / "a.py").write_text("from .b import f\n")
    (engine / "b.py").write_text("def f():\n    from .a import g\n")
    (engine / "sub" / "__init__.py").write_text("from ..c import h\n")
    (engine / "sub" / "leaf.py").write_text("X = 1\n")
    (engine / "c.py").write_text("from .sub.leaf import X\n")
    (engine / "d.py").write_text("from typing import TYPE_CHECKING\n"
                                 "if TYPE_CHECKING:\n    from .e import Y\n")
    (engine / "e.py").write_text("from .d import Z\n")
    assert cycles(tmp_path) == [["ddlab.engine.a", "ddlab.engine.b"],
                                ["ddlab.engine.c", "ddlab.engine.sub"]]
