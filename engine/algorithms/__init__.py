"""Graph algorithms written with the public operators (no special-casing in the engine).

Each follows a figure of the Naiad papers; ``ddlab.algorithms`` is this module."""
from .graphs import (connected_components, connected_components_prioritized, explain_choice,
                     reachability,
                     shortest_paths, shortest_paths_prioritized, strongly_connected_components,
                     top_label_per_component)

__all__ = ["connected_components", "connected_components_prioritized", "explain_choice",
           "reachability",
           "shortest_paths", "shortest_paths_prioritized", "strongly_connected_components",
           "top_label_per_component"]
