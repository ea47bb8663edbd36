"""Dockerfile.probe built and run with the real Docker daemon against fixture roots mounted read-only.

No Docker Hub here: the base image is a local Debian bookworm rootfs (mmdebstrap, python3 +
python3-venv, cached in /var/cache/imgcheck-rootfs) imported with `docker import`. The Dockerfile
builds imgcheck from the source inside the image, as documented; with no network in the build, the
dependency wheels (and setuptools for the build) come from a wheelhouse (tests/wheelhouse.py) passed
with PIP_OFFLINE=1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
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
        subprocess.run(
            [
                "mmdebstrap",
                "--quiet",
                "--variant=minbase",
                "--format=tar",
                "--include=python3,python3-venv",
                "bookworm",
                tmp,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        os.replace(tmp, tar)
    client.api.import_image_from_file(tar, repository=BASE_TAG.split(":")[0], tag=BASE_TAG.split(":")[1])
    return BASE_TAG


def _context(ctx: str) -> None:
    """What `docker build -f Dockerfile.probe .` sees in a checkout, plus the wheelhouse for an offline build."""
    from wheelhouse import copy_source, dependency_wheels

    copy_source(ctx)
    for name in ("Dockerfile.probe", ".dockerignore"):  # the repository's ignore file must keep what is needed
        shutil.copy(os.path.join(REPO, name), os.path.join(ctx, name))
    shutil.copytree(dependency_wheels(), os.path.join(ctx, "dist", "probe-wheels"))


@pytest.fixture(scope="module")
def probe_image(docker_client, tmp_path_factory):
    base = _base_image(docker_client)
    ctx = tmp_path_factory.mktemp("probe-ctx")
    _context(str(ctx))
    tag = f"imgcheck-probe-test:{uuid.uuid4().hex[:12]}"
    docker_client.images.build(
        path=str(ctx),
        dockerfile="Dockerfile.probe",
        tag=tag,
        rm=True,
        forcerm=True,
        buildargs={"BASE_IMAGE": base, "PIP_OFFLINE": "1"},
        network_mode="none",
    )
    yield tag
    docker_client.images.remove(tag, force=True)


def _run(client, image, root, *args):
    output = client.containers.run(
        image,
        list(args),
        remove=True,
        network_disabled=True,
        read_only=True,
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        volumes={root: {"bind": "/host", "mode": "ro"}},
        stdout=True,
        stderr=False,
    )
    return json.loads(output)


@pytest.mark.parametrize("fixture", FIXTURES_IN_IMAGE_TEST)
def test_container_probe_equals_in_process_probe(docker_client, probe_image, fixture):
    root = fixture_root(fixture)
    got = _run(docker_client, probe_image, root)
    want = to_dict(probe(root))
    got.pop("collected_at")
    want.pop("collected_at")
    # the probe names its own root (the container mounts the fixture at /host); every file it read is the same
    assert got.pop("origin") == {"kind": "origin", "origin": "probe of /host"}
    assert want.pop("origin") == {"kind": "origin", "origin": f"probe of {os.path.abspath(root)}"}
    assert got == want
    assert got["rdma"]["stack"] in ("mlnx_ofed", "doca", "inbox")


def test_container_runs_as_nobody_and_rejects_bad_input(docker_client, probe_image, tmp_path):
    from docker.errors import ContainerError

    config = docker_client.images.get(probe_image).attrs["Config"]
    assert config["User"] == "65534:65534"
    with pytest.raises(ContainerError) as info:
        docker_client.containers.run(
            probe_image,
            ["--name", "../x"],
            remove=True,
            network_disabled=True,
            volumes={fixture_root("inbox-ubuntu2204"): {"bind": "/host", "mode": "ro"}},
        )
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


def test_image_holds_only_the_installed_probe(docker_client, probe_image):
    """Multi-stage: the final image has the venv and nothing of the build (source, wheels, pip, caches)."""
    script = (
        "test -x /opt/imgcheck/bin/imgcheck && test ! -e /src && test ! -e /opt/imgcheck/bin/pip "
        "&& ! find /opt/imgcheck -name __pycache__ | grep -q . && echo clean"
    )
    out = docker_client.containers.run(
        probe_image, ["-c", script], entrypoint="/bin/sh", remove=True, network_disabled=True
    )
    assert out.strip() == b"clean"
    history = docker_client.api.history(probe_image)
    assert not any(
        "probe-wheels" in (h.get("CreatedBy") or "") and "COPY" in (h.get("CreatedBy") or "") for h in history
    )
