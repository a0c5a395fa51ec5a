"""The how-to's prose states no number of its run (its parameters cell holds the window and the
sample's size); the list is empty, and the test checks that it stays so."""

CLAIMS = []
