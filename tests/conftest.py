"""Shared fixtures: real Debian rootfs tars (mmdebstrap) wrapped as images, and synthetic images."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # tests/imagebuild.py and other helpers

from rootfs import RDMA_PACKAGES, ROOTFS_CACHE, SUITES, build_rootfs  # noqa: E402,F401  (re-exported)

# The "still reading ... after 20s" notice (imgcheck.deadline) goes to a non-terminal stderr, which is what
# tests capture: on a loaded machine a slow read would add a line that tests counting stderr lines do not
# expect. Off for the suite; tests of the notice set it themselves (tests/registry/test_registry_timeout.py).
os.environ.setdefault("IMGCHECK_SLOW_NOTICE_SECONDS", "0")


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
