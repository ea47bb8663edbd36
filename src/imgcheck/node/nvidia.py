"""NVIDIA driver facts from procfs/sysfs: version, open or proprietary kernel module, GPUs, peermem.

/proc/driver/nvidia/version first line:
  open:        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build  (...)"
  proprietary: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 ..."
(NVIDIA's kernel_open README; quoted in NVIDIA/open-gpu-kernel-modules#171.)

Jetson (L4T) prints the same shape with the L4T release where a driver version would be
("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  35.3.1  Release Build ...", an Orin NX in
https://github.com/nix-community/nixGL/issues/139, whose /etc/nv_tegra_release reads
"# R35 (release), REVISION: 3.1, ..."). That number is not a driver branch: it is kept as
`l4t_release` and the driver version is unknown.
"""

from __future__ import annotations

import re

from ..model.node import NO_DRIVER_REASON, Gpu, KernelModule, NodeGpu, Peermem
from .driver_userspace import scan_userspace_driver
from .gdrdrv import scan_gdrdrv
from .hostroot import HostReadError, HostRoot
from .module_config import scan_gpu_pv, scan_peermem_config, scan_uvm

VERSION_FILE = "/proc/driver/nvidia/version"
GPUS_DIR = "/proc/driver/nvidia/gpus"
TEGRA_RELEASE = "/etc/nv_tegra_release"
PCI_DEVICES = "/sys/bus/pci/devices"
TAINT_FILE = "/sys/module/nvidia/taint"
_TEGRA_LINE = re.compile(r"#\s*R(?P<major>\d+)\s*\(release\),\s*REVISION:\s*(?P<rev>[0-9.]+)")

_NVRM = re.compile(r"NVRM version:\s*(?P<desc>NVIDIA UNIX .*?Kernel Module(?: for \S+)?)\s+(?P<ver>\d+\.\d+(?:\.\d+)?)")


def parse_nvrm(first_line: str) -> tuple[str | None, str | None]:
    """(driver version, "open"|"proprietary") from the first line of /proc/driver/nvidia/version."""
    match = _NVRM.search(first_line)
    if not match:
        return None, None
    kind = "open" if " Open Kernel Module" in match.group("desc") else "proprietary"
    return match.group("ver"), kind


