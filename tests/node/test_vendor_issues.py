"""Vendor known issues (catalogs/vendor_known_issues.json) and nvidia-peermem module options
(catalogs/nvidia_kernel_modules.json, generated from NVIDIA/open-gpu-kernel-modules' release tags), judged by
VENDOR-KNOWN-ISSUE and NODE-PEERMEM-OPTION on fixture roots laid out as the hosts lay them out: /sys/module/<name>/,
/proc/driver/nvidia/version, MLNX_OFED's ofed_info, /etc/modprobe.d."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil

from engine_facts import matrix

from imgcheck.engine.evaluate import evaluate_node
from imgcheck.engine.node_only import NODE_ONLY_IMAGE
from imgcheck.node.probe import probe

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
ISSUE, OPTION = "VENDOR-KNOWN-ISSUE", "NODE-PEERMEM-OPTION"
MOFED = "mlnx-ofed-23.10-ubuntu2204"  # MLNX_OFED 23.10-1.1.9.0, driver 535.129.03, nvidia_peermem not loaded
DOCA = "doca-24.10-ubuntu2404"  # DOCA-OFED 24.10, open driver 565.57.01, nvidia_peermem loaded


def _copy(tmp_path, name):
    dest = tmp_path / name
    shutil.copytree(os.path.join(FIXTURES, name), dest, symlinks=True)
    return dest


def _check(facts):
    result = evaluate_node(NODE_ONLY_IMAGE, facts, matrix())
    return {f.id: f for f in result.findings}, {u.rule: u.reason for u in result.unknowns}


def _mofed_release(root, release: str, peermem: bool = True):
    """The MOFED fixture as a host running another MLNX_OFED release: ofed_info and the modules' version files say
    it, as MLNX_OFED writes them; with nvidia_peermem loaded (its /sys/module directory, version = the driver's)."""
    info = root / "usr/bin/ofed_info"
    short = release.rsplit(".", 1)[0]  # OFED-5.4-1.0.3 beside MLNX_OFED_LINUX-5.4-1.0.3.0, as ofed_info prints them
    info.write_text(info.read_text().replace("23.10-1.1.9.0", release).replace("23.10-1.1.9", short))
    for module in ("mlx5_core", "ib_uverbs", "mlx5_ib", "ib_core"):
        (root / "sys/module" / module / "version").write_text(short + "\n")
    if peermem:
        shutil.copytree(root / "sys/module/nvidia", root / "sys/module/nvidia_peermem")


def test_peer_mr_deadlock_fires_in_range(tmp_path):
    root = _copy(tmp_path, MOFED)
    _mofed_release(root, "5.4-1.0.3.0")
    facts = probe(str(root))
    assert facts.rdma.stack == "mlnx_ofed" and facts.rdma.ofed_version == "5.4-1.0.3.0"
    assert facts.gpu.peermem.loaded is True
    found, _ = _check(facts)
    assert ISSUE in found
    assert "#2696789" in found[ISSUE].mechanism and "5.4-3.0.3.0" in found[ISSUE].mechanism
    assert "#2739689" in found[ISSUE].mechanism  # the same release's peer MR deregistration race (UMR QP error)
    assert found[ISSUE].severity == "warning"


def test_peer_mr_deadlock_silent_once_fixed(tmp_path):
    for release in ("5.4-3.0.3.0", "5.5-1.0.3.2"):
        root = _copy(tmp_path / release, MOFED)
        _mofed_release(root, release)
        found, unknown = _check(probe(str(root)))
        assert ISSUE not in found, release
        assert ISSUE not in unknown, release  # no row left in range for this release


def test_peer_mr_deadlock_needs_a_peer_client(tmp_path):
    root = _copy(tmp_path, MOFED)
    _mofed_release(root, "5.4-1.0.3.0", peermem=False)
    found, unknown = _check(probe(str(root)))
    assert ISSUE not in found and ISSUE not in unknown  # no peer-memory client loaded: no peer MRs to invalidate


def test_vf_issue_is_an_unknown_naming_the_question():
    found, unknown = _check(probe(os.path.join(FIXTURES, MOFED)))  # 23.10 >= 5.9-0.5.6.0, no fix named
    assert ISSUE not in found
    # nvidia_peermem not loaded and nv_peer_mem absent: the peer-client condition is false, nothing may apply
    assert ISSUE not in unknown


def test_unknown_ofed_release_is_unknown(tmp_path):
    root = _copy(tmp_path, MOFED)
    _mofed_release(root, "5.4-1.0.3.0")
    facts = probe(str(root))
    facts = dataclasses.replace(
        facts,
        rdma=dataclasses.replace(facts.rdma, ofed_version=None),
        unknown={**facts.unknown, "rdma.ofed_version": "ofed_info unreadable"},
    )
    found, unknown = _check(facts)
    assert ISSUE not in found and "ofed_info unreadable" in unknown[ISSUE]


def _options(root, line: str):
    os.makedirs(root / "etc/modprobe.d", exist_ok=True)
    (root / "etc/modprobe.d/nvidia-peermem.conf").write_text(f"# GPUDirect RDMA\n{line}\n")


def test_invalid_peermem_value_fails_module_init(tmp_path):
    root = _copy(tmp_path, DOCA)
    _options(root, "options nvidia-peermem peerdirect_support=2")
    found, _ = _check(probe(str(root)))
    f = found[OPTION]
    assert f.severity == "warning" and "0 or 1" in f.mechanism and "peerdirect_support" in f.title
    assert "open-gpu-kernel-modules@" in f.mechanism  # the source line of the parameter


def test_parameter_absent_from_the_drivers_release_is_ignored(tmp_path):
    root = _copy(tmp_path, MOFED)  # driver 535.129.03: persistent_api_support first appears in 560.28.03
    _options(root, "options nvidia_peermem persistent_api_support=0")
    found, _ = _check(probe(str(root)))
    f = found[OPTION]
    assert f.severity == "warning" and "persistent_api_support" in f.title and "peerdirect_support" in f.mechanism


def test_valid_options_say_nothing(tmp_path):
    root = _copy(tmp_path, DOCA)  # driver 565.57.01 has both parameters
    _options(root, "options nvidia-peermem peerdirect_support=0 persistent_api_support=1")
    found, unknown = _check(probe(str(root)))
    assert OPTION not in found and OPTION not in unknown


def test_unknown_driver_release_is_unknown(tmp_path):
    root = _copy(tmp_path, DOCA)
    _options(root, "options nvidia-peermem peerdirect_support=2")
    os.unlink(root / "proc/driver/nvidia/version")
    shutil.rmtree(root / "sys/module/nvidia")
    facts = probe(str(root))
    assert facts.gpu.driver_version is None
    found, unknown = _check(facts)
    assert OPTION not in found and OPTION in unknown


def _nv_peer_mem(root, version: str):
    """nv_peer_mem loaded as its DKMS package leaves it: /sys/module/nv_peer_mem/version is its DRV_VERSION
    (Mellanox/nv_peer_memory@1.2-0:nv_peer_mem.c defines "1.2-0")."""
    shutil.copytree(root / "sys/module/nvidia", root / "sys/module/nv_peer_mem")
    (root / "sys/module/nv_peer_mem/version").write_text(version + "\n")


def test_nv_peer_mem_newer_than_1_1_on_mlnx_ofed_4_9(tmp_path):
    root = _copy(tmp_path, MOFED)
    _mofed_release(root, "4.9-7.1.0.0", peermem=False)
    _nv_peer_mem(root, "1.2-0")
    facts = probe(str(root))
    assert facts.rdma.ofed_version == "4.9-7.1.0.0" and facts.gpu.peermem.legacy_nv_peer_mem is True
    found, _ = _check(facts)
    assert "nv_peer_mem 1.1 on MLNX_OFED 4.9 LTS" in found[ISSUE].fixes[0]


def test_nv_peer_mem_1_1_on_mlnx_ofed_4_9_is_the_supported_pair(tmp_path):
    root = _copy(tmp_path, MOFED)
    _mofed_release(root, "4.9-7.1.0.0", peermem=False)
    _nv_peer_mem(root, "1.1-0")
    found, unknown = _check(probe(str(root)))
    assert ISSUE not in found
    # the DevX-umem limitation of nv_peer_mem stays a question: no fact shows how the application registers memory
    assert "DevX umem" in unknown[ISSUE]


def test_generated_peermem_parameters_cover_every_release_read():
    """The generated table (tools/upstreams/gen_nvidia_kernel_modules.py) has peerdirect_support in every release from
    the first tag read, and persistent_api_support from its first release on, each with the values init accepts:
    a regeneration that loses a parameter or its accepted values breaks NODE-PEERMEM-OPTION silently otherwise."""
    rows = [r for r in matrix().rows("nvidia_kernel_modules") if r["kind"] == "param"]
    by_name: dict[str, list[dict]] = {}
    for r in rows:
        by_name.setdefault(r["subject"], []).append(r)
    assert set(by_name) == {"peerdirect_support", "persistent_api_support"}
    (pd,) = by_name["peerdirect_support"]  # unchanged in every release: one range, still read by the newest
    assert pd["removed_in"] is None and json.loads(pd["value"])["accepted"] == ["0", "1"]
    (pa,) = by_name["persistent_api_support"]
    assert json.loads(pa["value"])["default"] == "1" and pa["first_release"] != pd["first_release"]
