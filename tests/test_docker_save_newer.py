"""The `docker save` layout of Docker >= 25 as a real daemon writes it (OCI blobs/, index.json, oci-layout
and manifest.json naming blobs/sha256/<hex>), not as the tests build it.

The daemon is Debian trixie's docker.io (26.x) that .ci/run downloads through apt (signature-checked) and
names in IMGCHECK_TEST_DOCKERD; this module starts its own instance on private directories and a private
socket (vfs storage, no networking), imports the real Debian rdma rootfs and saves it. Without the
variable the tests skip: the machine's own dockerd may be older (Debian 12's is 20.10).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import time

import pytest
from imagebuild import make_layer, write_tar_members

from imgcheck import api
from imgcheck.cli.main import main
from imgcheck.sources.read_options import ReadOptions
from imgcheck.view.reader import ReadStats

DOCKERD = os.environ.get("IMGCHECK_TEST_DOCKERD")
FORGED = make_layer({"etc/os-release": b'ID=ubuntu\nVERSION_ID="24.04"\n'})


@pytest.fixture(scope="module")
def newer_daemon(tmp_path_factory):
    """A docker SDK client of a private Docker >= 25 daemon."""
    if not DOCKERD or not os.access(DOCKERD, os.X_OK):
        pytest.skip("IMGCHECK_TEST_DOCKERD names no Docker >= 25 dockerd (.ci/run provides one)")
    docker = pytest.importorskip("docker")
    # a short root: the daemon's unix sockets (containerd's among them) must fit in sun_path
    root = tmp_path_factory.mktemp("d")
    sock = f"unix://{root}/docker.sock"
    log = open(root / "dockerd.log", "wb")
    proc = subprocess.Popen(
        [
            DOCKERD,
            "--data-root",
            str(root / "data"),
            "--exec-root",
            str(root / "x"),
            "-H",
            sock,
            "--pidfile",
            str(root / "pid"),
            "--bridge=none",
            "--iptables=false",
            "--ip6tables=false",
            "--storage-driver",
            "vfs",
        ],
        stdout=log,
        stderr=log,
    )
    client = None
    for _ in range(120):
        if proc.poll() is not None:
            pytest.fail(f"the newer dockerd exited: {(root / 'dockerd.log').read_text()[-2000:]}")
        try:
            client = docker.DockerClient(base_url=sock, timeout=300)  # asks the API version: needs the daemon
            break
        except docker.errors.DockerException:  # not listening yet
            time.sleep(0.5)
    if client is None:
        proc.kill()
        pytest.fail("the newer dockerd did not answer")
    version = client.version()["Version"]
    assert int(version.split(".")[0]) >= 25, version
    yield client
    client.close()
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()
    if os.path.ismount(root / "data"):  # dockerd mounts its data root on itself and leaves it on exit
        subprocess.run(["umount", "-l", str(root / "data")], check=False)
    shutil.rmtree(root / "data", ignore_errors=True)  # vfs layers are whole copies of the rootfs


@pytest.fixture(scope="module")
def saved(newer_daemon, rootfs, tmp_path_factory):
    """Path of `docker save` of the real bookworm rdma image, written by the newer daemon."""
    with open(rootfs("bookworm"), "rb") as fh:
        newer_daemon.api.import_image_from_data(fh, repository="rdma-bookworm", tag="newer")
    path = tmp_path_factory.mktemp("save") / "bookworm.tar"
    with open(path, "wb") as out:
        for chunk in newer_daemon.images.get("rdma-bookworm:newer").save(named=True):
            out.write(chunk)
    return str(path)


def _members(path: str) -> dict[str, bytes]:
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def test_the_real_layout_is_the_one_the_tests_build(saved):
    members = _members(saved)
    manifest = json.loads(members["manifest.json"])
    assert "oci-layout" in members and "index.json" in members
    assert all(name.startswith("blobs/sha256/") for name in manifest[0]["Layers"] + [manifest[0]["Config"]])


@pytest.mark.parametrize("scheme", ["docker-archive", "oci-archive"])
def test_real_newer_save_is_read(saved, debian_archive, scheme):
    facts = api.inspect_image(f"{scheme}:{saved}", ReadOptions(use_cache=False))
    reference = api.inspect_image(f"docker-archive:{debian_archive('bookworm')}", ReadOptions(use_cache=False))
    assert facts.os.version_id == "12"
    assert facts.rdma.libibverbs.version == reference.rdma.libibverbs.version
    assert [p.name for p in facts.rdma.providers] == [p.name for p in reference.rdma.providers]
    assert facts.ucx == reference.ucx
    assert facts.layers[0].diff_id == reference.layers[0].diff_id  # the same rootfs bytes, verified


def test_tampered_real_save_is_refused_and_poisons_no_cache(saved, tmp_path, monkeypatch, capsys):
    """An attacker's edit of a real save: the layer swapped for a forged blob stored under its own true
    digest (every blob name verifies), the genuine config kept, so the facts cache key is the genuine one."""
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    members = _members(saved)
    manifest = json.loads(members["manifest.json"])
    forged_name = "blobs/sha256/" + hashlib.sha256(FORGED).hexdigest()
    members[forged_name] = FORGED
    manifest[0]["Layers"] = [forged_name]
    members["manifest.json"] = json.dumps(manifest).encode()
    bad = write_tar_members(str(tmp_path / "bad.tar"), members)

    assert main(["inspect", f"docker-archive:{bad}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "diff_id" in err, err
    cache = tmp_path / "home" / "cache"
    assert not cache.exists() or not any(files for _root, _dirs, files in os.walk(cache))

    stats = ReadStats()
    facts = api.inspect_image(f"docker-archive:{saved}", ReadOptions(stats=stats))
    assert facts.os.id == "debian" and not stats.facts_cached and stats.layers_cached == []
