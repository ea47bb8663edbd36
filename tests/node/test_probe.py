"""The probe against fixture node roots (field by field), this machine's own root, and hostile roots."""

from __future__ import annotations

import json
import os
import shutil
import stat

import pytest
from node_fixtures import FIXTURE_NAMES, fixture_root

from imgcheck.cli.main import main
from imgcheck.model.node_io import dump_node_facts, parse_node_facts
from imgcheck.model.serde import to_dict
from imgcheck.node.hostroot import HostReadError, HostRoot
from imgcheck.node.ofed import parse_ofed_info
from imgcheck.node.probe import probe

RDMA = ("mlx5_core", "mlx5_ib", "ib_core", "ib_uverbs")
PROC_LIMITS = "soft 'Max locked memory' of the probe process"


def _mods(release, version, oot, paths):
    return {
        name: {"version": version, "out_of_tree": oot, "path": f"/lib/modules/{release}/{paths[name]}"}
        for name in paths
    }


INBOX_PATHS = {
    "mlx5_core": "kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko",
    "mlx5_ib": "kernel/drivers/infiniband/hw/mlx5/mlx5_ib.ko",
    "ib_core": "kernel/drivers/infiniband/core/ib_core.ko",
    "ib_uverbs": "kernel/drivers/infiniband/core/ib_uverbs.ko",
}


def _port(state="4: ACTIVE", phys="5: LinkUp", layer="InfiniBand", rate="400 Gb/sec (4X NDR)"):
    return {"port": 1, "state": state, "phys_state": phys, "link_layer": layer, "rate": rate}


def _dev(name, hca, fw, board, layer, ports):
    return {
        "name": name,
        "hca_type": hca,
        "fw_ver": fw,
        "board_id": board,
        "link_layer": layer,
        "ports": ports,
        "uverbs_abi": 1,
    }


