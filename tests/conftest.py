"""Shared test configuration: hypothesis profiles (CI runs the same number of examples), the
``spark``, ``browser`` and ``notebooks`` markers given by what a test needs, and the Spark
session fixture.  Markers (CONTRIBUTING.md): ``python -m pytest -m "not (slow or spark or
browser or notebooks)"`` is the fast inner loop; ``python -m pytest`` runs everything."""
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
import session_archive
from executed import keep_nbmake_runs, share_runs
from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=40, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=300, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("DDLAB_HYPOTHESIS_PROFILE", "default"))

# The local Spark JVM's class archive (sources/jvm_archive.py): a session that will run Spark
# tests records one (Spark's start and a small job: 39 s) in the foreground before its first
# test (pytest_runtest_setup), and every JVM the suite starts (each notebook's, each README
# snippet's, each subprocess's) maps it: Spark's start and CollegeMsg's load measured 18.0 s
# without it and 12.4 s with it.  Until then, and in a session without Spark tests,
# nothing is mapped or built; DDLAB_JVM_ARCHIVE set by the caller is left as it is.
_ARCHIVE_CHOSEN = "DDLAB_JVM_ARCHIVE" in os.environ
_ARCHIVE_DIR = pytest.StashKey[str]()
_ARCHIVE_TRIED = pytest.StashKey[bool]()
os.environ.setdefault("DDLAB_JVM_ARCHIVE", "0")


#: what a notebook's code cells call when they need Spark (loaders, windows, the stateless
#: baseline, a %dd input that reads a dataset, a file or SQL)
_SPARK_CALLS = re.compile(r"\b(load_dataset|load_events|window_batches|stateless_cc|get_spark)\s*\("
                          r"|^\s*%dd input\b.*--(from|sql)\b", re.M)
_UI = Path(__file__).parent / "ui"
_NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

# nbmake's notebook runs keep what they executed, for the tests that read it (the claims test,
# the exported-figures test): no notebook runs twice in one session
keep_nbmake_runs()


def pytest_runtest_setup(item):
    """Before a test process's first Spark test: the JVM archive (below)."""
    if item.get_closest_marker("spark") is not None:
        _record_jvm_archive(item.session)


def _record_jvm_archive(session):
    """Record the JVM's class archive before the first Spark test of this process (see above;
    with several test processes, the one that runs the Spark tests), in a folder of this
    process's own, removed at its end (an archive is named after pyspark's folder, so a fresh
    venv's would otherwise leave 150 MB in the cache at every run)."""
    if _ARCHIVE_CHOSEN or "DDLAB_JVM_ARCHIVE_DIR" in os.environ or _ARCHIVE_TRIED in session.stash:
        return
    session.stash[_ARCHIVE_TRIED] = True
    from ddlab.sources import spark_status

    ok, _ = spark_status()
    if not ok:
        return
    folder = tempfile.mkdtemp(prefix="ddlab-test-jvm-")
    session.config.stash[_ARCHIVE_DIR] = folder
    # the compiled kernels are loaded (compiled, on a cold cache: 40 s in a new clone) while
    # the recording JVM runs, instead of after it (_compiled_kernels)
    done = session_archive.record_for_session(Path(folder), meanwhile=_warm_up_kernels)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        said = (f"recorded in {folder}" if done.returncode == 0 and done.left
                else f"none ({(done.stderr.strip() or 'no archive written')[-300:]})")
        reporter.write_line(f"ddlab: JVM class archive for this session's Spark starts: {said}")
    os.environ["DDLAB_JVM_ARCHIVE_DIR"] = folder
    del os.environ["DDLAB_JVM_ARCHIVE"]  # unset: mapped when there, never built on its own


def pytest_unconfigure(config):
    folder = config.stash.get(_ARCHIVE_DIR, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def notebook_uses_spark(path: Path) -> bool:
    """Whether a notebook's code calls into Spark (read from the file: lessons added or
    renamed are marked without a list to keep)."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    code = "\n".join("".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code")
    return bool(_SPARK_CALLS.search(code))


@pytest.hookimpl(tryfirst=True)   # before xdist's, which reads the groups given here (_groups)
def pytest_collection_modifyitems(config, items):
    """Markers from what a test needs: ``notebooks`` for every notebook nbmake runs (and
    ``spark`` when it calls Spark), the same for a test that reads an executed notebook,
    ``browser`` (and ``spark``: it runs the demo) for the browser test, ``spark`` for every
    test using the ``spark`` fixture; a test that reads an executed notebook right after that
    notebook's nbmake item (so it reads that run), the browser tests at the end."""
    spark_notebooks: dict = {}

    def mark_as_notebook(item, path):
        item.add_marker(pytest.mark.notebooks)
        if path not in spark_notebooks:
            spark_notebooks[path] = notebook_uses_spark(path)
        if spark_notebooks[path]:
            item.add_marker(pytest.mark.spark)

    readers = {}
    for item in items:
        path = Path(str(item.path))
        if path.suffix == ".ipynb":
            mark_as_notebook(item, path)
        param = getattr(getattr(item, "function", None), "reads_notebook", None)
        if param and hasattr(item, "callspec"):
            notebook = (_NOTEBOOKS / item.callspec.params[param]).resolve()
            mark_as_notebook(item, notebook)
            readers.setdefault(notebook, []).append(item)
        elif _UI in path.parents:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.spark)
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
    # The browser tests last (in their process, see _groups): pytest-playwright's
    # session-scoped sync API keeps an asyncio loop running in the main thread until the
    # session ends, and tests after it would then see a kernel-like running loop (the explorer
    # defers its references; asyncio.run refuses).
    if readers:
        moved = {id(item) for group in readers.values() for item in group}
        ordered = []
        for item in items:
            if id(item) in moved:
                continue
            ordered.append(item)
            if getattr(item, "nbmake", False):
                ordered.extend(readers.pop(Path(str(item.path)).resolve(), []))
        ordered.extend(item for group in readers.values() for item in group)   # notebook not selected
        items[:] = ordered
    items.sort(key=lambda item: _UI in Path(str(item.path)).parents)
    _groups(items)


