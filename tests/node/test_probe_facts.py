"""The facts `node probe` added for node-only checks, read from fixture roots and small variations of them:
RDMA driver and netdev MTU, kernel config and cmdline, peer-memory module build facts, DKMS, Jetson,
and the stack decisions that used to be wrong (OFED-internal, stack none without /sys/class)."""

from __future__ import annotations

import gzip
import lzma
import os
import shutil

import pytest
from node_fixtures import fixture_root

from imgcheck.model.image import Package
from imgcheck.model.node import KernelModule
from imgcheck.node.hostroot import HostRoot
from imgcheck.node.kernel_config import parse_cmdline, parse_config
from imgcheck.node.module_files import read_module_file
from imgcheck.node.ofed import OfedInstall, decide_stack
from imgcheck.node.probe import probe
from imgcheck.node.rdma_devices import roce_active_mtu

STALE_KO = "/lib/modules/5.15.0-25-generic/updates/dkms/nvidia-peermem.ko"


def copy_root(tmp_path, name):
    dest = tmp_path / name
    shutil.copytree(fixture_root(name), dest, symlinks=True)
    return dest


# ---------- devices ----------
def test_rdma_driver_pci_address_and_roce_mtu_from_sysfs_links():
    facts = probe(fixture_root("inbox-ubuntu2204"))
    d0, d1 = facts.rdma.devices
    assert (d0.driver, d0.pci_address) == ("mlx5_core", "0000:17:00.0")
    assert (d0.ports[0].netdev, d0.ports[0].netdev_mtu, d0.ports[0].active_mtu) == ("ens1f0np0", 9000, 4096)
    assert (d1.ports[0].netdev, d1.ports[0].netdev_mtu, d1.ports[0].active_mtu) == ("ens2f0np0", 1500, 1024)


def test_infiniband_ports_keep_the_ipoib_mtu_but_no_derived_active_mtu():
    port = probe(fixture_root("mlnx-ofed-23.10-ubuntu2204")).rdma.devices[0].ports[0]
    assert (port.netdev, port.netdev_mtu, port.active_mtu) == ("ibp12s0", 4092, None)


@pytest.mark.parametrize(
    "mtu,ib", [(9000, 4096), (4192, 4096), (4191, 2048), (1500, 1024), (1120, 1024), (1119, 512), (351, None)]
)
def test_roce_mtu_follows_iboe_get_mtu(mtu, ib):
    assert roce_active_mtu(mtu) == ib


def test_other_rdma_drivers_are_named_by_their_link(tmp_path):
    root = copy_root(tmp_path, "inbox-ubuntu2204")
    pci = root / "sys/devices/pci0000:00/0000:31:00.0"
    os.unlink(pci / "driver")
    os.makedirs(root / "sys/bus/pci/drivers/mlx4_core")
    os.symlink("../../../bus/pci/drivers/mlx4_core", pci / "driver")
    assert [d.driver for d in probe(str(root)).rdma.devices] == ["mlx5_core", "mlx4_core"]


# ---------- kernel config / cmdline ----------
def test_boot_config_and_cmdline():
    facts = probe(fixture_root("inbox-ubuntu2204"))
    assert facts.kernel.config_source == "/boot/config-5.15.0-25-generic"
    cfg = facts.kernel.config
    assert (cfg["CONFIG_PCI_P2PDMA"], cfg["CONFIG_INFINIBAND_USER_MEM"], cfg["CONFIG_INFINIBAND"]) == ("y", "y", "m")
    assert cfg["CONFIG_DMABUF_MOVE_NOTIFY"] == "n"  # "# ... is not set"
    assert cfg["CONFIG_IOMMU_DEFAULT_PASSTHROUGH"] == "n"  # absent from the file
    assert facts.kernel.cmdline_params == {"intel_iommu": "on", "iommu": "pt"}


