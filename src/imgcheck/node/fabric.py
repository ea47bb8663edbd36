"""NVSwitch and the services that configure its fabric, read from files (never by running systemctl or nvidia-smi).

- NVSwitches: NVIDIA PCI functions of class bridge/other (0x0680). The nvidia-nvswitch driver binds exactly those
  (open-gpu-kernel-modules kernel-open/nvidia/linux_nvswitch.c `nvswitch_pci_table`: vendor NVIDIA, any device,
  class PCI_CLASS_BRIDGE_OTHER << 8) and lists the ones it drives under /proc/driver/nvidia-nvswitch/devices/<bdf>
  (procfs_nvswitch.c), the fallback when /sys/bus/pci is not visible.
- Fabric Manager: its package in the host's dpkg/rpm database (nvidia-fabricmanager-<branch> from the CUDA and
  Ubuntu repositories, nvidia-fabricmanager from 580 on, nvidia-fabric-manager on RHEL), or the daemon binary of a
  runfile / tarball / system-extension install; enabled: the unit's link under /etc/systemd/system/*.wants;
  running: a process whose comm is nv-fabricmanager (the kernel keeps 15 characters: "nv-fabricmanage").
- NVLink 5 (B100/B200/B300 baseboards): the nvlsm package or /opt/nvidia/nvlsm/sbin/nvlsm, and ib_umad loaded.
"""

from __future__ import annotations

import re

from ..model.node import NodeFabric
from .hostroot import HostReadError, HostRoot
from .ofed import host_packages

PCI_DEVICES = "/sys/bus/pci/devices"
NVSWITCH_PROC = "/proc/driver/nvidia-nvswitch/devices"
NVIDIA_VENDOR = "0x10de"
BRIDGE_OTHER_CLASS = "0x0680"  # the first four hex digits of sysfs `class` (0x068000)
FM_BINARIES = ("/usr/bin/nv-fabricmanager", "/usr/sbin/nv-fabricmanager")
FM_UNIT = "nvidia-fabricmanager.service"
SYSTEMD_DIRS = ("/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system")
NVLSM_BINARIES = ("/opt/nvidia/nvlsm/sbin/nvlsm", "/usr/sbin/nvlsm", "/usr/bin/nvlsm")
FM_COMM = "nv-fabricmanage"  # TASK_COMM_LEN is 16: "nv-fabricmanager" is cut to 15 characters
HOST_INITS = ("systemd", "init")  # /proc/1/comm of a host (not a container's own PID namespace)
MAX_PIDS = 200_000
_FM_PACKAGE = re.compile(r"^nvidia-fabric-?manager(?:-\d+)?$")
_UPSTREAM = re.compile(r"^(?:\d+:)?(?P<ver>\d+\.\d+(?:\.\d+)?)")


def scan_fabric(host: HostRoot, modules_visible: bool, unknown: dict[str, str]) -> NodeFabric:
    packages, db_read = host_packages(host, lambda n: bool(_FM_PACKAGE.match(n)) or n == "nvlsm", {})
    fm = next((p for p in packages if _FM_PACKAGE.match(p.name)), None)
    fm_binary = any(host.exists(p) for p in FM_BINARIES)
    nvlsm = any(p.name == "nvlsm" for p in packages) or any(host.exists(p) for p in NVLSM_BINARIES)
    fm_installed = True if fm or fm_binary else (False if db_read else None)
    if fm_installed is None:
        unknown["fabric.fm_installed"] = "no package database readable under the probe root, and no nv-fabricmanager"
    version = _upstream(fm.version) if fm else None
    if fm_installed and version is None:
        unknown["fabric.fm_version"] = (
            f"{fm.name} {fm.version}: not an upstream version" if fm else "nv-fabricmanager is not from a package"
        )
    running = _fm_running(host, unknown)
    umad = host.is_dir("/sys/module/ib_umad") if modules_visible else None
    return NodeFabric(
        nvswitch_pci=_nvswitches(host, unknown),
        fm_package=fm.name if fm else None,
        fm_version=version,
        fm_installed=fm_installed,
        fm_enabled=_fm_enabled(host),
        fm_running=running,
        nvlsm_installed=True if nvlsm else (False if db_read else None),
        ib_umad_loaded=umad,
    )


def _upstream(version: str) -> str | None:
    match = _UPSTREAM.match(version)
    return match.group("ver") if match else None


def _nvswitches(host: HostRoot, unknown: dict[str, str]) -> tuple[str, ...] | None:
    if host.is_dir(PCI_DEVICES):
        found = []
        try:
            for bus in host.listdir(PCI_DEVICES):
                try:
                    vendor = host.read_value(f"{PCI_DEVICES}/{bus}/vendor")
                    klass = host.read_value(f"{PCI_DEVICES}/{bus}/class")
                except HostReadError:
                    continue
                if vendor == NVIDIA_VENDOR and (klass or "").startswith(BRIDGE_OTHER_CLASS):
                    found.append(bus)
        except HostReadError as exc:
            unknown["fabric.nvswitch_pci"] = str(exc)
            return None
        return tuple(found)
    if host.is_dir(NVSWITCH_PROC):  # the driver's own list (only the switches it bound)
        return tuple(host.listdir(NVSWITCH_PROC))
    unknown["fabric.nvswitch_pci"] = f"{PCI_DEVICES} is not visible under the probe root"
    return None


def _fm_enabled(host: HostRoot) -> bool | None:
    if not host.is_dir("/etc/systemd/system"):
        return None
    try:
        wants = [d for d in host.listdir("/etc/systemd/system") if d.endswith(".wants")]
    except HostReadError:
        return None
    return any(host.exists(f"/etc/systemd/system/{d}/{FM_UNIT}") for d in wants)


def _fm_running(host: HostRoot, unknown: dict[str, str]) -> bool | None:
    """True: an nv-fabricmanager process; False: none, and /proc is the host's (PID 1 is its init); else None."""
    try:
        init = host.read_value("/proc/1/comm")
        pids = [p for p in host.listdir("/proc") if p.isdigit()][:MAX_PIDS]
    except HostReadError as exc:
        unknown["fabric.fm_running"] = str(exc)
        return None
    for pid in pids:
        try:
            if host.read_value(f"/proc/{pid}/comm") == FM_COMM:
                return True
        except HostReadError:
            continue  # the process ended while listing
    if init in HOST_INITS:
        return False
    unknown["fabric.fm_running"] = (
        "the probe does not see the host's processes (/proc/1 under the root is not the host's init): give it the "
        "host's /proc under --root (the DaemonSet's host / mount does) or run it with hostPID to tell whether "
        "nv-fabricmanager runs"
    )
    return None
