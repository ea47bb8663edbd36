"""Dockerfile.serve built and run with the real Docker daemon: the container serves webhooks on a real
PostgreSQL database and checks an image pushed to a real registry.

No Docker Hub here (as in tests/node/test_probe_image.py): the base image is the local Debian
bookworm rootfs with python3 (mmdebstrap, cached in /var/cache/imgcheck-rootfs) imported with
`docker import`, and the build runs with no network, its wheels (imgcheck[serve-pg]'s dependencies)
from a wheelhouse. The container uses the host network only to reach the loopback registry and
database; its root filesystem is read-only and it runs as an unprivileged user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid

import pytest
import requests
from imagebuild import build_oci, make_layer
from pgkit import pg_server_url, pg_url  # noqa: F401  (fixtures)
from registryfixture import RegistryServer, free_port
from registrypush import Pusher
from servicekit import NODES, envelope, need_registry, post_event, wait_for, write_config

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'imgcheck[serve-pg]')")

pytestmark = [pytest.mark.docker, pytest.mark.registry]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.environ.get("IMGCHECK_ROOTFS_CACHE", "/var/cache/imgcheck-rootfs")
BASE_TAG = "imgcheck-test-base:bookworm"  # the same local base image the probe image test imports


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
            pytest.skip("no local base image and mmdebstrap is not installed (apt-get install mmdebstrap)")
        os.makedirs(CACHE, exist_ok=True)
        tmp = os.path.join(CACHE, f"bookworm-python3.tmp{os.getpid()}.tar")
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


@pytest.fixture(scope="module")
def serve_image(docker_client, tmp_path_factory):
    from wheelhouse import copy_source, dependency_wheels

    base = _base_image(docker_client)
    ctx = str(tmp_path_factory.mktemp("serve-ctx"))
    copy_source(ctx)
    for name in ("Dockerfile.serve", ".dockerignore"):  # the repository's ignore file must keep what is needed
        shutil.copy(os.path.join(REPO, name), os.path.join(ctx, name))
    shutil.copytree(dependency_wheels("serve-pg"), os.path.join(ctx, "dist", "serve-wheels"))
    tag = f"imgcheck-serve-test:{uuid.uuid4().hex[:12]}"
    docker_client.images.build(
        path=ctx,
        dockerfile="Dockerfile.serve",
        tag=tag,
        rm=True,
        forcerm=True,
        buildargs={"BASE_IMAGE": base, "PIP_OFFLINE": "1"},
        network_mode="none",
    )
    yield tag
    docker_client.images.remove(tag, force=True)


def _rows(url: str, sql: str, args=()) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql, args).fetchall()


def test_the_image_serves_webhooks_on_postgresql(docker_client, serve_image, pg_url, tmp_path):
    need_registry()
    registry = RegistryServer(str(tmp_path / "registry"))
    container = None
    try:
        image = build_oci([make_layer({"etc/os-release": b"ID=debian\nVERSION_ID=12\n", "opt/app": b"x"})])
        digest = Pusher(registry.url).push_image("team/app", "v1", image)
        cfg_dir = tmp_path / "cfg"
        cfg_dir.mkdir()
        cfg = write_config(
            str(cfg_dir / "imgcheck.toml"),
            registry.host,
            database="/var/lib/imgcheck/state/x.db",
            extra_server='database_url_env = "IMGCHECK_DATABASE_URL"\nlease_seconds = 10',
        )
        os.chmod(cfg, 0o644)
        port = free_port()
        container = docker_client.containers.run(
            serve_image,
            ["--config", "/etc/imgcheck/imgcheck.toml", "--host", "127.0.0.1", "--port", str(port)],
            detach=True,
            network_mode="host",
            read_only=True,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            environment={"IMGCHECK_DATABASE_URL": pg_url},
            tmpfs={"/var/lib/imgcheck": "mode=1777", "/tmp": "mode=1777"},
            volumes={cfg: {"bind": "/etc/imgcheck/imgcheck.toml", "mode": "ro"}, NODES: {"bind": NODES, "mode": "ro"}},
        )
        base = f"http://127.0.0.1:{port}"

        def ready():
            container.reload()
            assert container.status != "exited", container.logs().decode(errors="replace")
            try:
                return requests.get(base + "/readyz", timeout=2).status_code == 200
            except requests.ConnectionError:
                return False

        wait_for(ready, 60, "the container to be ready", 0.2)
        assert post_event(base, envelope("team/app", digest, tag="v1")).status_code == 202
        wait_for(lambda: _rows(pg_url, "SELECT state FROM jobs") == [("done",)], 60, "the container to check the image")
        reports = requests.get(f"{base}/results/{digest}", timeout=10).json()["images"][0]["reports"]
        assert sorted(reports) == ["lab", "prod"]
        assert all(r["image"]["digest"] == digest and r["image"]["os"]["id"] == "debian" for r in reports.values())
        assert container.attrs["Config"]["User"] == "10001:10001"
        container.stop(timeout=20)
        logs = container.logs().decode(errors="replace")
        assert "Traceback" not in logs, logs
    finally:
        if container is not None:
            container.remove(force=True)
        registry.stop()
