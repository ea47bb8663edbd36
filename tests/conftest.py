"""Shared fixtures: real Debian rootfs tars (mmdebstrap) wrapped as images, and synthetic images."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # tests/imagebuild.py and other helpers

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
    tmp = os.path.join(ROOTFS_CACHE, f".{suite}.{os.getpid()}.tar")  # mmdebstrap picks the format by extension
    subprocess.run(["mmdebstrap", "--quiet", "--variant=minbase", f"--include={RDMA_PACKAGES}", suite, tmp],
                   check=True, stdout=subprocess.DEVNULL)
    os.replace(tmp, path)
    return path


@pytest.fixture(autouse=True, scope="session")
def _isolated_imgcheck_home(tmp_path_factory):
    """Tests never read or write the user's ~/.imgcheck (caches, inventory)."""
    home = tmp_path_factory.mktemp("imgcheck-home")
    old = os.environ.get("IMGCHECK_HOME")
    os.environ["IMGCHECK_HOME"] = str(home)
    yield str(home)
    if old is None:
        os.environ.pop("IMGCHECK_HOME", None)
    else:
        os.environ["IMGCHECK_HOME"] = old


@pytest.fixture(scope="session", params=SUITES)
def debian_suite(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def rootfs():
    """rootfs(suite) -> path of the cached mmdebstrap tar for that suite."""
    return build_rootfs


@pytest.fixture(scope="session")
def debian_archive(tmp_path_factory):
    """debian_archive(suite) -> docker-archive path wrapping the real rootfs as a one-layer image."""
    from imagebuild import write_docker_archive

    made: dict[str, str] = {}

    def make(suite: str) -> str:
        if suite not in made:
            out = tmp_path_factory.mktemp(f"da-{suite}") / f"{suite}.tar"
            write_docker_archive(str(out), [], layer_files=[build_rootfs(suite)], tag=f"rdma-{suite}:latest")
            made[suite] = str(out)
        return made[suite]

    return make
