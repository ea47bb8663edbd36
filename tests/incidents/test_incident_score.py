"""The README states the incident-corpus score; it must be the score the corpus gives today."""

from __future__ import annotations

import os

from corpus import CASES
from score import readme_line, score

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def test_readme_states_the_current_score():
    hits, total, _ = score()
    with open(README, encoding="utf-8") as fh:
        text = " ".join(fh.read().split())
    assert readme_line(hits, total, sum(1 for c in CASES if not c["expect"])) in text, (
        "update the incident paragraph in README.md: python tests/incidents/score.py"
    )
    assert f"`tests/incidents/`, {len(CASES)} cases" in text
