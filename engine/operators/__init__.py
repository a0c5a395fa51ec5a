"""Operators, one module per family: ``linear`` (map, filter, project, concat, negate, ...),
``arrange`` (shared indexed traces), ``join``, ``reduce`` with its vectorised ``aggregates``,
``loops`` (enter, ingress, feedback, leave), ``io`` (inputs, views, subscribers),
``choose`` (a choice fixed by the size of the first load) and ``explode`` (records with
multiplicities: an operator added as one file, CONTRIBUTING.md's example).  Each class
carries the hooks the analyses call (:class:`~.base.Operator`: its lineage rule, history,
replay copy), so ``engine/why`` keeps no list of operator kinds.
Users reach them through :class:`~ddlab.engine.collection.Collection`."""
