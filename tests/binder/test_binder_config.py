"""The Binder set-up (binder/, repo2docker's format) agrees with pyproject.toml.

Why: a binder/ folder turns off repo2docker's own install of the project, so binder/ restates
the Python version and the dependencies; this keeps the two from drifting apart.  Binder itself
cannot run here (no container engine), so the scripts are checked by running what can run.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
BINDER = REPO / "binder"


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def _expand(project: dict, extras: list[str]) -> set[Requirement]:
    """The dependencies plus the named extras, following self-references such as ddlab[spark]."""
    name = canonicalize_name(project["name"])
    optional = project.get("optional-dependencies", {})
    todo, seen_extras, out = list(extras), set(), [Requirement(r) for r in project["dependencies"]]
    while todo:
        extra = todo.pop()
        if extra in seen_extras:
            continue
        seen_extras.add(extra)
        for line in optional[extra]:
            req = Requirement(line)
            if canonicalize_name(req.name) == name:
                todo.extend(req.extras)
            else:
                out.append(req)
    return out


def _key(req: Requirement) -> tuple:
    return (canonicalize_name(req.name), tuple(sorted(req.extras)), str(SpecifierSet(str(req.specifier))))


def _requirements_txt() -> list[Requirement]:
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    return [Requirement(line.split("#")[0].strip()) for line in lines if line.split("#")[0].strip()]


def test_requirements_are_the_projects_runtime_lab_and_spark_dependencies():
    project = _pyproject()["project"]
    expected = {_key(r) for r in _expand(project, ["lab", "spark"])}
    listed = {_key(r) for r in _requirements_txt()}
    assert listed == expected, (
        f"binder/requirements.txt and pyproject.toml differ: only in binder {sorted(listed - expected)}, "
        f"only in pyproject {sorted(expected - listed)}")


def test_runtime_python_meets_requires_python():
    text = (BINDER / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(\d+)\.(\d+)", text)
    assert match, f"binder/runtime.txt should read python-X.Y, got {text!r}"
    version = f"{match[1]}.{match[2]}"
    requires = SpecifierSet(_pyproject()["project"]["requires-python"].split("#")[0].strip())
    assert version in requires, f"runtime.txt asks for Python {version}, pyproject needs {requires}"


def test_apt_installs_java_17_for_spark():
    packages = (BINDER / "apt.txt").read_text().split()
    assert "openjdk-17-jre-headless" in packages


@pytest.mark.parametrize("script", ["postBuild", "start"])
def test_scripts_are_strict_executable_bash(script):
    path = BINDER / script
    lines = path.read_text().splitlines()
    assert lines[0] == "#!/bin/bash", f"{script} must start with #!/bin/bash"
    assert "set -euo pipefail" in lines, f"{script} must stop at the first error"
    assert os.access(path, os.X_OK), f"{script} must be executable"
    subprocess.run(["bash", "-n", str(path)], check=True)  # syntax


def test_postbuild_installs_the_project_and_turns_news_off():
    text = (BINDER / "postBuild").read_text()
    assert re.search(r"pip install --no-deps -e \.$", text, re.M), "postBuild must install the project"
    assert "load_ext" not in text and "extensions" not in text, "no autoloaded extension"
    overrides = re.search(r"<<'JSON'\n(.*?)\nJSON", text, re.S)
    assert overrides, "postBuild writes lab settings overrides"
    settings = json.loads(overrides[1])
    notification = settings["@jupyterlab/apputils-extension:notification"]
    assert notification["fetchNews"] == "false" and notification["checkForUpdates"] is False


def test_start_sets_inline_bokeh_and_loopback_spark_then_runs_the_command():
    out = subprocess.run([str(BINDER / "start"), "env"], capture_output=True, text=True, check=True,
                         env={"PATH": os.environ["PATH"]}).stdout.splitlines()
    assert "BOKEH_RESOURCES=inline" in out
    assert "SPARK_LOCAL_IP=127.0.0.1" in out
    assert (BINDER / "start").read_text().rstrip().endswith('exec "$@"')
