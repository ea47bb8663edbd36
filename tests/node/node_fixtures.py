"""Paths of the fixture node roots (tests/node/fixtures/<name>, see README.md there)."""

from __future__ import annotations

import os

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
FIXTURE_NAMES = sorted(n for n in os.listdir(FIXTURES) if os.path.isdir(os.path.join(FIXTURES, n)))


def fixture_root(name: str) -> str:
    return os.path.join(FIXTURES, name)
