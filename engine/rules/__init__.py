"""Datalog rules compiled onto the engine: ``rules(text, inputs)``.

The language is Soufflé's (a program written for Soufflé runs unchanged, beside its facts
folder, within the differences listed below):

- ``.decl name(field: type, ...)`` (a relation with no fields, ``.decl Ok()``, holds the one
  record ``True`` in a field ``holds``); types ``number``, ``unsigned``, ``float``,
  ``symbol`` and ``.type`` subtypes (``.type Id <: number``) and unions (``.type U = A | B``)
  of them, checked against constants (an integer constant in a ``float`` field is a float);
  representation qualifiers (``btree``, ``brie``, ...) are accepted and ignored;
- ``.input rel`` reads the collection named ``rel`` if one is given, else the file
  ``<facts_dir>/rel.facts`` or the file its IO options name (:mod:`.files`: ``filename``,
  ``delimiter``, ``headers``, ``rfc4180``, gzip); ``.input rel(a, b) from NAME`` reads
  collection ``NAME`` (picking fields by name); ``.output a, b`` (with IO options: the files
  :meth:`RulesProgram.write_outputs` writes; without any ``.output``, every derived relation
  is an output);
- facts ``edge(1, 2).``; rules ``head :- body.`` with several heads and disjunction (``;``,
  also in parentheses, and negated: ``!(a(x) ; b(x))`` is ``!a(x), !b(x)``); ``!atom``;
  ``_``; ``true``/``false``; bodies with no positive atom (``Ok() :- !Bad(_).``);
  integer (also ``0x1f``, ``0b101``, ``5u``), float and ``"string"`` constants;
- expressions anywhere a value goes, atom arguments included (``fib(i - 1, b)``,
  ``!e(x + 1)``): ``+ - * / %`` (C semantics like Soufflé: ``/`` and ``%`` truncate toward
  zero; a row dividing by zero derives nothing), ``^``, ``band bor bxor bshl bshr bshru
  bnot land lor lnot``, functors ``cat strlen substr contains match ord to_number
  to_string to_float min max abs`` and ``as(x, type)`` (:mod:`.functors`); comparisons
  ``= != < <= > >=``; ``x = expr`` binds ``x``;
- aggregates in Soufflé's body form, ``c = count : { edge(x, _) }``, ``s = sum w : {...}``,
  ``m = min d : {...}``, ``max``, grouped by the variables they share with the rest of the
  rule (a count or sum over nothing is 0, as in Soufflé); and in the head: ``count(y)``,
  ``sum(w)``, ``min(d + 1)``, ``max(v)``, grouped by the head's other fields (none: one
  group, the whole body).  Counts and sums count every combination of matched tuples, as
  Soufflé's do (``c(count()) :- a(_, _).`` is the number of tuples of ``a``); a count/sum
  relation has exactly one rule, outside recursion (Datalog's stratification: an aggregate
  reads a relation only once it is complete).  ``min``/``max`` may be recursive (the
  shortest-path shape): the relation is, per group, the least (greatest) of the candidates
  all its rules derive.

Semantics: relations are sets (an input record is present while its multiplicity is
positive); strata are the precedence graph's strongly connected components, evaluated in
dependency order; a recursive stratum is iterated to its fixed point (the engine's loop, so
input changes, deletions included, update the outputs incrementally).

Differences from Soufflé, each refused with an :class:`UnsupportedError` naming it, its line
and the way around: components (``.comp``/``.init``), ``eqrel``, records ``[a, b]`` and
ADTs, user-defined functors (``.functor``), ``range``, ``autoinc``, ``mean``, IO other than
files and stdout, ``.pragma``/``.plan``/``.printsize``/``.limitsize``, subsumption and
choice domains; a negated conjunction ``!(a, b)``; a disjunction inside an aggregate's body;
a variable bound outside an aggregate and used inside it only in a comparison.  Also: ``^``
binds looser than unary minus (``-2^2`` is 4), and ``.output`` files are written when
:meth:`RulesProgram.write_outputs` is called, not at the end of a run.

Modules: :mod:`.grammar` (lark), :mod:`.parse`, :mod:`.ast`, :mod:`.normalize` (rewrites
into the smaller language the rest knows), :mod:`.analyze` (checks, strata), :mod:`.compile`
(operators), :mod:`.functors`, :mod:`.files` (IO, types), :mod:`.program` (the entry point),
:mod:`.errors`.
"""
from .errors import (AggregateError, ArityError, RulesError, RulesRuntimeTypeError,
                     RulesSyntaxError, RulesTypeError, UnknownFunctorError, UnknownRelationError,
                     UnsafeRuleError, UnstratifiableError, UnsupportedError)
from .program import ON_LIMIT, RulesProgram, check, rules

__all__ = ["rules", "check", "RulesProgram", "ON_LIMIT", "RulesError", "RulesSyntaxError",
           "UnknownRelationError", "ArityError", "UnsafeRuleError", "UnstratifiableError",
           "AggregateError", "RulesTypeError", "RulesRuntimeTypeError", "UnknownFunctorError",
           "UnsupportedError"]
