"""The rules language's grammar (lark, LALR): a Soufflé-like Datalog.

Why lark: a maintained parser library gives exact positions and the expected tokens for every
syntax error, and the grammar stays readable in one place; no hand-written tokenizer.
Differences from Soufflé are listed in :mod:`ddlab.engine.rules` (the package docstring).
"""
from __future__ import annotations

GRAMMAR = r"""
start: statement*

?statement: decl | input_dir | output_dir | type_dir | clause

decl: ".decl" NAME "(" [attribute ("," attribute)*] ")" QUALIFIER*
attribute: NAME ":" NAME
type_dir: ".type" NAME _type_body
_type_body: "<:" NAME | "=" NAME ("|" NAME)*
input_dir: ".input" NAME [ "(" [param ("," param)*] ")" ] [FROM NAME]
output_dir: ".output" NAME ("," NAME)* [ "(" [param ("," param)*] ")" ]
?param: NAME -> column
      | NAME COMPARE (STRING | NAME | INT | FLOAT) -> io_option

clause: heads [":-" body] "."
heads: head ("," head)*
head: NAME "(" [head_arg ("," head_arg)*] ")"
?head_arg: expr
         | WILDCARD -> wildcard
         | NAME "(" WILDCARD ")" -> aggregate_wild

body: conjunction (";" conjunction)*
conjunction: literal ("," literal)*
// an atom is parsed as a call (``e(x, _)``), which the transformer makes an atom when it stands
// alone as a literal: one production for both keeps the grammar LALR(1) where a group
// ``(a(x) ; b(x))`` and a parenthesised expression ``(f(x) + 1) > 2`` begin alike
?literal: expr -> bare
        | "!" atom_expr -> negation
        | "!" "(" body ")" -> negated_group
        | expr COMPARE expr -> comparison
        | "(" body ")" -> group
?term: expr
     | WILDCARD -> wildcard

// Soufflé's operators, loosest first: lor, land, bor, bxor, band, shifts, + -, * / %, ^
?expr: land
     | expr LOR land -> binop
?land: bor
     | land LAND bor -> binop
?bor: bxor
    | bor BOR bxor -> binop
?bxor: band
     | bxor BXOR band -> binop
?band: shift
     | band BAND shift -> binop
?shift: sum
      | shift SHIFT sum -> binop
?sum: product
    | sum ADD product -> binop
?product: power
        | product MUL power -> binop
?power: unary
      | unary POW power -> binop
?unary: atom_expr
      | "-" unary -> negative
      | UNOP unary -> unop
?atom_expr: AGG_NAME [expr] ":" _agg_body -> body_aggregate
          | NAME "(" [term ("," term)*] ")" -> call
          | NAME -> variable
          | INT -> integer
          | FLOAT -> real
          | STRING -> string
          | "(" expr ")"

_agg_body: "{" body "}" | atom_expr

FROM: "from"
// a relation's representation in Soufflé (accepted: ddlab has its own), or eqrel (refused)
QUALIFIER.3: /(eqrel|btree_delete|btree|brie|no_inline|inline|no_magic|magic)\b/
// Soufflé's body aggregate: count : { ... }, sum w : { ... } (the name is followed by ':' or
// by its expression, never by '(' as a head aggregate or a functor is)
AGG_NAME.2: /(count|sum|min|max|mean)\b(?=\s*(:|[A-Za-z_0-9]))/
WILDCARD: "_"
COMPARE: "<=" | ">=" | "!=" | "=" | "<" | ">"
ADD: "+" | "-"
POW: "^"
LOR.3: /lor\b/
LAND.3: /land\b/
BOR.3: /bor\b/
BXOR.3: /bxor\b/
BAND.3: /band\b/
SHIFT.3: /bshl\b|bshru\b|bshr\b/
UNOP.3: /bnot\b|lnot\b/
MUL: "*" | "/" | "%"
NAME: /(?!_\b)[A-Za-z_][A-Za-z0-9_?]*/
INT: /0x[0-9a-fA-F]+|0b[01]+|[0-9]+u?/
FLOAT: /[0-9]+\.[0-9]+([eE][-+]?[0-9]+)?/
STRING: /"([^"\\\n]|\\.)*"/

COMMENT: /\/\/[^\n]*/ | /\/\*(.|\n)*?\*\//
%import common.WS
%ignore WS
%ignore COMMENT
"""

#: What each terminal is called in an error message (lark names them ``NAME``, ``RPAR``, ...).
TERMINAL_WORDS = {
    "NAME": "a name", "INT": "a number", "FLOAT": "a number", "STRING": "a string",
    "LOR": "lor", "LAND": "land", "BOR": "bor", "BXOR": "bxor", "BAND": "band",
    "SHIFT": "bshl, bshr", "UNOP": "bnot, lnot", "POW": "^", "AGG_NAME": "an aggregate",
    "LBRACE": "{", "RBRACE": "}", "WILDCARD": "_", "COMPARE": "a comparison (=, !=, <, ...)",
    "ADD": "+ or -", "MUL": "*, / or %", "FROM": "from", "LPAR": "(", "RPAR": ")",
    "COMMA": ",", "DOT": ".", "COLON": ":", "SEMICOLON": ";", "BANG": "!", "EQUAL": "=",
    "MINUS": "-", "IF": ":-", "__ANON_0": ":-", "$END": "the end of the text",
}
