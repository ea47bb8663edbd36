"""GDRCopy's kernel module gdrdrv as the node shows it: loaded, its version, its character device.

gdrdrv registers a character major with register_chrdev() and creates no device class (NVIDIA/gdrcopy
src/gdrdrv/gdrdrv.c, every release), so udev makes no /dev/gdrdrv: the project's insmod.sh and its packaged
init/systemd service create it with mknod from the major in /proc/devices and chmod it a+rw. A module loaded with
plain modprobe therefore leaves no device node, and libgdrapi's gdr_open fails on open("/dev/gdrdrv"). The module's
version (MODULE_VERSION, /sys/module/gdrdrv/version) is GDRDRV_MAJOR.MINOR only: "2.4" for releases 2.4 to 2.4.4.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from ..model.node import KernelModule
from .hostroot import HostReadError, HostRoot

MODULE = "gdrdrv"
DEVICE = "/dev/gdrdrv"
PROC_DEVICES = "/proc/devices"
_DEV_PROBE = "/dev/null"  # a devtmpfs always has it: /dev of the node is under the root


@dataclass(frozen=True)
class GdrdrvState:
    loaded: bool | None = None
    version: str | None = None
    registered: bool | None = None  # /proc/devices lists gdrdrv's character major
    device: bool | None = None  # /dev/gdrdrv exists
    device_mode: str | None = None  # its permission bits in octal ("666"); "not-char" when it is not a char device


def scan_gdrdrv(
    host: HostRoot, modules: dict[str, KernelModule], modules_visible: bool, unknown: dict[str, str]
) -> GdrdrvState:
    loaded = host.is_dir(f"/sys/module/{MODULE}") if modules_visible else None
    if loaded is None:
        unknown["gpu.gdrdrv_version"] = "/sys/module is not visible under the probe root"
    version = None
    if loaded:
        mod = modules.get(MODULE)
        version = mod.version if mod else None
        if version is None:
            unknown["gpu.gdrdrv_version"] = f"/sys/module/{MODULE}/version is not readable"
    registered = _registered(host, unknown)
    device, mode = _device(host, unknown)
    return GdrdrvState(loaded=loaded, version=version, registered=registered, device=device, device_mode=mode)


def _registered(host: HostRoot, unknown: dict[str, str]) -> bool | None:
    try:
        text = host.read_text(PROC_DEVICES, 256 * 1024)
    except HostReadError as exc:
        unknown["gpu.gdrdrv_registered"] = str(exc)
        return None
    if text is None:
        unknown["gpu.gdrdrv_registered"] = f"{PROC_DEVICES} is not visible under the probe root"
        return None
    block = text.split("Block devices:")[0]  # "Character devices:" lines are "<major> <name>"
    return any(line.split()[1:2] == [MODULE] for line in block.splitlines())


def _device(host: HostRoot, unknown: dict[str, str]) -> tuple[bool | None, str | None]:
    try:
        real = host.resolve(DEVICE)
        dev_visible = host.exists(_DEV_PROBE)
    except HostReadError as exc:
        unknown["gpu.gdrdrv_device"] = unknown["gpu.gdrdrv_device_mode"] = str(exc)
        return None, None
    if real is None:
        if dev_visible:
            return False, None
        unknown["gpu.gdrdrv_device"] = "/dev is not visible under the probe root (mount the host's /dev)"
        unknown["gpu.gdrdrv_device_mode"] = unknown["gpu.gdrdrv_device"]
        return None, None
    try:
        st = os.stat(real)
    except OSError as exc:
        unknown["gpu.gdrdrv_device_mode"] = f"cannot stat {DEVICE}: {exc.strerror}"
        return True, None
    if not stat.S_ISCHR(st.st_mode):
        return True, "not-char"  # a regular file left by a copy of /dev: open() reaches no driver
    return True, format(stat.S_IMODE(st.st_mode), "o")
