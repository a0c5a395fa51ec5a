"""The rules language's grammar (lark, LALR): a Soufflé-like Datalog.

Why lark: a maintained parser library gives exact positions and the expected tokens for every
syntax error, and the grammar stays readable in one place; no hand-written tokenizer.
Differences from Soufflé are listed in :mod:`ddlab.engine.rules` (the package docstring).
"""
from __future__ import annotations

GRAMMAR = r"""
start: statement*

?statement: decl | input_dir | output_dir | type_dir | clause

decl: ".decl" NAME "(" [attribute ("," attribute)*] ")"
attribute: NAME ":" NAME
type_dir: ".type" NAME _type_body
_type_body: "<:" NAME | "=" NAME ("|" NAME)*
input_dir: ".input" NAME [ "(" [param ("," param)*] ")" ] [FROM NAME]
output_dir: ".output" NAME ("," NAME)* [ "(" [param ("," param)*] ")" ]
?param: NAME -> column
      | NAME "=" (STRING | NAME | SIGNED_NUMBER) -> io_option

clause: heads [":-" body] "."
heads: head ("," head)*
head: NAME "(" [head_arg ("," head_arg)*] ")"
?head_arg: expr
         | WILDCARD -> wildcard
         | NAME "(" [expr] ")" -> aggregate
         | NAME "(" WILDCARD ")" -> aggregate_wild

body: conjunction (";" conjunction)*
conjunction: literal ("," literal)*
?literal: atom
        | "!" atom -> negation
        | "!" "(" body ")" -> negated_group
        | expr COMPARE expr -> comparison
        | "(" body ")" -> group
atom: NAME "(" [term ("," term)*] ")"
?term: expr
     | WILDCARD -> wildcard

?expr: product
     | expr ADD product -> binop
?product: unary
        | product MUL unary -> binop
?unary: atom_expr
      | "-" unary -> negative
?atom_expr: NAME -> variable
          | INT -> integer
          | FLOAT -> real
          | STRING -> string
          | "(" expr ")"

FROM: "from"
WILDCARD: "_"
COMPARE: "<=" | ">=" | "!=" | "=" | "<" | ">"
ADD: "+" | "-"
MUL: "*" | "/" | "%"
NAME: /(?!_\b)[A-Za-z_][A-Za-z0-9_?]*/
INT: /[0-9]+/
FLOAT: /[0-9]+\.[0-9]+([eE][-+]?[0-9]+)?/
STRING: /"([^"\\\n]|\\.)*"/
SIGNED_NUMBER: /-?[0-9]+(\.[0-9]+)?/

COMMENT: /\/\/[^\n]*/ | /\/\*(.|\n)*?\*\//
%import common.WS
%ignore WS
%ignore COMMENT
"""

#: What each terminal is called in an error message (lark names them ``NAME``, ``RPAR``, ...).
TERMINAL_WORDS = {
    "NAME": "a name", "INT": "a number", "FLOAT": "a number", "STRING": "a string",
    "SIGNED_NUMBER": "a number", "WILDCARD": "_", "COMPARE": "a comparison (=, !=, <, ...)",
    "ADD": "+ or -", "MUL": "*, / or %", "FROM": "from", "LPAR": "(", "RPAR": ")",
    "COMMA": ",", "DOT": ".", "COLON": ":", "SEMICOLON": ";", "BANG": "!", "EQUAL": "=",
    "MINUS": "-", "IF": ":-", "__ANON_0": ":-", "$END": "the end of the text",
}
