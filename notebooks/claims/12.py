"""Lesson 12's prose numbers: its window, as the lesson printed it."""
from prose_claims import Claim, Exempt

CLAIMS = [
    Claim("in a sliding 7-day window", lambda nb: nb.find(r"CollegeMsg: window (\d+) h wide") / 24),
    Exempt("for 24 hours of Twitter @mentions", "the dataset's span (../shared/data/README.md)"),
]
