"""Dockerfile.probe built and run with the real Docker daemon against fixture roots mounted read-only.

No Docker Hub here: the base image is a local Debian bookworm rootfs (mmdebstrap, python3 +
python3-venv, cached in /var/cache/imgcheck-rootfs) imported with `docker import`, and imgcheck with
its dependencies goes in as wheels built on the host (`pip wheel`), installed with --no-index.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid

import pytest

from node_fixtures import fixture_root
from imgcheck.model.serde import to_dict
from imgcheck.node.probe import probe

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.environ.get("IMGCHECK_ROOTFS_CACHE", "/var/cache/imgcheck-rootfs")
BASE_TAG = "imgcheck-test-base:bookworm"
FIXTURES_IN_IMAGE_TEST = ("mlnx-ofed-5.8-rocky86", "doca-24.10-ubuntu2404", "inbox-ubuntu2404-open")

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def docker_client():
    docker = pytest.importorskip("docker")
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # no socket, daemon down, permission denied
        pytest.skip(f"no Docker daemon reachable ({exc.__class__.__name__}: {exc})")
    return client


def _base_image(client) -> str:
    from docker.errors import ImageNotFound

    try:
        client.images.get(BASE_TAG)
        return BASE_TAG
    except ImageNotFound:
        pass
    tar = os.path.join(CACHE, "bookworm-python3.tar")
    if not os.path.isfile(tar):
        if shutil.which("mmdebstrap") is None:
            pytest.skip("mmdebstrap is not installed (apt-get install mmdebstrap)")
        os.makedirs(CACHE, exist_ok=True)
        tmp = os.path.join(CACHE, f"bookworm-python3.tmp{os.getpid()}.tar")  # the .tar suffix picks the format
        subprocess.run(["mmdebstrap", "--quiet", "--variant=minbase", "--format=tar",
                        "--include=python3,python3-venv", "bookworm", tmp], check=True, stdout=subprocess.DEVNULL)
        os.replace(tmp, tar)
    client.api.import_image_from_file(tar, repository=BASE_TAG.split(":")[0], tag=BASE_TAG.split(":")[1])
    return BASE_TAG


def _wheels(dest: str) -> None:
    """imgcheck's wheel built now; its dependencies' wheels cached by the pyproject's content."""
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as fh:
        key = hashlib.sha256(fh.read()).hexdigest()[:16]
    deps = os.path.join(CACHE, f"probe-wheels-py{sys.version_info[0]}{sys.version_info[1]}-{key}")
    if not os.path.isdir(deps):
        tmp = deps + f".tmp{os.getpid()}"
        result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", tmp, REPO],
                                capture_output=True, text=True)
        if result.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            pytest.skip(f"cannot build dependency wheels (package index unreachable?): {result.stderr[-300:]}")
        for name in os.listdir(tmp):
            if name.startswith("imgcheck-"):
                os.unlink(os.path.join(tmp, name))  # only dependencies are cached
        os.replace(tmp, deps)
    os.makedirs(dest)
    for name in os.listdir(deps):
        shutil.copy(os.path.join(deps, name), dest)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", dest, REPO],
                   check=True, capture_output=True)


@pytest.fixture(scope="module")
def probe_image(docker_client, tmp_path_factory):
    base = _base_image(docker_client)
    ctx = tmp_path_factory.mktemp("probe-ctx")
    shutil.copy(os.path.join(REPO, "Dockerfile.probe"), ctx / "Dockerfile.probe")
    _wheels(str(ctx / "dist" / "probe-wheels"))
    tag = f"imgcheck-probe-test:{uuid.uuid4().hex[:12]}"
    docker_client.images.build(path=str(ctx), dockerfile="Dockerfile.probe", tag=tag, rm=True, forcerm=True,
                               buildargs={"BASE_IMAGE": base}, network_mode="none")
    yield tag
    docker_client.images.remove(tag, force=True)


def _run(client, image, root, *args):
    output = client.containers.run(image, list(args), remove=True, network_disabled=True, read_only=True,
                                   cap_drop=["ALL"], security_opt=["no-new-privileges"],
                                   volumes={root: {"bind": "/host", "mode": "ro"}}, stdout=True, stderr=False)
    return json.loads(output)


@pytest.mark.parametrize("fixture", FIXTURES_IN_IMAGE_TEST)
def test_container_probe_equals_in_process_probe(docker_client, probe_image, fixture):
    root = fixture_root(fixture)
    got = _run(docker_client, probe_image, root)
    want = to_dict(probe(root))
    got.pop("collected_at")
    want.pop("collected_at")
    assert got == want
    assert got["rdma"]["stack"] in ("mlnx_ofed", "doca", "inbox")


def test_container_runs_as_nobody_and_rejects_bad_input(docker_client, probe_image, tmp_path):
    from docker.errors import ContainerError

    config = docker_client.images.get(probe_image).attrs["Config"]
    assert config["User"] == "65534:65534"
    with pytest.raises(ContainerError) as info:
        docker_client.containers.run(probe_image, ["--name", "../x"], remove=True, network_disabled=True,
                                     volumes={fixture_root("inbox-ubuntu2204"): {"bind": "/host", "mode": "ro"}})
    assert info.value.exit_status == 2
    assert b"invalid node name" in info.value.stderr and b"Traceback" not in info.value.stderr


def test_container_reads_the_real_host_root(docker_client, probe_image):
    """`-v /:/host:ro` as the DaemonSet mounts it: /host/proc and /host/sys come through the bind."""
    got = _run(docker_client, probe_image, "/", "--name", "this-host")
    want = to_dict(probe("/"))
    assert got["name"] == "this-host"
    assert got["kernel"] == want["kernel"] and got["kernel"]["release"]
    assert got["os"] == want["os"] and got["arch"] == want["arch"]
    assert got["rdma"] == want["rdma"]
    assert got["gpu"]["driver_version"] == want["gpu"]["driver_version"]
    assert got["gpu"]["peermem"] == want["gpu"]["peermem"]
    # the container's own limit, read through the host's procfs (/host/proc/self -> the probe's pid)
    assert isinstance(got["limits"]["memlock_kib"], int)
    assert "limits.memlock_kib" not in got["unknown"]
