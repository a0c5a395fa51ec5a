"""One way to say what went wrong: the error, the suggestion, the hint line."""
from __future__ import annotations

from ddlab.kernel_ext.messages import SessionError, first_line, hint, suggest


def test_suggest_prefers_close_spellings_then_case():
    assert suggest("edgs", ["edges", "cc"]) == "did you mean 'edges'?"
    assert suggest("EDGES", ["edges"]) == "did you mean 'edges'?"
    assert suggest("cc", ["edges"], what="input ") is None
    assert suggest("edge", ["edges"], what="input ") == "did you mean input 'edges'?"


def test_hint_capitalises_the_suggestion_and_joins_the_rest():
    assert hint("did you mean 'x'?") == "Did you mean 'x'?"
    assert hint("did you mean 'x'?", "Declared: x.") == "Did you mean 'x'? Declared: x."
    assert hint(None, "Declared: x.") == "Declared: x." and hint(None) == ""


def test_errors_are_one_line_with_their_hint():
    err = SessionError("bad", "Fix it.")
    assert str(err) == "bad Hint: Fix it." and err.message == "bad" and err.hint == "Fix it."
    assert str(SessionError("bad")) == "bad"
    assert first_line(ValueError("  one\ntwo ")) == "one" and first_line(ValueError()) == "ValueError"