def scan_gpu(
    host: HostRoot,
    modules: dict[str, KernelModule],
    modules_visible: bool,
    unknown: dict[str, str],
    read: dict[str, str] | None = None,
) -> NodeGpu:
    """read: filled with fact -> the file the driver version and module kind were read from."""
    read = {} if read is None else read
    version = kind = None
    try:
        text = host.read_text(VERSION_FILE, 64 * 1024)
    except HostReadError as exc:
        text = None
        unknown["gpu.driver_version"] = str(exc)
        unknown["gpu.kernel_module"] = str(exc)
    l4t = _l4t_release(host)
    if text is not None:
        version, kind = parse_nvrm(text.splitlines()[0] if text else "")
        if version is not None and _is_l4t(text, version, l4t):
            l4t = l4t or version
            version = None
            unknown["gpu.driver_version"] = (
                f"Jetson/L4T: {VERSION_FILE} carries the L4T release ({l4t}), not a driver branch"
            )
        elif version is None:
            unknown["gpu.driver_version"] = f"{VERSION_FILE} has an unrecognised first line"
        if kind is None:
            unknown["gpu.kernel_module"] = f"{VERSION_FILE} has an unrecognised first line"
        read.update({"gpu.driver_version": VERSION_FILE, "gpu.kernel_module": VERSION_FILE})
    elif "gpu.driver_version" not in unknown:
        nvidia = modules.get("nvidia")
        if nvidia and nvidia.version:
            version = nvidia.version  # /sys/module/nvidia/version: the same number
            kind = _kind_from_taint(host)
            read.update({"gpu.driver_version": "/sys/module/nvidia/version", "gpu.kernel_module": TAINT_FILE})
            if kind is None:
                unknown["gpu.kernel_module"] = f"{VERSION_FILE} is not visible (is /proc mounted?)"
        elif not host.exists("/proc/sys/kernel"):
            unknown["gpu.driver_version"] = "/proc is not visible under the probe root"
            unknown["gpu.kernel_module"] = unknown["gpu.driver_version"]
        else:
            reason = f"{NO_DRIVER_REASON} ({VERSION_FILE} absent)"
            unknown["gpu.driver_version"] = reason
            unknown["gpu.kernel_module"] = reason
    gpus = _gpus(host, unknown) if text is not None else ()
    if text is None and version is not None:
        unknown["gpu.gpus"] = f"the driver is loaded but {GPUS_DIR} is not visible"
    gdrdrv = scan_gdrdrv(host, modules, modules_visible, unknown)
    userspace, userspace_path = scan_userspace_driver(host, unknown) if version is not None else (None, None)
    uvm_loaded, uvm_device = scan_uvm(host, modules_visible)
    configured = scan_peermem_config(host)
    dxg, wsl_files = scan_gpu_pv(host)
    if dxg is None:
        unknown["gpu.dxg_device"] = "/dev is not visible under the probe root (mount the host's /dev)"
    if dxg and wsl_files is None:
        unknown["gpu.wsl_driver_files"] = "/usr/lib/wsl could not be read under the probe root"
    if uvm_loaded is None:
        unknown["gpu.uvm_loaded"] = "/sys/module is not visible under the probe root"
    if uvm_device is None:
        unknown["gpu.uvm_device"] = "/dev is not visible under the probe root (mount the host's /dev)"
    if configured is None:
        unknown["gpu.peermem_configured"] = "/etc is not visible under the probe root"
    container_cli = scan_container_cli(host)
    if container_cli is None:
        unknown["gpu.container_cli"] = "/usr/bin is not visible under the probe root"
    return NodeGpu(
        dxg_device=dxg,
        wsl_driver_files=wsl_files,
        uvm_loaded=uvm_loaded,
        uvm_device=uvm_device,
        peermem_configured=configured,
        driver_version=version,
        kernel_module=kind,
        peermem=_peermem(host, modules, modules_visible),
        gpus=gpus,
        l4t_release=l4t,
        gdrdrv_loaded=gdrdrv.loaded,
        gdrdrv_version=gdrdrv.version,
        gdrdrv_registered=gdrdrv.registered,
        gdrdrv_device=gdrdrv.device,
        gdrdrv_device_mode=gdrdrv.device_mode,
        userspace_driver_version=userspace,
        userspace_driver_path=userspace_path,
        container_cli=container_cli,
    )


# Where the NVIDIA Container Toolkit's packages (libnvidia-container-tools) and source installs put the CLI, on the
# PATH enroot's hook searches (the caller's PATH plus /usr/sbin:/sbin: NVIDIA/enroot conf/hooks/98-nvidia.sh)
CONTAINER_CLI_DIRS = ("/usr/bin", "/usr/local/bin", "/usr/sbin", "/usr/local/sbin", "/bin", "/sbin")


def scan_container_cli(host: HostRoot) -> bool | None:
    """Whether nvidia-container-cli is on the node; None when /usr/bin is not visible under the root."""
    if not host.is_dir("/usr/bin"):
        return None
    return any(host.exists(f"{d}/nvidia-container-cli") for d in CONTAINER_CLI_DIRS)


def _l4t_release(host: HostRoot) -> str | None:
    try:
        text = host.read_text(TEGRA_RELEASE, 64 * 1024)
    except HostReadError:
        return None
    match = _TEGRA_LINE.search(text or "")
    return f"{match.group('major')}.{match.group('rev')}" if match else None