EXPECTED = {
    "inbox-ubuntu2204": {
        "name": "gpu-roce-01",
        "kernel": "5.15.0-25-generic",
        "os": ("ubuntu", "22.04"),
        "arch": None,
        "stack": "inbox",
        "ofed_version": None,
        "uverbs_abi": 6,
        "peer_memory_api": False,
        "modules": {
            **_mods("5.15.0-25-generic", None, False, INBOX_PATHS),
            **_mods("5.15.0-25-generic", "535.183.01", True, {"nvidia": "updates/dkms/nvidia.ko"}),
        },
        "devices": [
            _dev(
                f"mlx5_{i}",
                "MT4129",
                "28.39.1002",
                "MT_0000000838",
                "Ethernet",
                [_port(layer="Ethernet", rate="200 Gb/sec (4X HDR)")],
            )
            for i in (0, 1)
        ],
        "driver": "535.183.01",
        "kind": "proprietary",
        "peermem": (False, None, False),
        "gpus": [(0, "NVIDIA H100 80GB HBM3", "0000:18:00.0"), (1, "NVIDIA H100 80GB HBM3", "0000:2a:00.0")],
        "memlock": 8192,
        "memlock_note": PROC_LIMITS,
        "unknown": {"dkms", "rdma.module_files.ib_core"},
        "stack_note": "in-tree",
    },
    "inbox-ubuntu2404-open": {
        "name": "gpu-ib-02",
        "kernel": "6.8.0-55-generic",
        "os": ("ubuntu", "24.04"),
        "arch": None,
        "stack": "inbox",
        "ofed_version": None,
        "uverbs_abi": 6,
        "peer_memory_api": False,
        "modules": {
            **_mods("6.8.0-55-generic", None, False, INBOX_PATHS),
            **_mods("6.8.0-55-generic", "565.57.01", True, {"nvidia": "updates/dkms/nvidia.ko.zst"}),
        },
        "devices": [
            _dev("mlx5_0", "MT4126", "28.37.1700", "MT_0000000970", "InfiniBand", [_port()]),
            _dev(
                "mlx5_1",
                "MT4126",
                "28.37.1700",
                "MT_0000000970",
                "InfiniBand",
                [_port(state="1: DOWN", phys="2: Polling")],
            ),
        ],
        "driver": "565.57.01",
        "kind": "open",
        "peermem": (False, None, False),
        "gpus": [(0, "NVIDIA H100 80GB HBM3", "0000:19:00.0")],
        "memlock": 8192,
        "memlock_note": PROC_LIMITS,
        "unknown": {"dkms", "kernel.cmdline", "kernel.config", "rdma.module_files.ib_core"},
        "stack_note": "in-tree",
    },
    "mlnx-ofed-5.8-rocky86": {
        "name": "node002",
        "kernel": "4.18.0-372.9.1.el8.x86_64",
        "os": ("rocky", "8.6"),
        "arch": "amd64",
        "stack": "mlnx_ofed",
        "ofed_version": "5.8-3.0.7.0",
        "uverbs_abi": 6,
        "peer_memory_api": True,
        "modules": {
            **_mods(
                "4.18.0-372.9.1.el8.x86_64",
                "5.8-3.0.7",
                True,
                {
                    "mlx5_core": "extra/mlnx-ofa_kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko",
                    "mlx5_ib": "extra/mlnx-ofa_kernel/drivers/infiniband/hw/mlx5/mlx5_ib.ko",
                    "ib_core": "extra/mlnx-ofa_kernel/drivers/infiniband/core/ib_core.ko",
                    "ib_uverbs": "extra/mlnx-ofa_kernel/drivers/infiniband/core/ib_uverbs.ko",
                },
            ),
            **_mods(
                "4.18.0-372.9.1.el8.x86_64",
                "535.104.05",
                True,
                {"nvidia": "extra/nvidia.ko.xz", "nvidia_peermem": "extra/nvidia-peermem.ko.xz"},
            ),
        },
        "devices": [
            _dev("mlx5_0", "MT4119", "16.23.1020", "MT_0000000008", "InfiniBand", [_port(rate="100 Gb/sec (4X EDR)")])
        ],
        "driver": "535.104.05",
        "kind": "proprietary",
        "peermem": (True, "535.104.05", False),
        "gpus": [(0, "NVIDIA A100-SXM4-80GB", "0000:31:00.0")],
        "memlock": -1,
        "memlock_note": "/etc/security/limits.conf",
        "unknown": {
            "rdma.packages",
            "dkms",
            "kernel.cmdline",
            "kernel.config",
            "rdma.module_files.ib_core",
            "rdma.module_files.nvidia_peermem",
            "net_interfaces.ipv4",  # no /proc/self in this root: /proc/net (-> self/net) is not readable
            "net_interfaces.ipv6",
            "limits.rdma",  # nor /proc/self/cgroup
        },
        "stack_note": "MLNX_OFED_LINUX-5.8-3.0.7.0",
    },
    "mlnx-ofed-23.10-ubuntu2204": {
        "name": "dgx-a100-07",
        "kernel": "5.15.0-25-generic",
        "os": ("ubuntu", "22.04"),
        "arch": None,
        "stack": "mlnx_ofed",
        "ofed_version": "23.10-1.1.9.0",
        "uverbs_abi": 6,
        "peer_memory_api": True,
        "modules": {
            **_mods("5.15.0-25-generic", "23.10-1.1.9", True, {n: f"updates/dkms/{n}.ko" for n in RDMA}),
            **_mods("5.15.0-25-generic", "535.129.03", True, {"nvidia": "updates/dkms/nvidia.ko"}),
        },
        "devices": [
            _dev(f"mlx5_{i}", "MT4129", "28.42.1000", "MT_0000000838", "InfiniBand", [_port()]) for i in (0, 1)
        ],
        "driver": "535.129.03",
        "kind": "proprietary",
        "peermem": (False, None, False),
        "gpus": [(0, "NVIDIA A100-SXM4-80GB", "0000:07:00.0"), (1, "NVIDIA A100-SXM4-80GB", "0000:0f:00.0")],
        "memlock": -1,
        "memlock_note": PROC_LIMITS,
        "unknown": {
            "dkms",
            "kernel.cmdline",
            "kernel.config",
            "rdma.module_files.ib_core",
            "rdma.module_files.nvidia_peermem",
        },
        "stack_note": "MLNX_OFED_LINUX-23.10-1.1.9.0",
    },
    "doca-24.10-ubuntu2404": {
        "name": "dgx01",
        "kernel": "6.8.0-55-generic",
        "os": ("ubuntu", "24.04"),
        "arch": None,
        "stack": "doca",
        "ofed_version": "24.10-1.1.4.0.200",
        "uverbs_abi": 6,
        "peer_memory_api": True,
        "modules": {
            **_mods("6.8.0-55-generic", "24.10-1.1.4", True, {n: f"updates/dkms/{n}.ko.zst" for n in RDMA}),
            **_mods(
                "6.8.0-55-generic",
                "565.57.01",
                True,
                {"nvidia": "updates/dkms/nvidia.ko.zst", "nvidia_peermem": "updates/dkms/nvidia-peermem.ko.zst"},
            ),
        },
        "devices": [_dev("mlx5_0", "MT4129", "28.39.2048", "MT_0000000838", "InfiniBand", [_port()])],
        "driver": "565.57.01",
        "kind": "open",
        "peermem": (True, "565.57.01", False),
        "gpus": [(0, "NVIDIA H100 80GB HBM3", "0000:1b:00.0")],
        "memlock": -1,
        "memlock_note": PROC_LIMITS,
        "unknown": {
            "dkms",
            "kernel.cmdline",
            "kernel.config",
            "rdma.module_files.ib_core",
            "rdma.module_files.nvidia_peermem",
        },
        "stack_note": "doca-ofed",
    },
    "ofed-upgrade-stale-peermem": {
        "name": "gpu-ib-11",
        "kernel": "5.15.0-25-generic",
        "os": ("ubuntu", "22.04"),
        "arch": None,
        "stack": "mlnx_ofed",
        "ofed_version": "24.10-1.1.4.0",
        "uverbs_abi": 6,
        "peer_memory_api": True,
        "modules": {
            **_mods("5.15.0-25-generic", "24.10-1.1.4", True, {n: f"updates/dkms/{n}.ko" for n in RDMA}),
            **_mods("5.15.0-25-generic", "535.129.03", True, {"nvidia": "updates/dkms/nvidia.ko"}),
        },
        "devices": [_dev("mlx5_0", "MT4129", "28.42.1000", "MT_0000000838", "InfiniBand", [_port()])],
        "driver": "535.129.03",
        "kind": "proprietary",
        "peermem": (False, None, False),
        "gpus": [(0, "NVIDIA A100-SXM4-80GB", "0000:07:00.0")],
        "memlock": -1,
        "memlock_note": PROC_LIMITS,
        "unknown": {"kernel.cmdline", "kernel.config"},
        "stack_note": "MLNX_OFED_LINUX-24.10-1.1.4.0",
    },
    "ofed-other-kernel": {
        "name": "gpu-ib-12",
        "kernel": "5.15.0-91-generic",
        "os": ("ubuntu", "22.04"),
        "arch": None,
        "stack": "inbox",
        "ofed_version": None,
        "uverbs_abi": 6,
        "peer_memory_api": False,
        "modules": {
            **_mods("5.15.0-91-generic", None, False, INBOX_PATHS),
            **_mods("5.15.0-91-generic", "535.129.03", True, {"nvidia": "updates/dkms/nvidia.ko"}),
        },
        "devices": [_dev("mlx5_0", "MT4129", "28.42.1000", "MT_0000000838", "InfiniBand", [_port()])],
        "driver": "535.129.03",
        "kind": "proprietary",
        "peermem": (False, None, False),
        "gpus": [(0, "NVIDIA A100-SXM4-80GB", "0000:07:00.0")],
        "memlock": -1,
        "memlock_note": PROC_LIMITS,
        "unknown": {"kernel.cmdline", "kernel.config", "rdma.module_files.ib_core"},
        "stack_note": "its modules are not the ones loaded",
    },
    "jetson-orin-l4t35": {
        "name": "orin-nx-01",
        "kernel": "5.10.104-tegra",
        "os": ("ubuntu", "20.04"),
        "arch": None,
        "stack": "none",
        "ofed_version": None,
        "uverbs_abi": None,
        "peer_memory_api": False,
        "modules": _mods("5.10.104-tegra", None, True, {})
        | {"nvidia": {"version": None, "out_of_tree": True, "path": None}},
        "devices": [],
        "driver": None,
        "kind": "open",
        "peermem": (False, None, False),
        "gpus": [],
        "memlock": 8192,
        "memlock_note": PROC_LIMITS,
        "unknown": {
            "dkms",
            "gpu.driver_version",
            "kernel.cmdline",
            "kernel.config",
            "rdma.packages",
            "rdma.uverbs_abi",
            "pci_acs_redirect",
            "iommu_domains",
        },
        "stack_note": "no RDMA kernel module loaded",
    },
}


