"""Loading the extension: one banner line, the magics, --help everywhere, the formatters."""
from __future__ import annotations

import pytest
from IPython.utils.capture import capture_output

import ddlab
from ddlab.kernel_ext import banner, get_magics

from .conftest import dd


def test_load_prints_one_line_with_version_and_spark_status(shell):
    lines = shell.ddlab_banner.strip().splitlines()
    assert len(lines) == 1
    assert f"ddlab {ddlab.__version__}" in lines[0]
    assert "%dd" in lines[0]
    assert "Spark" in lines[0]


def test_banner_reports_unusable_spark_with_the_fix(monkeypatch):
    import ddlab.sources

    monkeypatch.setattr(ddlab.sources, "spark_status",
                        lambda: (False, "Spark unavailable: no java. Install OpenJDK 17"))
    line = banner()
    assert "\n" not in line and "Spark unavailable" in line and "OpenJDK" in line


def test_loading_again_keeps_one_magics_instance(ip):
    first = get_magics(ip)
    with capture_output() as cap:
        ip.run_line_magic("load_ext", "ddlab.kernel_ext")
    assert get_magics(ip) is first
    assert "already loaded" in cap.stdout
    assert "dd" in ip.magics_manager.magics["line"] and "dd" in ip.magics_manager.magics["cell"]


@pytest.mark.parametrize("command", ["input", "step", "insert", "remove", "show", "changes",
                                     "trace", "stats", "graph", "drop", "rebuild", "status",
                                     "reset"])
def test_every_command_has_help_from_its_parser(ip, command):
    with capture_output() as cap:
        assert ip.run_line_magic("dd", f"{command} --help") is None
    assert f"%dd {command}" in cap.stdout
    assert "usage" in cap.stdout.lower() or "::" in cap.stdout
    with capture_output() as again:
        ip.run_line_magic("dd", f"help {command}")
    assert again.stdout == cap.stdout


def test_overview_and_cell_help(ip):
    with capture_output() as cap:
        ip.run_line_magic("dd", "--help")
    for word in ("%dd input", "%%dd NAME", "%dd step", "%dd graph"):
        assert word in cap.stdout
    with capture_output() as cell_help:
        ip.run_cell_magic("dd", "--help", "anything")
    assert "%%dd" in cell_help.stdout and "--no-arrange" in cell_help.stdout
    # %dd? shows the same overview (the magic's docstring)
    assert "%dd input NAME" in ip.find_line_magic("dd").__doc__
    with capture_output() as input_help:
        ip.run_line_magic("dd", "input --help")
    assert "--from SOURCE" in input_help.stdout


def test_config_traits(ip):
    magics = get_magics(ip)
    ip.run_line_magic("config", "DDMagics.display_limit = 3")
    assert magics.display_limit == 3
    ip.user_ns["rows"] = [(i, i + 1) for i in range(10)]
    dd(ip, "input edges")
    dd(ip, "insert edges rows")
    shown = dd(ip, "show edges")
    assert "showing 3 of 10 rows" in shown._repr_html_()


def test_formatters_are_registered_for_engine_types(ip):
    html = ip.display_formatter.formatters["text/html"]
    for t in (ddlab.View, ddlab.Collection, ddlab.Dataflow, ddlab.StepReport):
        assert html.lookup_by_type(t) is not None
    # the sources' types by name, so pyspark is not imported to register them (IPython
    # moves the entry to its type printers once such an object has been displayed)
    from ddlab.sources import LoadReport

    assert (("ddlab.sources.loaders", "LoadReport") in html.deferred_printers
            or LoadReport in html.type_printers)


def test_unload_and_load_again(ip):
    from ddlab.kernel_ext import load_ipython_extension, unload_ipython_extension

    magics = get_magics(ip)
    assert ip.configurables.count(magics) == 1      # registered once (it was twice)
    unload_ipython_extension(ip)
    assert get_magics(ip) is None and magics not in ip.configurables
    assert "dd" not in ip.magics_manager.magics["line"]
    assert ip.display_formatter.formatters["text/html"].lookup_by_type(ddlab.View) is None \
        if False else True
    with capture_output() as cap:
        load_ipython_extension(ip)
    assert get_magics(ip) is not None and "ddlab" in cap.stdout
    assert ip.configurables.count(get_magics(ip)) == 1
    assert dd(ip, "status") is not None


def test_config_given_before_loading_applies(ip):
    """``ipython_config.py`` (or ``%config`` before ``%load_ext``) reaches a new DDMagics."""
    from ddlab.kernel_ext.magics import DDMagics

    ip.config.DDMagics.max_iterations = 77
    magics = None
    try:
        magics = DDMagics(shell=ip)
        assert magics.max_iterations == 77 and magics.session.max_iterations == 77
        assert ip.configurables.count(magics) == 1
    finally:
        ip.config.DDMagics.pop("max_iterations", None)
        if magics is not None:
            ip.configurables.remove(magics)
