"""The one place ddlab's version is written (pyproject reads it; the banner prints it)."""
__version__ = "0.1.0"
