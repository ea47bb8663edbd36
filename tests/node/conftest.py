"""Fixture node roots (tests/node/fixtures/<name>, see README.md there)."""

from __future__ import annotations

import os

import pytest

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
FIXTURE_NAMES = sorted(n for n in os.listdir(FIXTURES) if os.path.isdir(os.path.join(FIXTURES, n)))


def fixture_root(name: str) -> str:
    return os.path.join(FIXTURES, name)


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A private $IMGCHECK_HOME."""
    path = tmp_path / "imgcheck-home"
    monkeypatch.setenv("IMGCHECK_HOME", str(path))
    return path
