"""How the node's container runtimes manage device cgroups: the cgroup hierarchy, Docker's and containerd's cgroup
driver, and the /dev/char links for the NVIDIA device nodes.

With the systemd cgroup driver runc hands the container's device rules to systemd as DeviceAllow= entries that name
/dev/char/<major>:<minor>; systemd re-applies them on `systemctl daemon-reload` and drops an entry whose path does not
exist, so a running container loses its /dev/nvidia* ("Failed to initialize NVML: Unknown Error"). The NVIDIA
devices have no /dev/char links unless udev or `nvidia-ctk system create-dev-char-symlinks` (from
NVIDIA/nvidia-container-toolkit@v1.12.0) makes them. Sources: NVIDIA/nvidia-container-toolkit@v1.20.0:
cmd/nvidia-ctk/system/create-dev-char-symlinks/create-dev-char-symlinks.go; https://github.com/NVIDIA/nvidia-docker/
issues/1650; https://github.com/NVIDIA/nvidia-container-toolkit/issues/48.

Each fact has three states (a value, absent, unknown with the reason in unknown["state.<field>"]); files only.
"""

from __future__ import annotations

import json
import os
import tomllib
from typing import Any

from . import node_state  # its Docker config paths and /dev check (it calls this module: read at call time)
from .hostroot import HostReadError, HostRoot

CGROUP_ROOT = "/sys/fs/cgroup"
DEV_CHAR = "/dev/char"
CONTAINERD_CONFIG = "/etc/containerd/config.toml"
SYSTEMD = "systemd"
CGROUPFS = "cgroupfs"
_DRIVER_OPT = "native.cgroupdriver="  # dockerd --exec-opt / daemon.json "exec-opts" (docs.docker.com dockerd)


def cgroup_version(host: HostRoot, unknown: dict[str, str]) -> str | None:
    """ "v2" (unified: cgroup.controllers at the root), "hybrid" (v1 controllers plus /sys/fs/cgroup/unified), "v1"."""
    if host.exists(f"{CGROUP_ROOT}/cgroup.controllers"):
        return "v2"
    if host.is_dir(f"{CGROUP_ROOT}/devices"):
        return "hybrid" if host.is_dir(f"{CGROUP_ROOT}/unified") else "v1"
    unknown["state.cgroup_version"] = f"{CGROUP_ROOT} shows neither cgroup.controllers (v2) nor devices/ (v1)"
    return None


def docker_cgroup_driver(host: HostRoot, version: str | None, unknown: dict[str, str]) -> str | None:
    key = "state.docker_cgroup_driver"
    for path in node_state.DOCKER_CONFIGS:
        try:
            text = host.read_text(path, 1024 * 1024)
        except HostReadError as exc:
            unknown[key] = str(exc)
            return None
        if text is None:
            continue
        try:
            doc = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            unknown[key] = f"{path} is not valid JSON ({exc.msg})"
            return None
        opts = doc.get("exec-opts") if isinstance(doc, dict) else None
        for opt in opts if isinstance(opts, list) else ():
            if isinstance(opt, str) and opt.replace(" ", "").startswith(_DRIVER_OPT):
                return opt.split("=", 1)[1].strip()
        return _docker_default(version, unknown)
    if host.is_dir("/etc/docker"):
        return _docker_default(version, unknown)
    unknown[key] = "no /etc/docker under the root: Docker is not installed or its configuration is elsewhere"
    return None


def _docker_default(version: str | None, unknown: dict[str, str]) -> str | None:
    if version in ("v1", "hybrid"):
        return CGROUPFS  # dockerd's default driver on cgroup v1
    # on cgroup v2 dockerd picks systemd when systemd is the init (moby daemon_unix.go), cgroupfs otherwise: not read
    unknown["state.docker_cgroup_driver"] = (
        "daemon.json sets no native.cgroupdriver and on cgroup v2 dockerd's default depends on its release and init "
        "(docker info --format '{{.CgroupDriver}}')"
    )
    return None


def containerd_systemd_cgroup(host: HostRoot, unknown: dict[str, str]) -> bool | None:
    """runc's SystemdCgroup option in containerd's CRI config (false when a version-2 config, containerd 1.x's,
    does not set it: containerd/containerd@v1.7.0:docs/cri/config.md)."""
    key = "state.containerd_systemd_cgroup"
    try:
        text = host.read_text(CONTAINERD_CONFIG, 1024 * 1024)
    except HostReadError as exc:
        unknown[key] = str(exc)
        return None
    if text is None:
        unknown[key] = f"no {CONTAINERD_CONFIG} under the root (containerd absent, or run with its built-in defaults)"
        return None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        unknown[key] = f"{CONTAINERD_CONFIG} is not valid TOML ({exc})"
        return None
    flags = _flags(doc, ("SystemdCgroup", "systemd_cgroup"))
    if flags:
        return any(flags)
    if doc.get("version") == 2:
        return False
    unknown[key] = f"{CONTAINERD_CONFIG} sets no SystemdCgroup and is not a version-2 config whose default is false"
    return None


def _flags(doc: Any, names: tuple[str, ...]) -> list[bool]:
    """Every boolean the config sets under one of `names`, at any depth (the CRI plugin's table name differs between
    config versions 2 and 3, and each runtime handler has its own options table)."""
    if not isinstance(doc, dict):
        return []
    found = [v for k, v in doc.items() if k in names and isinstance(v, bool)]
    for value in doc.values():
        found += _flags(value, names)
    return found


def nvidia_char_links(host: HostRoot, unknown: dict[str, str]) -> tuple[str, ...] | None:
    """The /dev/char/<major>:<minor> entries that lead to an NVIDIA device node (/dev/nvidia*); (): none."""
    key = "state.nvidia_char_links"
    try:
        if not host.is_dir(DEV_CHAR):
            if node_state.dev_visible(host):
                return ()
            unknown[key] = "/dev is not visible under the probe root"
            return None
        links = []
        for name in sorted(host.listdir(DEV_CHAR)):
            real = host.resolve(f"{DEV_CHAR}/{name}")
            if real is not None and os.path.basename(real).startswith("nvidia"):
                links.append(name)
        return tuple(links)
    except HostReadError as exc:
        unknown[key] = str(exc)
        return None