# node.fabric per fixture root (issue 32): none has an NVSwitch or Fabric Manager; the package databases are read
# except on Jetson (none) and Rocky 8.6 (BerkeleyDB rpm); no root shows the host's PID 1, so whether
# nv-fabricmanager runs is unknown everywhere.
_NO_FABRIC = {
    "nvswitch_pci": [],
    "fm_package": None,
    "fm_version": None,
    "fm_installed": False,
    "fm_enabled": None,
    "fm_running": None,
    "nvlsm_installed": False,
    "ib_umad_loaded": False,
    "gpu_fabric_state": None,
    "gpu_fabric_status": None,
}
FABRIC = {
    "doca-24.10-ubuntu2404": (_NO_FABRIC, {"fabric.fm_running"}),
    "inbox-ubuntu2204": (_NO_FABRIC, {"fabric.fm_running"}),
    "inbox-ubuntu2404-open": (_NO_FABRIC, {"fabric.fm_running"}),
    "jetson-orin-l4t35": (
        _NO_FABRIC | {"nvswitch_pci": None, "fm_installed": None, "nvlsm_installed": None},
        # no package database under the root: Fabric Manager is unknown
        {"fabric.fm_running", "fabric.fm_installed", "fabric.nvswitch_pci"},
    ),
    "mlnx-ofed-23.10-ubuntu2204": (_NO_FABRIC, {"fabric.fm_running"}),
    "mlnx-ofed-5.8-rocky86": (
        _NO_FABRIC | {"fm_installed": None, "nvlsm_installed": None},
        {"fabric.fm_running", "fabric.fm_installed"},  # a BerkeleyDB rpm database
    ),
    "ofed-other-kernel": (_NO_FABRIC, {"fabric.fm_running"}),
    "ofed-upgrade-stale-peermem": (_NO_FABRIC, {"fabric.fm_running"}),
}


