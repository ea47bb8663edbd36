"""NVIDIA's unified-memory module and device node, and where nvidia-peermem is configured to load.

nvidia_uvm: loaded when /sys/module/nvidia_uvm exists; its device node /dev/nvidia-uvm is created by
nvidia-modprobe (or udev rules / the driver container), not by the module itself. The container toolkit
injects /dev/nvidia-uvm into GPU containers; a CDI spec generated while it was absent lacks it
(NVIDIA/nvidia-container-toolkit#50), and enroot's hook refuses to start ("Kernel module nvidia_uvm is not
loaded", NVIDIA/enroot#105).

nvidia-peermem configured: systemd-modules-load reads /etc/modules-load.d, /run/modules-load.d and
/usr/lib/modules-load.d (*.conf, one module per line; modules-load.d(5)); Debian's /etc/modules is the same list;
modprobe.d(5) `softdep nvidia post: nvidia-peermem` or an `install` line loads it with nvidia, and an `options`
line shows it is meant to be used. modprobe treats '-' and '_' in module names alike.
"""

from __future__ import annotations

import re

from .hostroot import HostReadError, HostRoot

UVM_MODULE_DIR = "/sys/module/nvidia_uvm"
UVM_DEVICE = "/dev/nvidia-uvm"
MODULES_LOAD_DIRS = ("/etc/modules-load.d", "/run/modules-load.d", "/usr/lib/modules-load.d", "/lib/modules-load.d")
MODPROBE_DIRS = ("/etc/modprobe.d", "/run/modprobe.d", "/usr/lib/modprobe.d", "/lib/modprobe.d")
_PEERMEM = re.compile(r"\bnvidia[-_]peermem\b")
_MAX_FILES = 256  # per directory: a bound on probe work


def scan_uvm(host: HostRoot, modules_visible: bool) -> tuple[bool | None, bool | None]:
    """(nvidia_uvm loaded, /dev/nvidia-uvm present); None where the root does not show it."""
    loaded = host.is_dir(UVM_MODULE_DIR) if modules_visible else None
    device: bool | None = None
    try:
        if host.is_dir("/dev") and host.listdir("/dev"):
            device = host.exists(UVM_DEVICE)
    except HostReadError:
        device = None
    return loaded, device


DXG_DEVICE = "/dev/dxg"  # dxgkrnl's device: the GPU-PV channel to the Windows host (WSL2, Hyper-V GPU-P)
WSL_LIB_DIR = "/usr/lib/wsl/lib"  # the host's libdxcore, libd3d12, the CUDA/NVML loaders (Microsoft's WSL GPU docs)
WSL_DRIVERS_DIR = "/usr/lib/wsl/drivers"  # the host's DriverStore folders (libnvidia-container src/dxcore.c)
_MAX_WSL_FILES = 400


def scan_gpu_pv(host: HostRoot) -> tuple[bool | None, tuple[str, ...] | None]:
    """(/dev/dxg present, the files under /usr/lib/wsl/lib and /usr/lib/wsl/drivers/*/ as paths); None where the
    root does not show it. The WSL directories are read only on a node with /dev/dxg."""
    try:
        if not (host.is_dir("/dev") and host.listdir("/dev")):
            return None, None
        dxg = host.exists(DXG_DEVICE)
    except HostReadError:
        return None, None
    if not dxg:
        return False, None
    files: list[str] = []
    try:
        if host.is_dir(WSL_LIB_DIR):
            files += [f"{WSL_LIB_DIR}/{n}" for n in sorted(host.listdir(WSL_LIB_DIR))]
        if host.is_dir(WSL_DRIVERS_DIR):
            for folder in sorted(host.listdir(WSL_DRIVERS_DIR)):
                sub = f"{WSL_DRIVERS_DIR}/{folder}"
                if host.is_dir(sub):
                    files += [f"{sub}/{n}" for n in sorted(host.listdir(sub))]
    except HostReadError:
        return dxg, None
    return dxg, tuple(files[:_MAX_WSL_FILES])


def _conf_files(host: HostRoot, directories: tuple[str, ...]) -> list[str] | None:
    """*.conf files of the directories, a later directory's file shadowed by an earlier one of the same name
    (systemd's and kmod's precedence); None when none of the directories can be listed and /etc is not visible."""
    seen: dict[str, str] = {}
    for directory in directories:
        try:
            names = host.listdir(directory) if host.is_dir(directory) else []
        except HostReadError:
            continue
        for name in sorted(names)[:_MAX_FILES]:
            if name.endswith(".conf") and name not in seen:
                seen[name] = f"{directory}/{name}"
    return [seen[n] for n in sorted(seen)]


def scan_peermem_config(host: HostRoot) -> tuple[str, ...] | None:
    """Every line that loads or configures nvidia-peermem, as 'path: line'; () when none; None when /etc is not
    visible under the root."""
    if not host.is_dir("/etc"):
        return None
    found: list[str] = []
    files = (_conf_files(host, MODULES_LOAD_DIRS) or []) + ["/etc/modules"]
    for path in files:
        for line in _lines(host, path):
            if _PEERMEM.fullmatch(line.split("#", 1)[0].strip()):
                found.append(f"{path}: {line}")
    for path in _conf_files(host, MODPROBE_DIRS) or []:
        for line in _lines(host, path):
            words = line.split("#", 1)[0].split()
            if words and words[0] in ("softdep", "install", "options") and _PEERMEM.search(" ".join(words[1:])):
                found.append(f"{path}: {line}")
    return tuple(found)


def _lines(host: HostRoot, path: str) -> list[str]:
    try:
        text = host.read_text(path, 256 * 1024)
    except HostReadError:
        return []
    return [l.strip() for l in (text or "").splitlines() if l.strip() and not l.strip().startswith(("#", ";"))]
