"""Node-side test fixtures. Fixture roots: node_fixtures.py (a plain module, not importable as `conftest`)."""

from __future__ import annotations

import pytest

# The fixture roots are sysfs-shaped trees with sysfs's own symlink cycles (device -> PCI function ->
# infiniband/<dev>/device ...): pytest must not walk them looking for tests.
collect_ignore = ["fixtures"]


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A private $IMGCHECK_HOME."""
    path = tmp_path / "imgcheck-home"
    monkeypatch.setenv("IMGCHECK_HOME", str(path))
    return path