# node.container_toolkit per fixture root: only the H100 node has the toolkit (packages 1.17.3, the packages' default
# config.toml, a generated CDI spec); Jetson has no package database or /etc/cdi; no root shows the host's /run.
_NO_TOOLKIT = {
    "installed": False,
    "toolkit_version": None,
    "libnvidia_container_version": None,
    "configs": [],
    "cdi_specs": [],
    "operator_driver_root": None,
}
_NO_RUN = {"container_toolkit.operator_driver_root"}
TOOLKIT = {name: (_NO_TOOLKIT, _NO_RUN) for name in FABRIC}
TOOLKIT["inbox-ubuntu2404-open"] = (
    {
        "installed": True,
        "toolkit_version": "1.17.3",
        "libnvidia_container_version": "1.17.3",
        "configs": [
            {
                "path": "/etc/nvidia-container-runtime/config.toml",
                "mode": "auto",
                "driver_root": "/",
                "driver_found": True,
            }
        ],
        "cdi_specs": ["/etc/cdi/nvidia.yaml"],
        "operator_driver_root": None,
    },
    _NO_RUN,
)
TOOLKIT["jetson-orin-l4t35"] = (
    _NO_TOOLKIT | {"installed": None},
    _NO_RUN | {"container_toolkit.installed"},
)
TOOLKIT["mlnx-ofed-5.8-rocky86"] = (_NO_TOOLKIT | {"installed": None}, _NO_RUN | {"container_toolkit.installed"})


