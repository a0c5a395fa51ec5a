"""Lesson 11's prose numbers: its window (a parameter); the rest of its numbers are printed by its
cells and described in words."""
from prose_claims import Claim, Exempt

CLAIMS = [
    Exempt("# 11 · Rules", "the lesson's number"),
    Claim("while a 7-day window slides over CollegeMsg", lambda nb: nb.parameters["WINDOW_DAYS"]),
    Exempt("(0 is the first application of the recursive rules to the seeds)", "the engine's numbering of iterations"),
]
