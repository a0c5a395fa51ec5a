"""Everything ddlab shows in a notebook, kept out of the engine (which knows nothing of Jupyter).

- :mod:`.tables`: shared styles, bounded HTML/text tables, the ddlab box;
- :mod:`.results`: the objects the magics return (``ShowResult``, ``TraceResult``, ...);
- :mod:`.objects`: the HTML/text of engine and sources objects (``View``, ``Dataflow``...);
- :mod:`.lattice`: the epoch x iteration grid of a loop; :mod:`.graph_svg`: the dataflow SVG;
- :mod:`.register`: hooking the renderers into IPython's display formatter.
"""
