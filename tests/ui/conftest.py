"""Fixtures for the real-browser tests: Debian's Chromium and a throwaway local JupyterLab.

Why this way: the notebooks are the product's front door, and only a browser shows whether the
widgets and the bokeh plots render and respond.  Playwright drives the system Chromium
(``/usr/bin/chromium``, or ``$CHROMIUM``), never a browser of its own download.  JupyterLab runs
on a free loopback port with its own config, data, runtime and IPython dirs, so nothing of the
user's set-up leaks in, and it serves a copy of the notebook, so running it never writes outputs
into the repository.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def _find_chromium() -> str | None:
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def _install_chromium() -> str | None:
    """Debian's chromium package (as root only); None when it cannot be installed."""
    if os.name != "posix" or os.geteuid() != 0 or not shutil.which("apt-get"):
        return None
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "chromium"]):
        try:
            subprocess.run(cmd, env=env, check=True, timeout=600, capture_output=True)
        except (subprocess.SubprocessError, OSError):
            return None
    return _find_chromium()


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """The system Chromium, installed with apt-get when missing and running as root."""
    pytest.importorskip("playwright", reason="the browser tests need playwright (pip install -e '.[test]')")
    path = _find_chromium() or _install_chromium()
    if path is None:
        pytest.skip("no Chromium: install Debian's chromium package (apt-get install -y chromium) or set CHROMIUM")
    return path


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args, chromium_path):
    """pytest-playwright's launch arguments, pointed at the system Chromium, quiet on the network."""
    return {**browser_type_launch_args, "executable_path": chromium_path, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Where the browser tests leave screenshots (git-ignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab: ``url(path)`` gives an authenticated address of a notebook."""

    def __init__(self, base: str, token: str, root: Path, log: Path):
        self.base, self.token, self.root, self.log = base, token, root, log

    def url(self, notebook: str) -> str:
        return f"{self.base}/lab/tree/{notebook}?token={self.token}&reset"

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture(scope="session")
def lab(tmp_path_factory, chromium_path) -> Lab:
    """JupyterLab on a free loopback port, serving a copy of notebooks/ from a temp dir."""
    pytest.importorskip("jupyterlab", reason="the browser tests need JupyterLab (pip install -e '.[test]')")
    home = tmp_path_factory.mktemp("lab")
    root = home / "notebooks"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    dirs = {name: home / name.lower() for name in
            ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR")}
    for path in dirs.values():
        path.mkdir()
    # No "official Jupyter news?" toast, no update checks (there is no network to ask).
    settings = dirs["JUPYTER_CONFIG_DIR"] / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    # Every cell rendered whether in view or not (JupyterLab skips off-screen cells by
    # default), so what a test sees does not depend on where Run All left the scroll.
    notebook = settings.parent / "notebook-extension"
    notebook.mkdir(parents=True)
    (notebook / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    env = {
        **os.environ, **{k: str(v) for k, v in dirs.items()},
        "JUPYTER_PLATFORM_DIRS": "1", "BOKEH_RESOURCES": "inline", "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable, "PYTHONUNBUFFERED": "1",
        # the notebooks' caches (window batches) start empty and stay out of the user's home;
        # no JVM class archive is used or built: the demo's cold run is a machine's first
        "DDLAB_CACHE_DIR": str(home / "cache"), "DDLAB_JVM_ARCHIVE": "0",
    }
    port, token = _free_port(), secrets.token_hex(16)
    log = home / "lab.log"
    cmd = [
        sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
        f"--port={port}", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        "--expose-app-in-browser", "--LabApp.extension_manager=readonly",
        "--ServerApp.port_retries=0",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"JupyterLab did not answer within 90 s:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.5)
        yield Lab(base, token, root, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    """pytest-playwright's page settings: a window the explorer fits in."""
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1100}}


#: The one browser error that is not the page's own: jupyter_bokeh's view (``BokehView.render``)
#: clears its bokeh document when the widget's ``render_bundle`` changes, and when that document's
#: first render is still under way, the abandoned render reads the cleared document and bokehjs
#: throws "configuration is missing" (an unhandled rejection; the new render draws the plot, which
#: the tests check by screenshot).  ``widgets/snapshot_updates.py`` changes ``render_bundle`` at
#: the end of a cell that changed a plot, so a slow browser meets it: one clean-clone CI run in
#: three (2026-11-27), lesson 2, whose next cell moves the slider it just displayed.
ABANDONED_BOKEH_RENDER = "configuration is missing"


def watch_console(page) -> list[str]:
    """The page's console errors and uncaught errors from now on, as they come (the list
    fills while the test runs), less the abandoned bokeh render (:data:`ABANDONED_BOKEH_RENDER`)."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}")
            if str(e) != ABANDONED_BOKEH_RENDER else None)
    return errors


def wait_for(page, script: str, timeout_s: float, what: str):
    """Poll ``script`` in the page until it returns something truthy (returned), or fail
    naming ``what``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = page.evaluate(script)
        if value:
            return value
        page.wait_for_timeout(200)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")


#: JS: whether the open notebook's kernel is idle (read from JupyterLab itself, which the lab
#: fixture starts with --expose-app-in-browser)
KERNEL_IDLE = """() => {
  const nb = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = nb && nb.sessionContext && nb.sessionContext.session && nb.sessionContext.session.kernel;
  return !!(kernel && kernel.status === 'idle' && nb.context.isReady);
}"""


# JS: the open notebook's state, read from JupyterLab itself (--expose-app-in-browser): done
# or not, and its errors, which include IPython's UsageError (a magic prints it on stderr).
RUN_STATE = """() => {
  const nb = window.jupyterapp.shell.currentWidget;
  const kernel = nb.sessionContext.session && nb.sessionContext.session.kernel;
  const cells = nb.content.widgets.filter(c => c.model.type === 'code');
  const errors = [];
  cells.forEach((c, i) => c.model.outputs.toJSON().forEach(o => {
    if (o.output_type === 'error') errors.push(`code cell ${i}: ${o.ename}: ${o.evalue}`);
    const text = Array.isArray(o.text) ? o.text.join('') : (o.text || '');
    if (o.output_type === 'stream' && o.name === 'stderr' && /Error/.test(text)) errors.push(`code cell ${i}: ${text}`);
  }));
  const done = cells.every(c => c.model.executionCount !== null && c.model.executionState !== 'running');
  return {errors, done: done && !!kernel && kernel.status === 'idle',
          executed: cells.filter(c => c.model.executionCount !== null).length, total: cells.length};
}"""