def test_proc_config_gz_when_boot_has_none(tmp_path):
    root = copy_root(tmp_path, "inbox-ubuntu2404-open")
    (root / "proc/config.gz").write_bytes(
        gzip.compress(b"CONFIG_DMA_SHARED_BUFFER=y\n# CONFIG_PCI_P2PDMA is not set\n")
    )
    facts = probe(str(root))
    assert facts.kernel.config_source == "/proc/config.gz"
    assert (facts.kernel.config["CONFIG_DMA_SHARED_BUFFER"], facts.kernel.config["CONFIG_PCI_P2PDMA"]) == ("y", "n")
    assert "kernel.config" not in facts.unknown


def test_unreadable_config_is_unknown_with_both_reasons(tmp_path):
    root = copy_root(tmp_path, "inbox-ubuntu2404-open")
    (root / "proc/config.gz").write_bytes(b"not gzip")
    facts = probe(str(root))
    assert facts.kernel.config is None
    assert "no /boot/config-6.8.0-55-generic" in facts.unknown["kernel.config"]
    assert "/proc/config.gz is not valid gzip" in facts.unknown["kernel.config"]


def test_config_and_cmdline_parsers():
    assert parse_config('CONFIG_A=y\nCONFIG_B="x y"\n# CONFIG_C is not set\n#CONFIG_D=y\n') == {
        "CONFIG_A": "y",
        "CONFIG_B": "x y",
        "CONFIG_C": "n",
    }
    assert parse_cmdline("ro iommu=off iommu.passthrough=1 quiet iommu=pt pcie_acs_override") == {
        "iommu": "pt",
        "iommu.passthrough": "1",
        "pcie_acs_override": "",
    }


# ---------- peer-memory module files ----------
def test_module_build_facts_read_from_the_elf_sections():
    mod = probe(fixture_root("ofed-upgrade-stale-peermem")).rdma.module_files["nvidia_peermem"]
    assert mod.path == STALE_KO
    assert mod.file_vermagic.startswith("5.15.0-25-generic SMP mod_unload modversions")
    assert mod.file_depends == ("nvidia", "ib_core") and mod.version == "535.129.03"
    assert mod.symbol_crcs == {
        "ib_register_peer_memory_client": "0x8b0a7d12",
        "ib_unregister_peer_memory_client": "0x5c1e93a4",
    }


def test_exported_crcs_and_module_symvers_agree():
    rdma = probe(fixture_root("ofed-upgrade-stale-peermem")).rdma
    assert rdma.module_files["ib_core"].symbol_crcs == rdma.ib_core_symvers
    assert rdma.ib_core_symvers_path == "/usr/src/ofa_kernel/x86_64/5.15.0-25-generic/Module.symvers"


def test_xz_compressed_module_reads_the_same(tmp_path):
    root = copy_root(tmp_path, "ofed-upgrade-stale-peermem")
    ko = root / STALE_KO.lstrip("/").replace("lib/", "usr/lib/", 1)
    (ko.parent / "nvidia-peermem.ko.xz").write_bytes(lzma.compress(ko.read_bytes()))
    mod = read_module_file(HostRoot(str(root)), STALE_KO + ".xz")
    assert mod.symbol_crcs["ib_register_peer_memory_client"] == "0x8b0a7d12"


def test_a_module_file_that_is_not_elf_is_unknown_not_a_crash(tmp_path):
    facts = probe(fixture_root("ofed-other-kernel"))  # modules.dep names an ib_core.ko the root lacks
    assert facts.unknown["rdma.module_files.ib_core"].endswith("kernel/drivers/infiniband/core/ib_core.ko is absent")
    root = copy_root(tmp_path, "ofed-other-kernel")
    ko = root / "usr/lib/modules/5.15.0-91-generic/kernel/drivers/infiniband/core/ib_core.ko"
    ko.parent.mkdir(parents=True)
    ko.write_bytes(b"\x7fELF" + b"\0" * 60)
    assert "not a readable kernel module" in probe(str(root)).unknown["rdma.module_files.ib_core"]


def test_dkms_builds_and_whether_they_are_installed():
    dkms = probe(fixture_root("ofed-other-kernel")).dkms
    assert [(d.name, d.version, d.kernel, d.installed) for d in dkms] == [
        ("mlnx-ofed-kernel", "23.10.OFED.23.10.1.1.9.1", "5.15.0-25-generic", True)
    ]
    assert probe(fixture_root("ofed-other-kernel")).rdma.installed_ofed_version == "23.10-1.1.9.0"


