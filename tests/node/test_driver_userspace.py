"""The host's user-space NVIDIA driver against the loaded module (NODE-DRIVER-USERSPACE-MISMATCH).

The host layouts are what the driver packages install: Ubuntu's libnvidia-compute-535 puts
/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.<version> beside a libnvidia-ml.so.1 link to it (the listing in
NVIDIA/libnvidia-container#213); the GPU Operator's driver container exposes its root at /run/nvidia/driver.
The fixture node runs module 535.183.01 with its own user-space build; an unattended upgrade to 535.183.06
is the failing case.
"""

from __future__ import annotations

import json
import os
import shutil

from node_fixtures import FIXTURE_NAMES, fixture_root

from imgcheck.cli.main import main
from imgcheck.node.probe import probe

MODULE = "535.183.01"  # tests/node/fixtures/inbox-ubuntu2204/proc/driver/nvidia/version
LIBDIR = "usr/lib/x86_64-linux-gnu"


def host(tmp_path, *installs: tuple[str, str]):
    """The fixture node (its driver's own libraries in /usr/lib/x86_64-linux-gnu) after the user-space driver
    `version` was installed under `libdir`: an upgrade replaces the file and the libnvidia-ml.so.1 link."""
    root = tmp_path / "host"
    shutil.copytree(fixture_root("inbox-ubuntu2204"), root, symlinks=True)
    for libdir, version in installs:
        directory = root / libdir
        directory.mkdir(parents=True, exist_ok=True)
        for old in directory.glob("libnvidia-ml.so.*"):
            old.unlink()
        (directory / f"libnvidia-ml.so.{version}").write_bytes(b"")
        os.symlink(f"libnvidia-ml.so.{version}", directory / "libnvidia-ml.so.1")
    return str(root)


def test_probe_reads_the_version_libnvidia_ml_so_1_points_at(tmp_path):
    gpu = probe(host(tmp_path, (LIBDIR, "535.183.06"))).gpu
    assert (gpu.driver_version, gpu.userspace_driver_version) == (MODULE, "535.183.06")
    assert gpu.userspace_driver_path == f"/{LIBDIR}/libnvidia-ml.so.535.183.06"


def test_the_operator_driver_root_is_the_one_the_toolkit_mounts(tmp_path):
    root = host(tmp_path, (LIBDIR, "535.183.06"), (f"run/nvidia/driver/{LIBDIR}", MODULE))
    gpu = probe(root).gpu
    assert gpu.userspace_driver_version == MODULE
    assert gpu.userspace_driver_path.startswith("/run/nvidia/driver/")


def test_every_fixture_with_a_driver_has_its_own_build():
    for name in FIXTURE_NAMES:
        gpu = probe(fixture_root(name)).gpu
        assert gpu.userspace_driver_version == gpu.driver_version, name  # None for Jetson's L4T: not a driver


def test_no_library_or_two_versions_is_unknown_not_a_guess(tmp_path):
    root = host(tmp_path)
    for lib in (tmp_path / "host" / LIBDIR).glob("libnvidia-ml.so*"):
        lib.unlink()
    facts = probe(root)
    assert facts.gpu.userspace_driver_version is None
    assert "no libnvidia-ml.so.1" in facts.unknown["gpu.userspace_driver_version"]
    shutil.rmtree(tmp_path / "host")
    two = probe(host(tmp_path, (LIBDIR, MODULE), ("usr/lib64", "535.183.06")))
    assert two.gpu.userspace_driver_version is None
    assert "several user-space drivers" in two.unknown["gpu.userspace_driver_version"]


def test_a_link_out_of_the_root_stays_inside_it(tmp_path):
    root = host(tmp_path)
    os.unlink(os.path.join(root, LIBDIR, "libnvidia-ml.so.1"))
    os.symlink("/etc/passwd", os.path.join(root, LIBDIR, "libnvidia-ml.so.1"))  # resolved under the root: absent
    facts = probe(root)
    assert facts.gpu.userspace_driver_version is None and "gpu.userspace_driver_version" in facts.unknown


def check(tmp_path, root, capsys):
    facts = tmp_path / "facts.json"
    assert main(["node", "probe", "--root", root, "-o", str(facts)]) == 0
    capsys.readouterr()
    code = main(["node", "check", "--node-facts", str(facts), "-o", "json"])
    return code, json.loads(capsys.readouterr().out)


def finding_ids(doc):
    return [f["id"] for f in doc["findings"]]


def test_node_check_fails_after_an_upgrade_under_the_running_module(tmp_path, capsys):
    code, doc = check(tmp_path, host(tmp_path, (LIBDIR, "535.183.06")), capsys)
    assert code == 1
    found = [f for f in doc["findings"] if f["id"] == "NODE-DRIVER-USERSPACE-MISMATCH"]
    assert len(found) == 1 and found[0]["severity"] == "error"
    assert "535.183.06" in found[0]["title"] and MODULE in found[0]["title"]
    assert {e["fact"] for e in found[0]["evidence"]} >= {"node.gpu.driver_version", "node.gpu.userspace_driver_version"}


def test_the_same_build_is_quiet(tmp_path, capsys):
    _, doc = check(tmp_path, host(tmp_path, (LIBDIR, MODULE)), capsys)
    assert "NODE-DRIVER-USERSPACE-MISMATCH" not in finding_ids(doc)
