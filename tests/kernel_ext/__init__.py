"""Tests of the Jupyter kernel extension (magics, rich displays, graph picture)."""