def test_every_fixture_has_expectations():
    assert sorted(EXPECTED) == FIXTURE_NAMES


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_facts_field_by_field(name):
    want = EXPECTED[name]
    doc = to_dict(probe(fixture_root(name)))
    assert doc["name"] == want["name"]
    assert doc["kernel"]["release"] == want["kernel"]
    assert (doc["os"]["id"], doc["os"]["version_id"]) == want["os"]
    assert doc["arch"] == want["arch"]
    rdma = doc["rdma"]
    assert rdma["stack"] == want["stack"]
    assert rdma["ofed_version"] == want["ofed_version"]
    assert rdma["uverbs_abi"] == want["uverbs_abi"]
    assert rdma["peer_memory_api"] is want["peer_memory_api"]
    got_modules = {m: {k: facts[k] for k in ("version", "out_of_tree", "path")} for m, facts in rdma["modules"].items()}
    assert got_modules == want["modules"]
    assert all(len(m["srcversion"]) == 23 for m in rdma["modules"].values())  # the kernel's srcversion length
    old_keys = ("name", "hca_type", "fw_ver", "board_id", "link_layer", "ports", "uverbs_abi")
    port_keys = ("port", "state", "phys_state", "link_layer", "rate")
    assert [
        {k: ({**d, "ports": [{pk: p[pk] for pk in port_keys} for p in d["ports"]]})[k] for k in old_keys}
        for d in rdma["devices"]
    ] == want["devices"]
    assert all(d["driver"] == "mlx5_core" and d["pci_address"] for d in rdma["devices"])
    gpu = doc["gpu"]
    assert gpu["driver_version"] == want["driver"]
    assert gpu["kernel_module"] == want["kind"]
    peermem = gpu["peermem"]
    assert (peermem["loaded"], peermem["version"], peermem["legacy_nv_peer_mem"]) == want["peermem"]
    assert [(g["index"], g["name"], g["pci_bus_id"]) for g in gpu["gpus"]] == want["gpus"]
    assert all(g["uuid"].startswith("GPU-") for g in gpu["gpus"])
    assert gpu["l4t_release"] == ("35.3.1" if name.startswith("jetson") else None)
    assert doc["limits"]["memlock_kib"] == want["memlock"]
    # cgroup v2 with the rdma controller and no rdma.max on the probe's path: no limit ({}); rocky86 has no
    # /proc/self, so its cgroup is unknown
    assert doc["limits"]["rdma"] == (None if name == "mlnx-ofed-5.8-rocky86" else {})
    assert want["memlock_note"] in doc["notes"]["limits.memlock_kib"]
    # the fixtures write GID tables for RoCE ports only (what ENV-NCCL-IB-GID-INDEX-* read); an IB port's is unknown
    gid_keys = {k for k in doc["unknown"] if k.endswith(".gids")}
    assert gid_keys == {
        f"rdma.devices.{d['name']}.ports.{p['port']}.gids"
        for d in rdma["devices"]
        for p in d["ports"]
        if p["link_layer"] != "Ethernet"
    }
    fabric, fabric_unknown = FABRIC[name]
    assert doc["fabric"] == fabric
    toolkit, toolkit_unknown = TOOLKIT[name]
    assert doc["container_toolkit"] == toolkit
    # every fixture with a driver shows the MIG capabilities the driver creates and no GPU instance
    assert doc["mig"] == {"gpu_instances": {}, "profiles": None}
    # the fixture roots hold no /dev, Docker config, Yama file or modprobe.d: those node_state facts are unknown there
    # (tests/node/test_node_state.py reads them from real layouts); nouveau is not loaded, no build tree is installed
    # ib_core's netns_mode: the RDMA roots load ib_core and keep no parameters/ dir; the Jetson root has no ib_core
    state = dict(FIXTURE_STATE, rdma_netns_mode="absent" if name in NO_IB_CORE else None)
    assert doc["state"] == state
    state_unknown = {f"state.{k}" for k, v in state.items() if v is None} - {"state.docker_runtimes"}
    # no fixture loads GDRCopy's gdrdrv; with no /dev/null and no /proc/devices under the roots, its device node and
    # character major are unknown, not absent (tests/node/test_gdrdrv.py reads them from real layouts)
    assert (gpu["gdrdrv_loaded"], gpu["gdrdrv_version"], gpu["gdrdrv_device"]) == (False, None, None)
    gdrdrv_unknown = {"gpu.gdrdrv_device", "gpu.gdrdrv_device_mode", "gpu.gdrdrv_registered"}
    assert set(doc["unknown"]) - gid_keys == (
        want["unknown"] | fabric_unknown | toolkit_unknown | state_unknown | gdrdrv_unknown
    )
    assert "lo" in [i["name"] for i in doc["net_interfaces"]]  # every network namespace has lo
    assert want["stack_note"] in doc["notes"]["rdma.stack"]


