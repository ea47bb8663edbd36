"""Node state that decides whether a job starts, read from host files: Docker's default runtime, /dev/shm's mode,
Yama's ptrace_scope, nouveau, the running kernel's headers, IMEX channel devices and /dev/nvidia-caps.

Each fact has three states: a value, "absent" (the root shows where it would be, and it is not there) and unknown
(None with `unknown["state.<field>"]` saying why). Only files are read (nothing is run), through HostRoot.
"""

from __future__ import annotations

import json
import os
import re
import stat

from ..model.node import NodeState
from . import device_cgroup, rdma_netns
from .hostroot import HostReadError, HostRoot
from .kernel_config import CMDLINE

# dockerd reads /etc/docker/daemon.json (rootful; the snap package keeps it under its own config dir); with no file or no
# default-runtime key the daemon's default runtime is runc (docs.docker.com/reference/cli/dockerd "default-runtime")
DOCKER_CONFIGS = ("/etc/docker/daemon.json", "/var/snap/docker/current/config/daemon.json")
DOCKER_BUILTIN_RUNTIME = "runc"
SHM = "/dev/shm"
YAMA = "/proc/sys/kernel/yama/ptrace_scope"
PROC_MODULES = "/proc/modules"
PROC_DEVICES = "/proc/devices"
IMEX_DIR = "/dev/nvidia-caps-imex-channels"
IMEX_MAJOR_NAME = "nvidia-caps-imex-channels"
CAPS_DIR = "/dev/nvidia-caps"
MODPROBE_DIRS = ("/etc/modprobe.d", "/run/modprobe.d", "/usr/lib/modprobe.d", "/lib/modprobe.d")
_CHANNEL = re.compile(r"^channel\d+$")
_CAP = re.compile(r"^nvidia-cap\d+$")
# modprobe.d lines that keep nouveau from loading (NVIDIA driver installation guide, "Disabling Nouveau"; kmod's
# modprobe.d(5): "blacklist" stops alias-based loading, "install nouveau /bin/false" stops any load)
_BLACKLIST = re.compile(r"^\s*(blacklist\s+nouveau|install\s+nouveau\s+/(usr/)?bin/(false|true))\b", re.M)


def dev_visible(host: HostRoot) -> bool:
    """/dev of the node is under the root (a devtmpfs always has /dev/null): absence below it means absent."""
    return host.exists("/dev/null")


def scan_node_state(
    host: HostRoot,
    release: str | None,
    unknown: dict[str, str],
    read: dict[str, str],
) -> NodeState:
    default_runtime, runtimes = _docker(host, unknown, read)
    blacklisted = _nouveau_blacklisted(host, unknown)
    imex_channels, imex_registered = _imex(host, unknown)
    cgroups = device_cgroup.cgroup_version(host, unknown)
    return NodeState(
        docker_default_runtime=default_runtime,
        docker_runtimes=runtimes,
        shm_mode=_shm_mode(host, unknown),
        yama_ptrace_scope=_yama(host, unknown),
        nouveau_loaded=_nouveau_loaded(host, unknown),
        nouveau_blacklisted=blacklisted,
        kernel_headers=_headers(host, release, unknown, read),
        imex_channels=imex_channels,
        imex_registered=imex_registered,
        nvidia_caps=_dev_list(host, CAPS_DIR, _CAP, "nvidia_caps", unknown),
        rdma_netns_mode=rdma_netns.read_netns_mode(host, unknown, read),
        cgroup_version=cgroups,
        docker_cgroup_driver=device_cgroup.docker_cgroup_driver(host, cgroups, unknown),
        containerd_systemd_cgroup=device_cgroup.containerd_systemd_cgroup(host, unknown),
        nvidia_char_links=device_cgroup.nvidia_char_links(host, unknown),
    )


def _docker(host: HostRoot, unknown: dict[str, str], read: dict[str, str]) -> tuple[str | None, tuple[str, ...] | None]:
    for path in DOCKER_CONFIGS:
        try:
            text = host.read_text(path, 1024 * 1024)
        except HostReadError as exc:
            unknown["state.docker_default_runtime"] = str(exc)
            return None, None
        if text is None:
            continue
        try:
            doc = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            unknown["state.docker_default_runtime"] = f"{path} is not valid JSON ({exc.msg}): dockerd refuses it"
            return None, None
        if not isinstance(doc, dict):
            unknown["state.docker_default_runtime"] = f"{path} is not a JSON object"
            return None, None
        read["state.docker_default_runtime"] = path
        runtimes = doc.get("runtimes")
        names = tuple(sorted(runtimes)) if isinstance(runtimes, dict) else ()
        value = doc.get("default-runtime")
        return (str(value) if isinstance(value, str) and value else DOCKER_BUILTIN_RUNTIME), names
    if host.is_dir("/etc/docker"):
        read["state.docker_default_runtime"] = "/etc/docker"
        return DOCKER_BUILTIN_RUNTIME, ()  # dockerd without daemon.json: runc, no other runtime registered
    unknown["state.docker_default_runtime"] = (
        "no /etc/docker/daemon.json and no /etc/docker under the root: Docker is not installed or its "
        "configuration is elsewhere (dockerd --config-file)"
    )
    return None, None