def _is_l4t(text: str, version: str, l4t: str | None) -> bool:
    """An L4T release in the driver-version slot: the host says it is Jetson, or an aarch64 build numbered
    below any desktop driver branch (those have been >= 100 since 2008)."""
    if l4t is not None:
        return True
    major = version.split(".", 1)[0]
    return " for aarch64 " in text.splitlines()[0] and major.isdigit() and int(major) < 100


def _kind_from_taint(host: HostRoot) -> str | None:
    """The kernel taints a module `P` when its license is not GPL-compatible: the proprietary nvidia.ko
    ("NVIDIA") does, the open one ("Dual MIT/GPL") does not."""
    try:
        taint = host.read_value(TAINT_FILE)
    except HostReadError:
        return None
    if taint is None:
        return None
    return "proprietary" if "P" in taint else "open"


def _gpus(host: HostRoot, unknown: dict[str, str]) -> tuple[Gpu, ...]:
    gpus = []
    try:
        entries = host.listdir(GPUS_DIR)
    except HostReadError as exc:
        unknown["gpu.gpus"] = str(exc)
        return ()
    for bus in entries:
        try:
            info = host.read_text(f"{GPUS_DIR}/{bus}/information", 64 * 1024) or ""
        except HostReadError as exc:
            unknown[f"gpu.gpus.{bus}"] = str(exc)
            continue
        fields = _colon_fields(info)
        minor = fields.get("Device Minor")
        location = fields.get("Bus Location") or bus
        gpus.append(
            Gpu(
                index=int(minor) if minor and minor.isdigit() else None,
                name=fields.get("Model"),
                pci_bus_id=location,
                uuid=fields.get("GPU UUID"),
                pci_device_id=_pci_device_id(host, location),
                bar1_bytes=_bar1_bytes(host, location),
                gsp_firmware=fields.get("GPU Firmware") or None,
            )
        )
    gpus.sort(key=lambda g: (g.index is None, g.index or 0, g.pci_bus_id or ""))
    return tuple(gpus)


def _pci_device_id(host: HostRoot, bus: str) -> str | None:
    """The PCI device id (e.g. 0x2330) from sysfs; /proc's bus ids may be upper-case, sysfs's are lower."""
    try:
        return host.read_value(f"{PCI_DEVICES}/{bus.lower()}/device") or None
    except HostReadError:
        return None


def _bar1_bytes(host: HostRoot, bus: str) -> int | None:
    """The size of the GPU's BAR1 (the aperture GPUDirect RDMA maps GPU memory through) from sysfs.

    /sys/bus/pci/devices/<bus>/resource has one "start end flags" line (hex) per resource, resource N on
    line N (drivers/pci/pci-sysfs.c resource_show); NVIDIA GPUs expose BAR1 as resource 1, what lspci
    prints as "Region 1" and nvidia-smi as "BAR1 Memory Usage: Total". None when unreadable or unassigned.
    """
    try:
        text = host.read_text(f"{PCI_DEVICES}/{bus.lower()}/resource", 64 * 1024)
    except HostReadError:
        return None
    lines = (text or "").splitlines()
    if len(lines) < 2:
        return None
    parts = lines[1].split()
    try:
        start, end = int(parts[0], 16), int(parts[1], 16)
    except (IndexError, ValueError):
        return None
    return end - start + 1 if end > start else None


def _colon_fields(text: str) -> dict[str, str]:
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    return fields


def _peermem(host: HostRoot, modules: dict[str, KernelModule], modules_visible: bool) -> Peermem:
    """The files NCCL itself tests (net_ib.cc): nvidia_peermem or nv_peer_mem loaded, memory_peers/nv_mem."""
    if not modules_visible:
        return Peermem()
    current = modules.get("nvidia_peermem")
    legacy = modules.get("nv_peer_mem")
    version = (current.version if current else None) or (legacy.version if legacy else None)
    if version is None:
        try:
            version = host.read_value("/sys/kernel/mm/memory_peers/nv_mem/version")
        except HostReadError:
            version = None
    return Peermem(loaded=current is not None, version=version, legacy_nv_peer_mem=legacy is not None)
