"""Loaded kernel modules: version, srcversion, and whether they are out-of-tree (MLNX_OFED / DOCA).

A module is out-of-tree when its taint flags contain `O` (the kernel sets TAINT_OOT_MODULE for any
module not built in the kernel tree), or, when taint is unreadable, when the file modprobe would load
lives under /lib/modules/<release>/updates or /extra (where DKMS and kmod packages install) instead
of /kernel. The loaded module's own taint wins over the file location: a DKMS build that failed for a
new kernel leaves the in-tree module loaded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..model.node import PROBED_MODULES, KernelModule
from .hostroot import HostReadError, HostRoot

_OOT_DIRS = ("updates", "extra")
_KO_SUFFIXES = (".ko", ".ko.xz", ".ko.zst", ".ko.gz")


@dataclass(frozen=True)
class ModuleScan:
    modules: dict[str, KernelModule]
    sysfs_visible: bool  # False: /sys/module is not there, so "not loaded" cannot be told from "cannot see"


def scan_modules(
    host: HostRoot, release: str | None, unknown: dict[str, str], names: Iterable[str] = PROBED_MODULES
) -> ModuleScan:
    if not host.is_dir("/sys/module"):
        unknown["rdma.modules"] = "/sys/module is not visible under the probe root (is /sys mounted?)"
        return ModuleScan({}, False)
    dep_paths = _module_paths(host, release)
    builtin = _builtin_names(host, release)
    result: dict[str, KernelModule] = {}
    for name in names:
        base = f"/sys/module/{name}"
        if not host.is_dir(base):
            continue  # not loaded
        try:
            version = host.read_value(f"{base}/version")  # only present if the module declares MODULE_VERSION
            srcversion = host.read_value(f"{base}/srcversion")
            taint = host.read_value(f"{base}/taint")
        except HostReadError as exc:
            unknown[f"rdma.modules.{name}"] = str(exc)
            result[name] = KernelModule()
            continue
        path = dep_paths.get(name)
        if path is None and name in builtin:
            path = "(built-in)"
        if path is None:
            path = _find_module_file(host, release, name)
        out_of_tree = _out_of_tree(taint, path, name in builtin)
        if out_of_tree is None:
            unknown[f"rdma.modules.{name}.out_of_tree"] = (
                f"no {base}/taint and the module file was not found under /lib/modules/{release or '<release>'}"
            )
        result[name] = KernelModule(version=version, srcversion=srcversion, out_of_tree=out_of_tree, path=path)
    return ModuleScan(result, True)


def module_file_paths(host: HostRoot, release: str | None, names: Iterable[str]) -> dict[str, str | None]:
    """name -> the file modprobe would load for it (modules.dep first, then a search), loaded or not."""
    dep_paths = _module_paths(host, release)
    builtin = _builtin_names(host, release)
    result: dict[str, str | None] = {}
    for name in names:
        path = (
            dep_paths.get(name) or ("(built-in)" if name in builtin else None) or _find_module_file(host, release, name)
        )
        if path:
            result[name] = path
    return result


def _out_of_tree(taint: str | None, path: str | None, builtin: bool) -> bool | None:
    if taint is not None:
        return "O" in taint
    if builtin:
        return False
    if path is None:
        return None
    parts = path.split("/")
    if len(parts) > 4 and parts[1] == "lib" and parts[2] == "modules":
        top = parts[4]
        if top in _OOT_DIRS:
            return True
        if top == "kernel":
            return False
    return None


def _module_paths(host: HostRoot, release: str | None) -> dict[str, str]:
    """Module name -> absolute path from modules.dep: depmod already chose between updates/ and kernel/."""
    if not release:
        return {}
    try:
        text = host.read_text(f"/lib/modules/{release}/modules.dep", 32 * 1024 * 1024)
    except HostReadError:
        return {}
    paths: dict[str, str] = {}
    for line in (text or "").splitlines():
        rel = line.split(":", 1)[0].strip()
        if not rel:
            continue
        name = module_name(rel)
        if name:
            paths.setdefault(name, rel if rel.startswith("/") else f"/lib/modules/{release}/{rel}")
    return paths


def _builtin_names(host: HostRoot, release: str | None) -> set[str]:
    if not release:
        return set()
    try:
        text = host.read_text(f"/lib/modules/{release}/modules.builtin", 8 * 1024 * 1024)
    except HostReadError:
        return set()
    return {n for n in (module_name(line.strip()) for line in (text or "").splitlines()) if n}


def _find_module_file(host: HostRoot, release: str | None, name: str) -> str | None:
    """Without modules.dep: look in depmod's default order, updates/ and extra/ before kernel/."""
    if not release:
        return None
    for top in (*_OOT_DIRS, "kernel"):
        found = _walk_for(host, f"/lib/modules/{release}/{top}", name, depth=8)
        if found:
            return found
    return None


def _walk_for(host: HostRoot, directory: str, name: str, depth: int) -> str | None:
    if depth < 0:
        return None
    try:
        entries = host.listdir(directory)
    except HostReadError:
        return None
    for entry in entries:
        if module_name(entry) == name:
            return f"{directory}/{entry}"
    for entry in entries:
        sub = f"{directory}/{entry}"
        if host.is_dir(sub):
            found = _walk_for(host, sub, name, depth - 1)
            if found:
                return found
    return None


def module_name(path: str) -> str | None:
    base = path.rsplit("/", 1)[-1]
    for suffix in _KO_SUFFIXES:
        if base.endswith(suffix):
            return base[: -len(suffix)].replace("-", "_")  # the kernel treats - and _ alike in names
    return None


def running_kernel_module_files(
    host: HostRoot, release: str | None, names: Iterable[str], unknown: dict[str, str]
) -> dict[str, str] | None:
    """name -> the file modprobe would load for the running kernel, for the names that have one; None when
    /lib/modules/<release> cannot be read (then whether a module exists for this kernel is unknown)."""
    if not release or not host.is_dir(f"/lib/modules/{release}"):
        unknown["kernel.module_files"] = f"/lib/modules/{release or '<release>'} is not readable under the probe root"
        return None
    wanted = set(names)
    dep = _module_paths(host, release)
    if dep:  # depmod's index is the whole list (dkms install runs depmod): no tree walk per missing name
        return {n: p for n, p in dep.items() if n in wanted}
    found = module_file_paths(host, release, wanted)
    return {n: p for n, p in found.items() if p and p != "(built-in)"}