def _shm_mode(host: HostRoot, unknown: dict[str, str]) -> str | None:
    try:
        real = host.resolve(SHM)
    except HostReadError as exc:
        unknown["state.shm_mode"] = str(exc)
        return None
    if real is None:
        if dev_visible(host):
            return "absent"
        unknown["state.shm_mode"] = "/dev is not visible under the probe root"
        return None
    try:
        mode = os.stat(real).st_mode
    except OSError as exc:
        unknown["state.shm_mode"] = f"cannot stat {SHM}: {exc.strerror}"
        return None
    if not stat.S_ISDIR(mode):
        return "absent"  # not a directory: shm_open(3) cannot create anything there
    return format(stat.S_IMODE(mode), "o")


def _yama(host: HostRoot, unknown: dict[str, str]) -> int | None:
    try:
        value = host.read_value(YAMA)
    except HostReadError as exc:
        unknown["state.yama_ptrace_scope"] = str(exc)
        return None
    if value is None:
        # a kernel without Yama (CONFIG_SECURITY_YAMA unset) has no file and only the classic ptrace checks (as 0);
        # a root that copies part of /proc has none either: the two cannot be told apart from here
        unknown["state.yama_ptrace_scope"] = (
            f"{YAMA} is not under the root (a kernel without Yama, which behaves as scope 0, or /proc not shown)"
        )
        return None
    if not value.isdigit():
        unknown["state.yama_ptrace_scope"] = f"{YAMA} holds {value!r}, not a number"
        return None
    return int(value)


def _nouveau_loaded(host: HostRoot, unknown: dict[str, str]) -> bool | None:
    try:
        text = host.read_text(PROC_MODULES, 1024 * 1024)
    except HostReadError as exc:
        text = None
        unknown["state.nouveau_loaded"] = str(exc)
    if text is not None:
        unknown.pop("state.nouveau_loaded", None)
        return any(line.split(" ", 1)[0] == "nouveau" for line in text.splitlines())
    if host.is_dir("/sys/module"):
        unknown.pop("state.nouveau_loaded", None)
        return host.is_dir("/sys/module/nouveau")  # /sys/module/<name> exists for a loaded or built-in module
    unknown.setdefault("state.nouveau_loaded", "neither /proc/modules nor /sys/module is visible under the root")
    return None


def _nouveau_blacklisted(host: HostRoot, unknown: dict[str, str]) -> bool | None:
    try:
        cmdline = host.read_value(CMDLINE)
    except HostReadError:
        cmdline = None  # the modprobe.d files still decide
    # the kernel command line's module_blacklist= (kernel/module), modprobe.blacklist= (kmod) and dracut's
    # rd.driver.blacklist= take comma-separated module names
    for word in (cmdline or "").split():
        key, _, value = word.partition("=")
        if key in ("modprobe.blacklist", "module_blacklist", "rd.driver.blacklist") and "nouveau" in value.split(","):
            return True
    seen = False
    for directory in MODPROBE_DIRS:
        if not host.is_dir(directory):
            continue
        seen = True
        try:
            names = [n for n in host.listdir(directory) if n.endswith(".conf")]
            for name in names:
                if _BLACKLIST.search(host.read_text(f"{directory}/{name}", 256 * 1024) or ""):
                    return True
        except HostReadError as exc:
            unknown["state.nouveau_blacklisted"] = str(exc)
            return None
    if not seen:
        unknown["state.nouveau_blacklisted"] = "no modprobe.d directory is visible under the root"
        return None
    return False


def _headers(host: HostRoot, release: str | None, unknown: dict[str, str], read: dict[str, str]) -> bool | None:
    """Whether the running kernel's build tree is installed: /lib/modules/<release>/build (the link kernel packages
    and DKMS use) or the distributions' header directories, each with the Makefile kbuild needs."""
    if not release:
        unknown["state.kernel_headers"] = "the running kernel's release is not known"
        return None
    candidates = (f"/lib/modules/{release}/build", f"/usr/src/linux-headers-{release}", f"/usr/src/kernels/{release}")
    for path in candidates:
        if host.exists(f"{path}/Makefile"):
            read["state.kernel_headers"] = path
            return True
    if host.is_dir(f"/lib/modules/{release}"):
        return False
    unknown["state.kernel_headers"] = f"/lib/modules/{release} is not visible under the probe root"
    return None


def _dev_list(
    host: HostRoot, directory: str, pattern: re.Pattern[str], key: str, unknown: dict[str, str]
) -> tuple[str, ...] | None:
    try:
        if host.is_dir(directory):
            return tuple(n for n in host.listdir(directory) if pattern.match(n))
    except HostReadError as exc:
        unknown[f"state.{key}"] = str(exc)
        return None
    if dev_visible(host):
        return ()
    unknown[f"state.{key}"] = "/dev is not visible under the probe root"
    return None


def _imex(host: HostRoot, unknown: dict[str, str]) -> tuple[tuple[str, ...] | None, bool | None]:
    channels = _dev_list(host, IMEX_DIR, _CHANNEL, "imex_channels", unknown)
    try:
        text = host.read_text(PROC_DEVICES, 256 * 1024)
    except HostReadError as exc:
        unknown["state.imex_registered"] = str(exc)
        return channels, None
    if text is None:
        unknown["state.imex_registered"] = f"{PROC_DEVICES} is not visible under the probe root"
        return channels, None
    # "Character devices:" lines are "<major> <name>"; the driver registers the IMEX channel class by this name
    registered = any(line.split()[1:2] == [IMEX_MAJOR_NAME] for line in text.splitlines())
    return channels, registered