def _groups(items):
    """With several test processes (pytest-xdist's ``-n auto`` in pyproject, ``--dist
    loadgroup``, groups taken in this order): the notebooks with the tests that read them go
    together to one process, in the order above (a notebook's readers right after it, so they
    read its run); the other Spark tests together to one (one Spark session); these two first,
    since they take longest; the browser tests together, last, so nothing runs after them in
    their process.  Everything else is spread over the processes."""
    groups: dict[str, list] = {"notebooks": [], "spark": [], "rest": [], "browser": []}
    for item in items:
        if _UI in Path(str(item.path)).parents:
            group = "browser"
        elif item.get_closest_marker("notebooks"):
            group = "notebooks"
        elif item.get_closest_marker("spark"):
            group = "spark"
        else:
            groups["rest"].append(item)
            continue
        item.add_marker(pytest.mark.xdist_group(group))
        groups[group].append(item)
    items[:] = [item for group in groups.values() for item in group]


class _GroupSuffix:
    """pytest-xdist 3.8 puts a test's group into its node id (``path::test@group``), the
    scheduler's only way to see it, by setting ``item._nodeid``; from pytest 9.2 the node id is
    ``item._id`` and that assignment changes nothing, so every group is silently split.  Run
    after xdist's hook, this sets the suffix where it did not stick."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        if not config.getvalue("loadgroup"):
            return
        try:
            from _pytest.nodeid import NodeId
        except ImportError:      # pytest before 9.2: xdist's own suffix works
            return
        for item in items:
            names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                            for m in item.iter_markers("xdist_group")})
            if names and "@" not in item.nodeid and hasattr(item, "_id"):
                item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")


def pytest_collection_finish(session):
    """With several test processes: the executed notebooks go to a folder they share (the
    session's base temporary folder, which pytest removes in later runs), so that a test in
    another process than the notebooks' reads their runs instead of executing them again
    (``tests/support/executed.py``)."""
    workerinput = getattr(session.config, "workerinput", None)
    if not workerinput or workerinput.get("workercount", 1) < 2:
        return
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None:
        return
    notebooks = {Path(str(item.path)) for item in session.items if Path(str(item.path)).suffix == ".ipynb"}
    share_runs(factory.getbasetemp().parent / "executed-notebooks", notebooks)


def pytest_configure(config):
    if hasattr(config, "workerinput"):   # an xdist test process: it reports the node ids
        config.pluginmanager.register(_GroupSuffix(), "ddlab-group-suffix")


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: a test process per core, at most four (the Spark and notebook tests and the
    browser tests run in one process each; more processes would only hold memory)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(4, cores or 1))


@pytest.fixture(scope="session")
def spark():
    """One local[2] Spark session for the whole run (Spark allows one per process), with Arrow
    fallback off so Arrow problems fail loudly; skips with the reason when Spark is unusable."""
    pytest.importorskip("pyspark", reason="the Spark tests need pyspark (pip install 'ddlab[spark]')")
    from ddlab.sources import session

    try:
        session.check_java()
    except session.SparkUnavailable as exc:
        pytest.skip(f"the Spark tests need Java 17+: {exc}")
    spark = session.get_spark(
        master="local[2]",
        config={
            "spark.sql.execution.arrow.pyspark.fallback.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
        },
    )
    yield spark
    session.stop_spark()


def _warm_up_kernels():
    from ddlab.engine import kernels

    kernels.warm_up()


@pytest.fixture(scope="session", autouse=True)
def _compiled_kernels():
    """The compiled kernels loaded (compiled here if the cache is cold) before any test runs,
    so a test of the kernel path never runs the numpy path while a background compilation is
    under way (the engine's behaviour for users, see ddlab.engine.kernels).  A session that
    records the JVM archive has loaded them already, during the recording."""
    _warm_up_kernels()
