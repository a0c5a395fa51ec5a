"""Operators, one module per family: ``linear`` (map, filter, project, concat, negate, ...),
``arrange`` (shared indexed traces), ``join``, ``reduce`` with its vectorised ``aggregates``,
``loops`` (enter, ingress, feedback, leave) and ``io`` (inputs, views, subscribers).
Users reach them through :class:`~ddlab.engine.collection.Collection`."""
