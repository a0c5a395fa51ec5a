"""Lesson 11's prose numbers: its window (a parameter), the move's saving against the same
window from scratch (printed by the table's cell); the rest of its numbers are printed by its
cells and described in words."""
from prose_claims import Claim, Exempt, about


def _saving(nb):
    """Updates from scratch over updates of the move, as the table's cell prints them."""
    return about(nb.find(r"([\d.]+)x fewer", "move_total, scratch_total"), 0.35)


CLAIMS = [
    Exempt("# 11 · Rules", "the lesson's number"),
    Claim("while a 7-day window slides over CollegeMsg", lambda nb: nb.parameters["WINDOW_DAYS"]),
    Exempt("(0 is the first application of the recursive rules to the seeds)", "the engine's numbering of iterations"),
    Claim("about 2x fewer updates in all than", _saving),
]
