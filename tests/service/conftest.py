"""Fixtures of the `imgcheck serve` tests (helpers live in servicekit.py)."""

from __future__ import annotations

import pytest


@pytest.fixture
def imgcheck_home(tmp_path, monkeypatch):
    """A private $IMGCHECK_HOME (layer cache, inventory) for the service under test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("IMGCHECK_HOME", str(home))
    # the service points REGISTRY_AUTH_FILE at its own file; restore the variable afterwards
    monkeypatch.setenv("REGISTRY_AUTH_FILE", "")
    monkeypatch.delenv("REGISTRY_AUTH_FILE")
    return str(home)