# ---------- GPU ----------
def test_gpu_pci_device_id_from_sysfs():
    gpus = probe(fixture_root("inbox-ubuntu2204")).gpu.gpus
    assert [g.pci_device_id for g in gpus] == ["0x2330", None]  # the second GPU's sysfs entry is absent


def test_jetson_nvrm_line_is_an_l4t_release_not_a_driver():
    gpu = probe(fixture_root("jetson-orin-l4t35")).gpu
    assert gpu.driver_version is None and gpu.l4t_release == "35.3.1"


def test_aarch64_l4t_number_without_nv_tegra_release(tmp_path):
    root = copy_root(tmp_path, "jetson-orin-l4t35")
    os.unlink(root / "etc/nv_tegra_release")
    facts = probe(str(root))
    assert facts.gpu.driver_version is None and facts.gpu.l4t_release == "35.3.1"
    assert "L4T release" in facts.unknown["gpu.driver_version"]


# ---------- stack decisions ----------
CORE_OOT = {n: KernelModule(version="23.10-1.1.9", out_of_tree=True) for n in ("mlx5_core", "ib_core")}


def test_ofed_internal_with_packages_and_no_doca_is_mlnx_ofed():
    install = OfedInstall(
        ofed_info_id="OFED-internal-23.10-1.1.9",
        packages=(Package("mlnx-ofed-kernel-dkms", "23.10", "dpkg"),),
        packages_known=True,
    )
    decision = decide_stack(install, CORE_OOT, True, True, frozenset({"24.10"}))
    assert decision.stack == "mlnx_ofed" and "no doca-* package" in decision.why


def test_ofed_internal_with_doca_packages_is_doca():
    install = OfedInstall(
        ofed_info_id="OFED-internal-24.10-1.1.4", packages=(Package("doca-ofed", "2.9.1", "dpkg"),), packages_known=True
    )
    assert decide_stack(install, CORE_OOT, True, True, frozenset({"24.10"})).stack == "doca"


def test_ofed_internal_without_packages_is_decided_by_series():
    old = OfedInstall(ofed_info_id="OFED-internal-5.8-3.0.7")
    decision = decide_stack(old, CORE_OOT, True, True, frozenset({"24.10"}))
    assert decision.stack == "mlnx_ofed" and "no DOCA-OFED release of the 5.8 series" in decision.why
    new = OfedInstall(ofed_info_id="OFED-internal-24.10-1.1.4")
    decision = decide_stack(new, CORE_OOT, True, True, frozenset({"24.10"}))
    assert decision.stack == "doca" and "MLNX_OFED or DOCA-OFED" in decision.why


def test_no_module_and_unreadable_sys_class_is_unknown_not_none(tmp_path):
    root = copy_root(tmp_path, "jetson-orin-l4t35")  # /sys/module visible, no RDMA module loaded
    shutil.rmtree(root / "sys/class")
    facts = probe(str(root))
    assert facts.rdma.stack is None
    assert "/sys/class could not be read" in facts.unknown["rdma.stack"]
    assert probe(fixture_root("jetson-orin-l4t35")).rdma.stack == "none"  # with /sys/class: a real none


# ---------- PCIe ACS ----------
def _acs_config(ctrl: int | None, size: int = 4096) -> bytes:
    """A bridge's config space: an AER capability at 0x100 chaining to ACS at 0x148 (pci_regs.h layout)."""
    data = bytearray(size)
    if size >= 0x150 and ctrl is not None:
        data[0x100:0x104] = (0x0001 | (1 << 16) | (0x148 << 20)).to_bytes(4, "little")  # AER, v1, next 0x148
        data[0x148:0x14C] = (0x000D | (1 << 16)).to_bytes(4, "little")  # ACS, v1, last
        data[0x14E:0x150] = ctrl.to_bytes(2, "little")
    return bytes(data)


