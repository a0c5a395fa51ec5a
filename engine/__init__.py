"""The differential dataflow engine: collections of (data, time, diff) updates."""
__all__: list[str] = []
