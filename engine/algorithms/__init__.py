"""Graph algorithms written with the public operators (no special-casing in the engine;
the automatic plain/prioritized choice is ``Collection.decide`` with a ``SizeChoice``).

Each follows a figure of the Naiad papers; ``ddlab.algorithms`` re-exports this package."""
from .graphs import (connected_components, connected_components_prioritized, explain_choice,
                     reachability,
                     shortest_paths, shortest_paths_prioritized, strongly_connected_components,
                     top_label_per_component)

__all__ = ["connected_components", "connected_components_prioritized", "explain_choice",
           "reachability",
           "shortest_paths", "shortest_paths_prioritized", "strongly_connected_components",
           "top_label_per_component"]