def _acs_root(tmp_path, ctrl, size=4096):
    root = tmp_path / "acs"
    bridge = root / "sys/devices/pci0000:00/0000:00:01.0"
    (bridge / "0000:17:00.0").mkdir(parents=True)
    (bridge / "config").write_bytes(_acs_config(ctrl, size))
    (root / "sys/bus/pci/devices").mkdir(parents=True)
    os.symlink("../../../devices/pci0000:00/0000:00:01.0/0000:17:00.0", root / "sys/bus/pci/devices/0000:17:00.0")
    return HostRoot(str(root))


def test_acs_redirect_on_a_bridge_above_the_nic(tmp_path):
    from imgcheck.node.pci_acs import scan_acs

    unknown = {}
    # 0x001d: SV | RR | CR | UF, what Linux's pci_std_enable_acs() sets when an IOMMU is on
    assert scan_acs(_acs_root(tmp_path, 0x001D), ["0000:17:00.0"], unknown) == ("0000:00:01.0",)
    assert unknown == {}


def test_acs_without_redirect_bits(tmp_path):
    from imgcheck.node.pci_acs import scan_acs

    assert scan_acs(_acs_root(tmp_path, 0x0001), ["0000:17:00.0"], {}) == ()


def test_acs_needs_root_for_extended_config_space(tmp_path):
    from imgcheck.node.pci_acs import scan_acs

    unknown = {}
    assert scan_acs(_acs_root(tmp_path, 0x001D, size=64), ["0000:17:00.0"], unknown) is None
    assert "only to root" in unknown["pci_acs_redirect"]


def test_acs_capability_loop_in_hostile_bytes_ends():
    from imgcheck.node.pci_acs import acs_redirect

    data = bytearray(4096)
    data[0x100:0x104] = (0x0001 | (0x100 << 20)).to_bytes(4, "little")  # points at itself
    assert acs_redirect(bytes(data)) is False


# ---------- IOMMU domains ----------
def test_iommu_domain_types_from_sysfs_groups(tmp_path):
    root = copy_root(tmp_path, "inbox-ubuntu2204")
    for n, kind in ((12, "DMA-FQ"), (13, "identity")):
        (root / f"sys/kernel/iommu_groups/{n}").mkdir(parents=True)
        (root / f"sys/kernel/iommu_groups/{n}/type").write_text(kind + "\n")
    os.symlink("../../../kernel/iommu_groups/12", root / "sys/devices/pci0000:00/0000:17:00.0/iommu_group")
    os.symlink("../../../kernel/iommu_groups/13", root / "sys/devices/pci0000:00/0000:18:00.0/iommu_group")
    domains = probe(str(root)).iommu_domains
    assert domains == {
        "0000:17:00.0": "DMA-FQ",
        "0000:31:00.0": "none",
        "0000:18:00.0": "identity",
        "0000:2a:00.0": "none",
    }


def test_iommu_group_without_type_file_is_unknown(tmp_path):
    root = copy_root(tmp_path, "inbox-ubuntu2204")
    (root / "sys/kernel/iommu_groups/12").mkdir(parents=True)
    os.symlink("../../../kernel/iommu_groups/12", root / "sys/devices/pci0000:00/0000:17:00.0/iommu_group")
    facts = probe(str(root))
    assert facts.iommu_domains is None and "before 5.11" in facts.unknown["iommu_domains"]


def test_missing_memory_peers_on_an_ofed_node_is_explained_not_taken_as_no_api(tmp_path):
    root = copy_root(tmp_path, "doca-24.10-ubuntu2404")
    shutil.rmtree(root / "sys/kernel/mm/memory_peers")
    facts = probe(str(root))
    assert facts.rdma.peer_memory_api is False  # the fact stays literal: the directory is absent
    assert "says nothing about the peer-memory API" in facts.notes["rdma.peer_memory_api"]
    assert "rdma.peer_memory_api" not in probe(fixture_root("doca-24.10-ubuntu2404")).notes


