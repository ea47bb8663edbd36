"""The NVIDIA Container Toolkit on the node, read from files (never by running nvidia-ctk or nvidia-container-cli).

- Versions: the host's dpkg/rpm records of nvidia-container-toolkit (or -base) and libnvidia-container1 (or
  libnvidia-container-tools); a package version "1.17.8-1" is upstream 1.17.8.
- Configs: the host package's /etc/nvidia-container-runtime/config.toml and the GPU Operator's toolkit install
  (/usr/local/nvidia/toolkit/.config/nvidia-container-runtime/config.toml: NVIDIA/nvidia-container-toolkit
  cmd/nvidia-ctk-installer toolkit.go). Of each: `nvidia-container-runtime.mode` (legacy | cdi | csv | auto; unset
  means auto, api/config/v1/config.go) and `nvidia-container-cli.root`, the driver root whose libraries are injected
  (unset: "/"; the operator's installer writes /run/nvidia/driver, its DefaultNvidiaDriverRoot), and whether
  libnvidia-ml.so.1 is found under that root.
- CDI specs: the files of the CDI spec directories (/etc/cdi and /var/run/cdi, container-device-interface
  pkg/cdi/spec-dirs.go) that declare kind nvidia.com/gpu (nvidia-ctk cdi generate writes nvidia.yaml / .json).
"""

from __future__ import annotations

import re
import tomllib

from ..model.node import NodeContainerToolkit, ToolkitConfig
from .driver_userspace import LIBRARY_DIRS, OPERATOR_DRIVER_ROOT, SONAME
from .hostroot import HostReadError, HostRoot
from .ofed import host_packages

HOST_CONFIG = "/etc/nvidia-container-runtime/config.toml"
OPERATOR_CONFIG = "/usr/local/nvidia/toolkit/.config/nvidia-container-runtime/config.toml"
CDI_DIRS = ("/etc/cdi", "/var/run/cdi", "/run/cdi")
TOOLKIT_BINARIES = ("/usr/bin/nvidia-container-runtime", "/usr/bin/nvidia-ctk", "/usr/local/nvidia/toolkit/nvidia-ctk")
_TOOLKIT_PACKAGES = ("nvidia-container-toolkit", "nvidia-container-toolkit-base")
_LNC_PACKAGES = ("libnvidia-container1", "libnvidia-container-tools", "libnvidia-container")
_UPSTREAM = re.compile(r"^(?:\d+:)?(?P<ver>\d+\.\d+\.\d+)(?:[~-](?P<rc>rc\.?\d+))?")
_CDI_KIND = re.compile(rb"""kind["']?\s*:\s*["']?nvidia\.com/gpu\b""")
DEFAULT_ROOT = "/"
DEFAULT_MODE = "auto"


def _upstream(version: str) -> str | None:
    m = _UPSTREAM.match(version)
    return m["ver"] if m else None


def _config(host: HostRoot, path: str, unknown: dict[str, str]) -> ToolkitConfig | None:
    try:
        text = host.read_text(path, 1024 * 1024)
    except HostReadError as exc:
        unknown[f"container_toolkit.configs.{path}"] = str(exc)
        return None
    if text is None:
        return None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        unknown[f"container_toolkit.configs.{path}"] = f"{path} is not valid TOML ({exc})"
        return ToolkitConfig(path=path)
    runtime = doc.get("nvidia-container-runtime")
    cli = doc.get("nvidia-container-cli")
    mode = runtime.get("mode") if isinstance(runtime, dict) else None
    root = cli.get("root") if isinstance(cli, dict) else None
    root = str(root) if isinstance(root, str) and root.strip() else DEFAULT_ROOT
    return ToolkitConfig(
        path=path,
        mode=str(mode) if isinstance(mode, str) and mode else DEFAULT_MODE,
        driver_root=root,
        driver_found=_driver_under(host, root),
    )


def _driver_under(host: HostRoot, root: str) -> bool | None:
    """Whether libnvidia-ml.so.1 is under the driver root (the library nvidia-container-cli loads first)."""
    prefix = "" if root.rstrip("/") == "" else root.rstrip("/")
    if prefix and not host.is_dir(prefix):
        return False
    try:
        return any(host.resolve(f"{prefix}{d}/{SONAME}") is not None for d in LIBRARY_DIRS)
    except HostReadError:
        return None


def _cdi_specs(host: HostRoot) -> tuple[str, ...] | None:
    if not host.is_dir("/etc"):
        return None
    found = []
    for directory in CDI_DIRS:
        if not host.is_dir(directory):
            continue
        for name in sorted(host.listdir(directory)):
            if not name.endswith((".yaml", ".yml", ".json")):
                continue
            path = f"{directory}/{name}"
            try:
                data = host.read_bytes(path, 8 * 1024 * 1024)
            except HostReadError:
                continue
            if data and _CDI_KIND.search(data):
                found.append(path)
    return tuple(found)


def scan_container_toolkit(host: HostRoot, unknown: dict[str, str]) -> NodeContainerToolkit:
    names = set(_TOOLKIT_PACKAGES + _LNC_PACKAGES)
    packages, db_read = host_packages(host, lambda n: n in names, {})
    by_name = {p.name: p.version for p in packages}
    toolkit = next((by_name[n] for n in _TOOLKIT_PACKAGES if n in by_name), None)
    lnc = next((by_name[n] for n in _LNC_PACKAGES if n in by_name), None)
    configs = tuple(c for c in (_config(host, p, unknown) for p in (HOST_CONFIG, OPERATOR_CONFIG)) if c is not None)
    binaries = any(host.exists(p) for p in TOOLKIT_BINARIES)
    installed = True if (toolkit or lnc or configs or binaries) else (False if db_read else None)
    if installed is None:
        unknown["container_toolkit.installed"] = (
            "no package database readable under the probe root, and no toolkit config or binary"
        )
    tk_version = _upstream(toolkit) if toolkit else None
    if installed and tk_version is None:
        unknown["container_toolkit.toolkit_version"] = (
            f"nvidia-container-toolkit {toolkit}: not an upstream version"
            if toolkit
            else "the toolkit is not installed from a package (GPU Operator toolkit pod or a binary install): "
            "its release is not recorded on the host"
        )
    specs = _cdi_specs(host)
    if specs is None:
        unknown["container_toolkit.cdi_specs"] = "/etc is not visible under the probe root"
    operator_driver = host.is_dir(OPERATOR_DRIVER_ROOT) if host.is_dir("/run") else None
    if operator_driver is None:
        unknown["container_toolkit.operator_driver_root"] = (
            f"/run is not visible under the probe root (mount the host's /run to see {OPERATOR_DRIVER_ROOT})"
        )
    return NodeContainerToolkit(
        installed=installed,
        toolkit_version=tk_version,
        libnvidia_container_version=_upstream(lnc) if lnc else None,
        configs=configs if host.is_dir("/etc") else None,
        cdi_specs=specs,
        operator_driver_root=(_driver_under(host, OPERATOR_DRIVER_ROOT) or False)
        if operator_driver
        else operator_driver,
    )
