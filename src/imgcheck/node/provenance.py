"""Which file under the probe root each probed fact was read from (NodeFacts.sources).

Readers that choose between files (the NVIDIA version file or /sys/module/nvidia, /proc/self/limits or
limits.conf, ...) say which one in `read` (fact -> node path); a fact with one possible file is located at
that file here, by the readers' own path constants. Paths are the node's (what the host calls the file),
not the probe container's view of it under --root.
"""

from __future__ import annotations

from ..model.location import Location
from ..model.node import NodeFacts
from .iommu import PCI_DEVICES
from .kernel_config import CMDLINE
from .module_config import DXG_DEVICE, UVM_DEVICE, UVM_MODULE_DIR, WSL_LIB_DIR
from .module_files import DKMS_ROOT
from .net_interfaces import NET_CLASS
from .numa import NODE_DIR
from .nvidia import GPUS_DIR, TEGRA_RELEASE
from .ofed import OFED_INFO
from .rdma_devices import IB_CLASS, VERBS_CLASS

OSRELEASE = "/proc/sys/kernel/osrelease"
MEMORY_PEERS = "/sys/kernel/mm/memory_peers"


def _module(name: str) -> str:
    return f"/sys/module/{name}"


def probe_sources(facts: NodeFacts, read: dict[str, str], ofed_info_read: bool) -> dict[str, Location]:
    paths: dict[str, str | None] = dict(read)
    kernel, rdma, gpu = facts.kernel, facts.rdma, facts.gpu
    if kernel.release:
        paths["kernel.release"] = OSRELEASE
    paths["kernel.config"] = kernel.config_source
    if kernel.cmdline is not None:
        paths["kernel.cmdline"] = paths["kernel.cmdline_params"] = CMDLINE
    for name in rdma.modules:
        paths[f"rdma.modules.{name}"] = _module(name)
    for name, module in (rdma.module_files or {}).items():
        paths[f"rdma.module_files.{name}"] = module.path
    if rdma.ib_core_symvers is not None:
        paths["rdma.ib_core_symvers"] = rdma.ib_core_symvers_path
    if rdma.uverbs_abi is not None:
        paths["rdma.uverbs_abi"] = f"{VERBS_CLASS}/abi_version"
    if "rdma.devices" not in facts.unknown:
        paths["rdma.devices"] = IB_CLASS
    for device in rdma.devices:
        if device.name:
            paths[f"rdma.devices.{device.name}"] = f"{IB_CLASS}/{device.name}"
    if rdma.peer_memory_api is not None:
        paths["rdma.peer_memory_api"] = MEMORY_PEERS
    if ofed_info_read and rdma.installed_ofed_version:
        paths["rdma.installed_ofed_version"] = OFED_INFO
    if gpu.gpus:
        paths["gpu.gpus"] = GPUS_DIR
    if gpu.peermem.loaded is not None:
        paths["gpu.peermem.loaded"] = _module("nvidia_peermem")
        paths["gpu.peermem.legacy_nv_peer_mem"] = _module("nv_peer_mem")
    if gpu.l4t_release:
        paths["gpu.l4t_release"] = TEGRA_RELEASE
    if gpu.gdrdrv_loaded is not None:
        paths["gpu.gdrdrv_loaded"] = _module("gdrdrv")
    if gpu.gdrdrv_version is not None:
        paths["gpu.gdrdrv_version"] = _module("gdrdrv") + "/version"
    if gpu.gdrdrv_registered is not None:
        paths["gpu.gdrdrv_registered"] = "/proc/devices"
    if gpu.gdrdrv_device is not None:
        paths["gpu.gdrdrv_device"] = "/dev/gdrdrv"
        paths["gpu.gdrdrv_device_mode"] = "/dev/gdrdrv"
    if facts.numa_nodes is not None:
        paths["numa_nodes"] = NODE_DIR
    if facts.net_interfaces is not None:
        paths["net_interfaces"] = NET_CLASS
    if gpu.uvm_loaded is not None:
        paths["gpu.uvm_loaded"] = UVM_MODULE_DIR
    if gpu.uvm_device is not None:
        paths["gpu.uvm_device"] = UVM_DEVICE
    if gpu.dxg_device is not None:
        paths["gpu.dxg_device"] = DXG_DEVICE
    if gpu.wsl_driver_files is not None:
        paths["gpu.wsl_driver_files"] = WSL_LIB_DIR  # and /usr/lib/wsl/drivers/<folder>/
    if gpu.userspace_driver_version:
        paths["gpu.userspace_driver_version"] = gpu.userspace_driver_path
    if facts.dkms is not None:
        paths["dkms"] = DKMS_ROOT
        for build in facts.dkms:
            paths[f"dkms.{build.name}"] = f"{DKMS_ROOT}/{build.name}"
    if facts.pci_acs_redirect is not None:
        paths["pci_acs_redirect"] = PCI_DEVICES  # each bridge's <bdf>/config
    if facts.iommu_domains is not None:
        paths["iommu_domains"] = PCI_DEVICES  # each device's <bdf>/iommu_group/type
    if facts.net_interfaces is not None:
        paths["net_interfaces"] = NET_CLASS
    fabric = facts.fabric
    if fabric.nvswitch_pci is not None:
        paths["fabric.nvswitch_pci"] = PCI_DEVICES  # each NVIDIA function's <bdf>/class
    if fabric.fm_running is not None:
        paths["fabric.fm_running"] = "/proc"  # each process's <pid>/comm
    if fabric.ib_umad_loaded is not None:
        paths["fabric.ib_umad_loaded"] = _module("ib_umad")
    found: dict[str, Location] = {}
    for fact, path in paths.items():
        location = Location.file(path) if path else None  # a path: never None
        if location is not None:
            found[fact] = location
    return found
