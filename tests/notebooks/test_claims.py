"""Every number a notebook's prose states is one the notebook printed: each notebook keeps a
claims list beside it (``notebooks/claims/KEY.py``, see ``tests/support/prose_claims.py``), and
a change of the engine or the data that breaks a sentence fails here.

The first two tests read only the notebooks and the claims lists (the fast loop runs them): each
phrase is in the prose, and no number of the prose is left without a claim, a quote or a reason.
The third reads the executed notebook: the suite's nbmake run of it when it ran earlier in the
session (``tests/support/executed.py``; ``tests/conftest.py`` orders this test after it), else a
run made here, so each notebook executes once per session.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from executed import executed
from notebook_outputs import ExecutedNotebook
from prose_claims import (NOTEBOOKS, Claim, Quote, check_claim, check_quote, claims_path, load_claims,
                          missing_phrases, read_papers, required_data, unaccounted_numbers)

from ddlab.sources import shared_data_dir

ALL = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))


def _prose(name: str) -> str:
    return ExecutedNotebook(NOTEBOOKS / name).markdown()


@pytest.mark.parametrize("notebook", ALL)
def test_every_phrase_is_in_the_prose(notebook):
    assert claims_path(notebook).exists(), f"{notebook}: no claims list at {claims_path(notebook)}"
    problems = missing_phrases(_prose(notebook), load_claims(notebook))
    assert not problems, f"{notebook}:\n" + "\n".join(problems)


@pytest.mark.parametrize("notebook", ALL)
def test_every_number_of_the_prose_is_accounted_for(notebook):
    left = unaccounted_numbers(_prose(notebook), load_claims(notebook))
    assert not left, (f"{notebook}: numbers in the prose with no Claim, Quote or Exempt in "
                      f"{claims_path(notebook).relative_to(NOTEBOOKS.parent)}:\n" + "\n".join(left))


@pytest.mark.parametrize("notebook", ALL)
def test_quotes_are_the_papers_words(notebook):
    papers = read_papers()
    quotes = [e for e in load_claims(notebook) if isinstance(e, Quote)]
    problems = [p for q in quotes if (p := check_quote(q, papers))]
    assert not problems, f"{notebook}:\n" + "\n".join(problems)
    if quotes and papers is None:
        pytest.skip("../shared/papers is absent: quotes checked for their numbers only, not against the papers' text")


@pytest.mark.parametrize("notebook", ALL)
def test_prose_numbers_are_what_the_notebook_printed(notebook, request):
    data = required_data(notebook)
    if data and not (shared_data_dir() / data).exists():
        pytest.skip(f"{notebook}'s prose describes its run on ../shared/data/{data}, which is absent here "
                    f"(the notebook itself still runs, on its fallback, in its own test)")
    claims = [e for e in load_claims(notebook) if isinstance(e, Claim)]
    nb = ExecutedNotebook(executed(NOTEBOOKS / notebook, request.config), name=notebook)
    problems = [p for c in claims if (p := check_claim(c, nb))]
    assert not problems, f"{notebook}: the prose and the output disagree:\n" + "\n".join(problems)


#: read by tests/conftest.py: run right after the notebook's nbmake item, with its markers
test_prose_numbers_are_what_the_notebook_printed.reads_notebook = "notebook"


def test_the_claims_lists_belong_to_notebooks():
    orphans = [p.name for p in (NOTEBOOKS / "claims").glob("*.py")
               if not any(claims_path(n) == p for n in ALL)]
    assert not orphans, f"claims lists without a notebook: {orphans}"


def test_a_broken_sentence_fails():
    """The check itself: a phrase stating another number than the output, a number without a
    claim, and a claim that cannot read the output are each reported."""
    doc = {"cells": [{"cell_type": "markdown", "source": "The loop ran 4 iterations over 12 edges (Figure 6)."},
                     {"cell_type": "code", "source": "print('iterations: 5')", "outputs": [
                         {"output_type": "stream", "name": "stdout", "text": "iterations: 5\n"}]}],
           "metadata": {}}
    nb = ExecutedNotebook(doc)
    claim = Claim("ran 4 iterations", lambda nb: nb.find(r"iterations: (\d+)"))
    assert "says 4, the output gives 5" in check_claim(claim, nb)
    assert check_claim(Claim("ran 4 iterations", lambda nb: nb.find(r"rounds: (\d+)")), nb).startswith(
        "'ran 4 iterations': could not compute")
    left = unaccounted_numbers(nb.markdown(), [claim])
    assert len(left) == 1 and "'12'" in left[0]                 # Figure 6 is a reference, 4 is claimed
    assert missing_phrases(nb.markdown(), [Claim("ran 5 iterations", claim.compute)])


def test_numbers_are_compared_at_their_written_precision():
    from prose_claims import about, at_least, numbers_in
    doc = {"cells": [{"cell_type": "code", "source": "", "outputs": [
        {"output_type": "stream", "name": "stdout", "text": "x 0.4812 y 3228 z 11.47\n"}]}], "metadata": {}}
    nb = ExecutedNotebook(doc)
    assert numbers_in("0.48 of 3,228, 11.5% (10^7)") == [("0.48", 2, False), ("3228", 0, False), ("11.5", 1, True),
                                                        ("10", 0, False), ("7", 0, False)]
    assert check_claim(Claim("0.48 s", lambda nb: nb.find(r"x ([\d.]+)")), nb) is None
    assert check_claim(Claim("0.49 s", lambda nb: nb.find(r"x ([\d.]+)")), nb) is not None
    assert check_claim(Claim("3,228 changes", lambda nb: nb.find(r"y (\d+)")), nb) is None
    assert check_claim(Claim("11.5%", lambda nb: nb.find(r"z ([\d.]+)")), nb) is None
    assert check_claim(Claim("over 3,000", lambda nb: at_least(nb.find(r"y (\d+)"))), nb) is None
    assert check_claim(Claim("over 4,000", lambda nb: at_least(nb.find(r"y (\d+)"))), nb) is not None
    assert check_claim(Claim("about 3,000", lambda nb: about(nb.find(r"y (\d+)"), 0.1)), nb) is None


def test_quotes_must_carry_the_papers_numbers():
    papers = {"cidr": "only 67 differences are processed by the system", "report": "", "cacm": ""}
    assert check_quote(Quote("67 records", "cidr", "only 67 differences are processed"), papers) is None
    assert "not in the quoted words" in check_quote(Quote("68 records", "cidr", "only 67 differences"), papers)
    assert "does not say" in check_quote(Quote("67 records", "cidr", "67 differences were seen"), papers)


def test_executed_reads_a_notebook_run_once(tmp_path, request, monkeypatch):
    """``executed`` runs a notebook that nbmake has not run, and reuses the run after that."""
    import executed as module
    calls = []

    class Result:
        error = None
        nb = {"cells": []}

    monkeypatch.setattr(module, "KeepingRun", lambda path, *a, **k: type("R", (), {
        "execute": lambda self: calls.append(path) or module.RUNS.__setitem__(Path(path).resolve(), Result())})())
    path = tmp_path / "x.ipynb"
    assert module.executed(path, request.config) == {"cells": []}
    assert module.executed(path, request.config) == {"cells": []}
    assert calls == [path.resolve()]
    module.RUNS.pop(path.resolve())
