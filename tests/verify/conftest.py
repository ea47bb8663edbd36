"""Fixtures for the verify tests: a private IMGCHECK_HOME, the real Debian rdma images in the Docker
daemon (imported from the cached mmdebstrap rootfs tars), and small C helpers built with gcc."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

CSRC = os.path.join(os.path.dirname(__file__), "csrc")
IMAGE = "imgcheck-verify/rdma-{suite}:latest"  # own names: the registry tests import imgcheck-test/...


@pytest.fixture(scope="session", autouse=True)
def verify_home(tmp_path_factory):
    """Builds and caches go to a throw-away IMGCHECK_HOME, never the user's."""
    home = str(tmp_path_factory.mktemp("imgcheck-home"))
    old = os.environ.get("IMGCHECK_HOME")
    os.environ["IMGCHECK_HOME"] = home
    yield home
    if old is None:
        os.environ.pop("IMGCHECK_HOME", None)
    else:
        os.environ["IMGCHECK_HOME"] = old


@pytest.fixture(scope="session")
def gcc():
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed (apt-get install gcc libc6-dev)")
    return "gcc"


@pytest.fixture(scope="session")
def verifier(gcc, verify_home):
    from imgcheck.verify.build import locate_verifier

    return locate_verifier()


@pytest.fixture(scope="session")
def compile_c(gcc, tmp_path_factory):
    """compile_c(source_name, *flags) -> path of the output built from tests/verify/csrc/<source>."""
    out_dir = tmp_path_factory.mktemp("cbuild")

    def build(source: str, *flags: str, out: str | None = None) -> str:
        target = str(out_dir / (out or source.rsplit(".", 1)[0]))
        subprocess.run([gcc, *flags, "-o", target, os.path.join(CSRC, source)], check=True)
        return target

    return build


@pytest.fixture(scope="session")
def docker_client():
    docker = pytest.importorskip("docker")
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except Exception as exc:
        pytest.skip(f"no Docker daemon reachable ({exc.__class__.__name__}: {exc}); start dockerd")
    yield client
    client.close()


@pytest.fixture(scope="session")
def rdma_image(docker_client, rootfs):
    """rdma_image(suite) -> name of the real Debian rdma image in the daemon (docker import of the rootfs)."""
    from docker.errors import ImageNotFound

    def get(suite: str) -> str:
        name = IMAGE.format(suite=suite)
        try:
            docker_client.images.get(name)
        except ImageNotFound:
            with open(rootfs(suite), "rb") as fh:
                docker_client.api.import_image_from_data(fh, repository=name.split(":")[0], tag="latest")
        return name

    return get


@pytest.fixture()
def no_leftover_containers(docker_client):
    """Fails the test if a container labelled by verify is left behind."""
    from imgcheck.verify.runtimes.base import LABEL

    def ours():
        return docker_client.containers.list(all=True, filters={"label": LABEL})

    before = {c.id for c in ours()}
    yield
    left = [c.name for c in ours() if c.id not in before]
    assert not left, f"verify left containers behind: {left}"
