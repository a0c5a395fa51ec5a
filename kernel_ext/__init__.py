"""ddlab's Jupyter kernel extension: ``%load_ext ddlab`` (or ``%load_ext ddlab.kernel_ext``).

Loading registers one line+cell magic, ``%dd`` / ``%%dd``, rich HTML displays for the
engine's objects (views, collections, dataflows, step reports) and for the Spark sources'
objects, and prints one line: the ddlab version and whether Spark is usable (checked without
starting a JVM; if not, why and how to fix it).

The magics: ``%dd --help`` (or ``%dd?``) lists every command, one line each, generated from
the commands' own parsers (``commands/``); every command has ``--help``.  A session::

    %dd input edges --from collegemsg --window 7d --step 1d      (Spark, sliding window)
    %%dd cc
    connected_components(edges)
    %dd step 3
    %dd show cc --limit 10
    %dd explore cc

Declared names are ordinary Python variables holding the live collections (``edges.insert``
and ``flow.step()`` work from Python, and Python values can be used in ``%%dd`` bodies).
Changing the declarations rebuilds the dataflow beside the old one and swaps it in only if
everything worked, so a failing declaration leaves the namespace and the engine unchanged.

Configuration (``%config DDMagics.<name> = ...``): ``display_limit`` (rows shown, 20),
``short_errors`` (one-line errors, True), ``progress`` (progress row in notebooks, True),
``max_iterations`` (loop bound of new flows, 10000).

Where things live (one room per concern; the extension uses only the public APIs of
``ddlab.engine`` and ``ddlab.sources``):

- ``magics.py``: the dispatcher; ``commands/``: one module per command family;
- ``session.py`` (declarations -> live flow, atomic changes), ``declarations.py``,
  ``build.py`` (a flow built beside the running one), ``epochs.py`` (one epoch),
  ``evaluate.py`` (a ``%%dd`` body), ``loading.py`` (``--from`` -> records), ``messages.py``
  (errors and hints), ``summaries.py`` (the group-bys of stats and trace), ``progress.py``;
- ``display/``: tables, result objects, renderers of engine objects, lattice, SVG graph,
  formatter registration.
"""
from __future__ import annotations

__all__ = ["load_ipython_extension", "unload_ipython_extension", "banner", "get_magics"]


def banner() -> str:
    """The one line printed by ``%load_ext ddlab``: version and Spark status (no JVM started)."""
    from ddlab._version import __version__

    try:
        from ddlab.sources import spark_status

        ok, line = spark_status()
    except Exception as err:  # pragma: no cover - a broken sources install must not block loading
        line = f"Spark status unknown ({type(err).__name__}: {err})"
    return f"ddlab {__version__}: magics %dd and %%dd loaded (%dd --help) | {line}"


def get_magics(ip=None):
    """The DDMagics instance registered on ``ip`` (the running shell by default), or None."""
    if ip is None:
        from IPython import get_ipython

        ip = get_ipython()
    if ip is None:
        return None
    return ip.magics_manager.registry.get("DDMagics")


def load_ipython_extension(ip) -> None:
    """Register the magics and the rich displays, print one line (imports lazily)."""
    if get_magics(ip) is not None:
        print("ddlab: already loaded (%dd --help)")
        return
    from .display.register import register_formatters
    from .magics import DDMagics

    magics = DDMagics(shell=ip)
    ip.register_magics(magics)
    register_formatters(ip, magics)
    print(banner())


def unload_ipython_extension(ip) -> None:
    """Remove the magics and the displays (``%unload_ext ddlab.kernel_ext``)."""
    from .display.register import unregister_formatters

    magics = get_magics(ip)
    if magics is None:
        return
    unregister_formatters(ip)
    for kind in ("line", "cell"):
        ip.magics_manager.magics[kind].pop("dd", None)
    ip.magics_manager.registry.pop("DDMagics", None)
    if magics in ip.configurables:
        ip.configurables.remove(magics)
    magics.session.flow.close()  # (its worker processes; the kernel's exit stops any others)
