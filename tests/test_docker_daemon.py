"""`docker:REF` against a real Docker daemon with the real Debian bookworm rdma rootfs imported."""

from __future__ import annotations

import io
import json
import os
import tarfile

import pytest

from imgcheck import api
from imgcheck.cli.main import main
from imgcheck.errors import BadInputError, UnavailableError
from imgcheck.sources.platform import parse_platform
from imgcheck.sources.read_options import ReadOptions

SOCKET = "/var/run/docker.sock"
IMAGE = "imgcheck-test/rdma-bookworm:latest"


@pytest.fixture(scope="module")
def docker_client():
    import docker

    if not os.environ.get("DOCKER_HOST") and not os.path.exists(SOCKET):
        pytest.skip(f"no Docker daemon socket at {SOCKET} (start dockerd)")
    client = docker.from_env(timeout=600)
    yield client
    client.close()


@pytest.fixture(scope="module")
def bookworm_image(docker_client, rootfs):
    """`docker import` of the rootfs tar, once: an existing image of that name is reused."""
    import docker

    try:
        return docker_client.images.get(IMAGE)
    except docker.errors.ImageNotFound:
        pass
    repo, tag = IMAGE.rsplit(":", 1)
    docker_client.api.import_image(src=rootfs("bookworm"), repository=repo, tag=tag)
    return docker_client.images.get(IMAGE)


@pytest.mark.docker
@pytest.mark.e2e
def test_docker_source_matches_archive(bookworm_image, debian_archive, capsys):
    # no layer cache: the docker-archive's layers have the same diff_ids and would be served from it
    assert main(["inspect", f"docker:{IMAGE}", "--no-cache", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)["image"]
    assert doc["digest"] == bookworm_image.id  # the image ID: the digest of its config
    assert doc["platform"] == "linux/amd64"
    facts = api.inspect_image(f"docker:{IMAGE}", ReadOptions(use_cache=False))
    reference = api.inspect_image(f"docker-archive:{debian_archive('bookworm')}")
    lib = facts.rdma.libibverbs
    assert (lib.version, lib.rdma_core, lib.private_abi) == ("1.14.44.0", "44.0", 34)
    assert facts.rdma == reference.rdma and facts.ucx == reference.ucx and facts.os == reference.os
    assert facts.packages == reference.packages
    assert [l.diff_id for l in facts.layers] == [l.diff_id for l in reference.layers]


@pytest.fixture(scope="module")
def two_layer_image(docker_client):
    """A two-layer image built by the daemon itself: a whiteout in the top layer hides a file."""
    import docker

    name = "imgcheck-test/two-layers:latest"
    try:
        return docker_client.images.get(name)
    except docker.errors.ImageNotFound:
        pass
    base_tar = io.BytesIO()
    with tarfile.open(fileobj=base_tar, mode="w") as tar:
        for path, data in (
            ("etc/os-release", b'ID=debian\nVERSION_ID="12"\n'),
            ("etc/nccl.conf", b"NCCL_IB_DISABLE=1\n"),
        ):
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    docker_client.api.import_image(src=base_tar.getvalue(), repository="imgcheck-test/two-layers-base", tag="latest")
    context = io.BytesIO()
    dockerfile = b"FROM imgcheck-test/two-layers-base:latest\nCOPY os-release /etc/os-release\nENV NCCL_DEBUG=WARN\n"
    with tarfile.open(fileobj=context, mode="w") as tar:
        for path, data in (("Dockerfile", dockerfile), ("os-release", b'ID=debian\nVERSION_ID="13"\n')):
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    image, _ = docker_client.images.build(fileobj=context, custom_context=True, tag=name, rm=True)
    return image


@pytest.mark.docker
def test_docker_source_layer_order_and_env(two_layer_image):
    facts = api.inspect_image("docker:imgcheck-test/two-layers:latest", ReadOptions(use_cache=False))
    assert len(facts.layers) == 2
    assert facts.os.version_id == "13"  # the top layer's copy wins
    assert facts.os.layer == facts.layers[1].diff_id
    assert facts.env["NCCL_DEBUG"] == "WARN"
    assert facts.nccl_conf.get("NCCL_IB_DISABLE") == "1"


@pytest.mark.docker
def test_docker_source_errors(docker_client, two_layer_image, capsys):
    with pytest.raises(UnavailableError, match="no such image"):
        api.inspect_image("docker:imgcheck-test/absent:never")
    with pytest.raises(BadInputError, match="not the requested linux/arm64"):
        api.inspect_image("docker:imgcheck-test/two-layers:latest", ReadOptions(platform=parse_platform("linux/arm64")))


def test_docker_daemon_not_running(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    assert main(["inspect", "docker:debian:bookworm"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "cannot connect to the Docker daemon" in err and "is it running" in err