FIXTURE_STATE = {
    "docker_default_runtime": None,
    "docker_runtimes": None,
    "shm_mode": None,
    "yama_ptrace_scope": None,
    "nouveau_loaded": False,
    "nouveau_blacklisted": None,
    "kernel_headers": False,
    "imex_channels": None,
    "imex_registered": None,
    "nvidia_caps": None,
    "cgroup_version": "v2",  # the roots show /sys/fs/cgroup/cgroup.controllers
    "docker_cgroup_driver": None,
    "containerd_systemd_cgroup": None,
    "nvidia_char_links": None,
}
NO_IB_CORE = {"jetson-orin-l4t35"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_facts_survive_json_round_trip(name):
    facts = probe(fixture_root(name))
    assert parse_node_facts(json.loads(dump_node_facts(facts)), "round trip") == facts


def test_this_machine_reports_no_rdma_and_no_nvidia_driver(capsys, tmp_path):
    if os.listdir("/sys/class/infiniband") if os.path.isdir("/sys/class/infiniband") else False:
        pytest.skip("this machine has RDMA devices")
    if os.path.exists("/proc/driver/nvidia/version"):
        pytest.skip("this machine has an NVIDIA driver")
    out = tmp_path / "me.json"
    assert main(["node", "probe", "--root", "/", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["kernel"]["release"] == open("/proc/sys/kernel/osrelease").read().strip()
    assert doc["rdma"]["stack"] == "none" and doc["rdma"]["devices"] == []
    assert doc["gpu"]["driver_version"] is None and doc["gpu"]["gpus"] == []
    assert doc["gpu"]["peermem"]["loaded"] is False
    assert doc["unknown"]["gpu.driver_version"].startswith("no NVIDIA kernel driver loaded")
    assert doc["limits"]["memlock_kib"] is not None  # our own limit is always readable
    err = capsys.readouterr().err
    assert "RDMA stack: none (no RDMA device and no RDMA kernel module loaded)" in err
    assert "NVIDIA driver: none loaded" in err


def test_root_without_proc_or_sys_makes_every_fact_unknown_with_a_reason(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "hostname").write_text("bare\n")
    facts = probe(str(tmp_path))
    assert facts.name == "bare"
    assert facts.kernel.release is None and facts.rdma.stack is None and facts.gpu.driver_version is None
    assert facts.rdma.peer_memory_api is None and facts.gpu.peermem.loaded is None
    assert facts.limits.memlock_kib is None
    assert "/sys/module is not visible" in facts.unknown["rdma.modules"]
    assert "/sys/class is not visible" in facts.unknown["rdma.devices"]
    assert facts.unknown["gpu.driver_version"] == "/proc is not visible under the probe root"
    for key in ("kernel.release", "os", "rdma.stack", "rdma.peer_memory_api", "limits.memlock_kib"):
        assert facts.unknown[key]


def test_symlinks_never_leave_the_root(tmp_path):
    outside = tmp_path / "secret"
    outside.write_text("LEAKED\n")
    root = tmp_path / "root"
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "etc").mkdir()
    (root / "etc/hostname").write_text("inside\n")
    (root / "secret").write_text("5.15.0-in-root\n")
    # absolute and ../ links that would escape a naive os.path.join(root, ...)
    os.symlink("/../../../secret", root / "proc/sys/kernel/osrelease")
    os.symlink("../../../../../../../../etc/hostname", root / "hostname-link")
    host = HostRoot(str(root))
    assert host.read_value("/proc/sys/kernel/osrelease") == "5.15.0-in-root"
    assert host.read_value("/hostname-link") == "inside"
    assert probe(str(root)).kernel.release == "5.15.0-in-root"


def test_symlink_loop_is_an_unknown_not_a_hang(tmp_path):
    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    os.symlink("osrelease", tmp_path / "proc/sys/kernel/osrelease")
    with pytest.raises(HostReadError, match="too many symlinks"):
        HostRoot(str(tmp_path)).read_value("/proc/sys/kernel/osrelease")
    facts = probe(str(tmp_path), name="loop")
    assert facts.kernel.release is None and "too many symlinks" in facts.unknown["kernel.release"]


def test_oversized_and_non_regular_files_are_refused(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 2048)
    (tmp_path / "dir").mkdir()
    host = HostRoot(str(tmp_path))
    with pytest.raises(HostReadError, match="larger than 1024"):
        host.read_bytes("/big", max_bytes=1024)
    with pytest.raises(HostReadError, match="not a regular file"):
        host.read_bytes("/dir")
    assert host.read_bytes("/missing") is None


def test_ofed_info_is_read_never_executed(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(fixture_root("inbox-ubuntu2204"), root, symlinks=True)
    marker = tmp_path / "executed"
    script = root / "usr/bin/ofed_info"
    script.write_text(
        f'#!/bin/sh\ntouch {marker}\nif [ "X$1" == "X-s" ]; then echo MLNX_OFED_LINUX-23.10-1.1.9.0:; exit; fi\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    facts = probe(str(root))
    assert not marker.exists()
    # an OFED userspace is installed, but the loaded modules are in-tree: the kernel stack is inbox
    assert facts.rdma.stack == "inbox" and facts.rdma.ofed_version is None
    assert (
        "ofed_info says MLNX_OFED_LINUX-23.10-1.1.9.0, but its modules are not the ones loaded"
        in facts.notes["rdma.stack"]
    )


@pytest.mark.parametrize(
    "script,expected",
    [
        (
            'if [ "X$1" == "X-s" ]; then echo MLNX_OFED_LINUX-5.8-3.0.7.0:; exit 0; fi\ncat << EOF\nMLNX_OFED_LINUX-5.8-3.0.7.0 (OFED-5.8-3.0.7):\n',
            "MLNX_OFED_LINUX-5.8-3.0.7.0",
        ),
        ('if [ "$1" == "-s" ]; then echo MLNX_OFED_LINUX-4.9-6.0.6.0:; exit; fi\n', "MLNX_OFED_LINUX-4.9-6.0.6.0"),
        ('if [ "X$1" == "X-s" ]; then echo OFED-internal-24.01-0.3.3:; exit 0; fi\n', "OFED-internal-24.01-0.3.3"),
        ("#!/bin/bash\ncat << EOF\nOFED-internal-24.10-2.1.8:\n\nclusterkit:\n", "OFED-internal-24.10-2.1.8"),
        ("#!/bin/bash\necho hello\n", None),
    ],
)
def test_parse_ofed_info(script, expected):
    assert parse_ofed_info(script) == expected


def test_taint_decides_over_file_location(tmp_path):
    """A DKMS build that failed for a new kernel leaves the in-tree module loaded although updates/ has one."""
    root = tmp_path / "root"
    shutil.copytree(fixture_root("mlnx-ofed-23.10-ubuntu2204"), root, symlinks=True)
    for name in RDMA:
        (root / f"sys/module/{name}/taint").write_text("\n")
        (root / f"sys/module/{name}/version").unlink()
    facts = probe(str(root))
    assert all(facts.rdma.modules[n].out_of_tree is False for n in RDMA)
    assert facts.rdma.stack == "inbox"


def test_probe_cli_rejects_bad_name_and_missing_root(tmp_path, capsys):
    assert main(["node", "probe", "--root", fixture_root("inbox-ubuntu2204"), "--name", "../x"]) == 2
    assert main(["node", "probe", "--root", str(tmp_path / "nope")]) == 3
    err = capsys.readouterr().err
    assert "invalid node name" in err and "not a directory" in err
    assert "Traceback" not in err


def test_every_keeps_probing_after_an_error(tmp_path, monkeypatch, capsys):
    """The DaemonSet mode: each round rewrites the features file; a failing round is reported, not fatal."""
    from imgcheck.cli import node_cmd

    nfd_dir = tmp_path / "features.d"
    nfd_dir.mkdir()
    rounds = []

    def fake_sleep(seconds):
        rounds.append(seconds)
        if len(rounds) == 1:
            shutil.rmtree(nfd_dir)  # the next round cannot write: an error line, and the loop goes on
        elif len(rounds) == 2:
            nfd_dir.mkdir()
        else:
            raise KeyboardInterrupt

    monkeypatch.setattr(node_cmd.time, "sleep", fake_sleep)
    code = main(
        [
            "node",
            "probe",
            "--root",
            fixture_root("inbox-ubuntu2204"),
            "--nfd-dir",
            str(nfd_dir),
            "--every",
            "60",
            "-o",
            str(tmp_path / "facts.json"),
            "-q",
        ]
    )
    assert code == 130 and rounds == [60.0, 60.0, 60.0]
    assert "imgcheck: error: --nfd-dir" in capsys.readouterr().err
    assert "rdma.stack=inbox" in (nfd_dir / "imgcheck").read_text()
    assert main(["node", "probe", "--root", "/", "--every", "0"]) == 2


@pytest.mark.parametrize("fixture,kind", [("inbox-ubuntu2204", "proprietary"), ("doca-24.10-ubuntu2404", "open")])
def test_without_proc_driver_the_module_taint_tells_open_from_proprietary(tmp_path, fixture, kind):
    root = tmp_path / "root"
    shutil.copytree(fixture_root(fixture), root, symlinks=True)
    shutil.rmtree(root / "proc/driver")
    facts = probe(str(root))
    assert facts.gpu.driver_version == probe(fixture_root(fixture)).gpu.driver_version  # /sys/module/nvidia/version
    assert facts.gpu.kernel_module == kind
    assert facts.gpu.gpus == () and "not visible" in facts.unknown["gpu.gpus"]
    assert "gpu.kernel_module" not in facts.unknown


@pytest.mark.parametrize("line,want", [("590.48.01", "590.48.01"), ("N/A", "N/A")])
def test_gsp_firmware_is_read_from_the_gpu_information_line(tmp_path, line, want):
    """The "GPU Firmware:" line every driver since 515 prints per GPU (open-gpu-kernel-modules@595.45.04
    kernel-open/nvidia/nv-procfs.c: the GSP firmware version, or N/A when the GPU runs without it), between
    "Device Minor" and "GPU Excluded", tab-separated as the driver writes it."""
    root = tmp_path / "root"
    shutil.copytree(fixture_root("inbox-ubuntu2204"), root, symlinks=True)
    infos = sorted((root / "proc/driver/nvidia/gpus").glob("*/information"))
    assert infos
    for info in infos:
        text = info.read_text().replace("GPU Excluded:", f"GPU Firmware: \t {line}\nGPU Excluded:")
        info.write_text(text)
    facts = probe(str(root))
    assert facts.gpu.gpus and all(g.gsp_firmware == want for g in facts.gpu.gpus)
    assert all(g.gsp_firmware is None for g in probe(fixture_root("inbox-ubuntu2204")).gpu.gpus)  # no line: unknown
