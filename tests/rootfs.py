"""Real Debian rootfs tars (mmdebstrap) for the tests, built once and cached.

A module of its own, not conftest.py: several test directories have a conftest, and `from conftest import`
would pick whichever was imported first.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from cachefill import private_name

ROOTFS_CACHE = os.environ.get("IMGCHECK_ROOTFS_CACHE", "/var/cache/imgcheck-rootfs")
RDMA_PACKAGES = "libibverbs1,ibverbs-providers,libucx0"
SUITES = ("bullseye", "bookworm", "trixie")


def build_rootfs(suite: str) -> str:
    """A real Debian minbase rootfs tar with rdma-core and UCX, built once and cached."""
    path = os.path.join(ROOTFS_CACHE, f"{suite}.tar")
    if os.path.exists(path):
        return path
    if shutil.which("mmdebstrap") is None:
        pytest.skip("mmdebstrap is not installed (apt-get install mmdebstrap)")
    os.makedirs(ROOTFS_CACHE, exist_ok=True)
    tmp = private_name(path, ".tar")  # mmdebstrap picks the format by extension
    subprocess.run(
        ["mmdebstrap", "--quiet", "--variant=minbase", f"--include={RDMA_PACKAGES}", suite, tmp],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    os.replace(tmp, path)  # a file: another run's identical tar may be replaced, never half-written
    return path
