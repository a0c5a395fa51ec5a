"""Datalog rules compiled onto the engine: ``rules(text, inputs)``.

The language is Soufflé-like (a published example pastes in with little change):

- ``.decl name(field: type, ...)``; types ``number``, ``unsigned``, ``float``, ``symbol``
  (checked against constants; ``.type`` lines are accepted and ignored);
- ``.input rel`` reads the collection named ``rel``; ``.input rel(a, b) from NAME`` reads
  collection ``NAME`` (picking fields ``a, b`` by name when it has more); ``.output a, b``
  (without any ``.output``, every derived relation is an output);
- facts ``edge(1, 2).``; rules ``head :- body.`` with several heads (``a(x), b(x) :- ...``)
  and disjunction (``;``, also in parentheses); ``!atom`` for negation; ``_``; integer,
  float and ``"string"`` constants; comparisons ``= != < <= > >=``; arithmetic
  ``+ - * / %`` (C semantics like Soufflé: ``/`` and ``%`` truncate toward zero; a row
  dividing by zero derives nothing); ``x = expr`` binds ``x``;
- aggregates in the head: ``count(y)``, ``sum(w)``, ``min(d + 1)``, ``max(v)``, grouped by
  the head's other fields.  ``count``/``sum`` range over the rule's distinct *bindings* (the
  values of its named body variables; write ``_`` for what must not count), and a count/sum
  relation has exactly one rule, outside recursion.  ``min``/``max`` may be recursive (the
  shortest-path shape): the relation is, per group, the least (greatest) of the candidates
  all its rules derive, plain rules included.

Semantics: relations are sets (an input record is present while its multiplicity is
positive); strata are the precedence graph's strongly connected components, evaluated in
dependency order; a recursive stratum is iterated to its fixed point (the engine's loop, so
input changes, deletions included, update the outputs incrementally).  Differences from
Soufflé: no body aggregates (``c = count : {...}``), no functors, no components, no
``.input`` IO options (inputs are collections), no subsumption or choice domains.

Modules: :mod:`.grammar` (lark), :mod:`.parse`, :mod:`.ast`, :mod:`.analyze` (checks,
strata), :mod:`.compile` (operators), :mod:`.program` (the entry point), :mod:`.errors`.
"""
from .errors import (AggregateError, ArityError, RulesError, RulesRuntimeTypeError,
                     RulesSyntaxError, RulesTypeError, UnknownFunctorError, UnknownRelationError,
                     UnsafeRuleError, UnstratifiableError, UnsupportedError)
from .program import ON_LIMIT, RulesProgram, check, rules

__all__ = ["rules", "check", "RulesProgram", "ON_LIMIT", "RulesError", "RulesSyntaxError",
           "UnknownRelationError", "ArityError", "UnsafeRuleError", "UnstratifiableError",
           "AggregateError", "RulesTypeError", "RulesRuntimeTypeError", "UnknownFunctorError",
           "UnsupportedError"]