def test_cmdline_keeps_only_the_parameters_imgcheck_reads(tmp_path):
    """Issue 37: node facts are committed to repositories (docs/ci.md) and travel in reports, so the probe
    keeps of /proc/cmdline only what the rules read; addresses, seeds and keys never reach the file."""
    from imgcheck.model.node_io import dump_node_facts

    root = copy_root(tmp_path, "inbox-ubuntu2204")
    (root / "proc" / "cmdline").write_text(
        "BOOT_IMAGE=/vmlinuz-5.15.0-25-generic root=UUID=3f1c2a9e-77d4-4b53-9a61-0c1f7d2e8b10 ro "
        "console=ttyS0,115200n8 ip=10.20.30.41::10.20.30.1:255.255.255.0:gpu-a01:eth0:off "
        "ds=nocloud-net;s=http://10.20.0.5:8080/seed/gpu-a01/ rd.luks.key=/keyfile:UUID=0b7e intel_iommu=on "
        "iommu=pt hugepagesz=1G hugepages=16 cma=2G kho=on\n"
    )
    facts = probe(str(root))
    assert facts.kernel.cmdline == "intel_iommu=on iommu=pt hugepagesz=1G hugepages=16 cma=2G kho=on"
    assert facts.kernel.cmdline_params == {
        "intel_iommu": "on",
        "iommu": "pt",
        "hugepagesz": "1G",
        "hugepages": "16",
        "cma": "2G",
        "kho": "on",
    }
    assert "7 other word(s) left out" in facts.notes["kernel.cmdline"]
    text = dump_node_facts(facts)
    for secret in ("10.20.", "luks", "root=", "console=", "nocloud", "BOOT_IMAGE"):
        assert secret not in text


def test_node_facts_written_before_keep_only_the_parameters_too(tmp_path):
    """A node facts file committed before the probe reduced the command line loads reduced: its root=,
    ip= and seeds never reach a report or the inventory."""
    import json

    from imgcheck.model.node_io import load_node_facts

    doc = {
        "name": "gpu-a01",
        "kernel": {
            "release": "5.15.0-25-generic",
            "cmdline": "BOOT_IMAGE=/vmlinuz root=UUID=3f1c ro ip=10.20.30.41::10.20.30.1 iommu=pt quiet",
            "cmdline_params": {"iommu": "pt"},
        },
    }
    path = tmp_path / "gpu-a01.json"
    path.write_text(json.dumps(doc))
    facts = load_node_facts(str(path))
    assert facts.kernel.cmdline == "iommu=pt" and facts.kernel.cmdline_params == {"iommu": "pt"}


def test_release_series_after_mlnx_ofed_last_is_doca():
    # MLNX_OFED's last series (thresholds mlnx_ofed_last_series, NVIDIA's 24.10 LTS notes): a 25.x install is DOCA-OFED
    # even when the repository's kernel packages carry MLNX_OFED's names and no doca-* meta package is installed
    from imgcheck.node.probe import _mlnx_last_series

    last = _mlnx_last_series()
    assert last == "24.10"
    new = OfedInstall(
        ofed_info_id="OFED-internal-25.04-0.6.1",
        packages=(Package("mlnx-ofed-kernel-dkms", "25.04.OFED.25.04.0.6.1.1-1", "dpkg"),),
        packages_known=True,
    )
    decision = decide_stack(new, CORE_OOT, True, True, frozenset({"24.10", "25.01"}), last)
    assert decision.stack == "doca" and "after MLNX_OFED's last (24.10)" in decision.why
    assert decision.ofed_version == "25.04-0.6.1"
    lts = OfedInstall(
        ofed_info_id="OFED-internal-24.10-3.2.5",
        packages=(Package("mlnx-ofed-kernel-dkms", "24.10.OFED.24.10.3.2.5.1-1", "dpkg"),),
        packages_known=True,
    )
    assert decide_stack(lts, CORE_OOT, True, True, frozenset({"24.10"}), last).stack == "mlnx_ofed"  # LTS update
    # without the matrix row the series cannot decide: the package test stands
    assert decide_stack(new, CORE_OOT, True, True, frozenset({"24.10"}), None).stack == "mlnx_ofed"
