"""Operators, one module per family: ``linear`` (map, filter, project, concat, negate, ...),
``arrange`` (shared indexed traces), ``join``, ``reduce`` with its vectorised ``aggregates``,
``loops`` (enter, ingress, feedback, leave), ``io`` (inputs, views, subscribers) and
``choose`` (a choice fixed by the size of the first load).
Users reach them through :class:`~ddlab.engine.collection.Collection`."""
