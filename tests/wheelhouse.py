"""Wheels to install imgcheck offline: its dependencies and the setuptools its build needs, cached by the
pyproject's content and the Python version, so installs in tests (the CI recipes' `pip install`, the
probe image's build) run the real pip with no package index."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys

import pytest
from cachefill import private_dir, publish_dir

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("IMGCHECK_ROOTFS_CACHE", "/var/cache/imgcheck-rootfs")
BUILD_REQUIREMENT = "setuptools>=77"  # [build-system] requires: pip's isolated build installs it from here


def dependency_wheels(extras: str = "") -> str:
    """The cached directory of wheels (no imgcheck wheel in it); skips when no package index answers.

    extras: e.g. "serve-pg", to include an extra's dependencies too (a separate cache directory).
    """
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as fh:
        key = hashlib.sha256(fh.read()).hexdigest()[:16]
    suffix = f"-{extras}" if extras else ""
    deps = os.path.join(CACHE, f"wheelhouse-py{sys.version_info[0]}{sys.version_info[1]}-{key}{suffix}")
    if os.path.isdir(deps):
        return deps
    tmp = private_dir(deps)
    for argv in (
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", tmp, f"{REPO}[{extras}]" if extras else REPO],
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", tmp, BUILD_REQUIREMENT],
    ):
        result = subprocess.run(argv, capture_output=True, text=True)
        if result.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            pytest.skip(f"cannot fetch wheels (package index unreachable?): {result.stderr[-300:]}")
    for name in os.listdir(tmp):
        if name.startswith("imgcheck-"):
            os.unlink(os.path.join(tmp, name))  # imgcheck itself is built from the tree under test
    return publish_dir(tmp, deps)  # another run may have filled it meanwhile: theirs stands


def copy_source(dest: str) -> str:
    """What a checkout holds for installing: pyproject, README, src/ (no caches, no venv, no tests)."""
    os.makedirs(dest, exist_ok=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(REPO, name), dest)
    shutil.copytree(
        os.path.join(REPO, "src"), os.path.join(dest, "src"), ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    return dest
