"""`imgcheck node probe`: read a node's facts under a root directory into NodeFacts.

Reads only files (procfs, sysfs, /lib/modules, /etc, package databases) under `root`; never runs a
program on the host. A fact it cannot read is None with `unknown[fact] = reason`.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
import re
from typing import Literal

from ..errors import UnavailableError, UsageError
from ..extractors.os_release import parse_os_release
from ..model.location import Location
from ..model.node import PROBED_MODULES, Kernel, Limits, NodeFacts, NodeOs, NodeRdma
from .container_toolkit import scan_container_toolkit
from .fabric import scan_fabric
from .hostname import scan_hostname
from .hostroot import HostReadError, HostRoot
from .iommu import scan_iommu
from .kernel_config import read_kernel_config
from .mig import scan_mig
from .module_files import PEER_MODULE_FILES, read_ofed_symvers, scan_dkms, scan_module_files
from .modules import module_file_paths, running_kernel_module_files, scan_modules
from .net_interfaces import scan_interfaces
from .node_state import scan_node_state
from .numa import scan_numa
from .nvidia import scan_gpu
from .ofed import decide_stack, read_install
from .pci_acs import scan_acs
from .provenance import MEMORY_PEERS, OSRELEASE, probe_sources
from .rdma_cgroup import scan_rdma_cgroup
from .rdma_devices import scan_devices

_ELF_MACHINES = {62: "amd64", 183: "arm64", 21: "ppc64le", 22: "s390x"}
_RELEASE_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "ppc64le": "ppc64le", "s390x": "s390x"}


def probe(root: str = "/", name: str | None = None, now: _dt.datetime | None = None) -> NodeFacts:
    if not os.path.isdir(root):
        raise UnavailableError(f"--root {root}: not a directory")
    host = HostRoot(root)
    unknown: dict[str, str] = {}
    notes: dict[str, str] = {}
    read: dict[str, str] = {}  # fact -> the file it was read from, where the reader chose between files

    release = _read(host, OSRELEASE, "kernel.release", unknown)
    os_facts = _os(host, unknown, read)
    mods = scan_modules(host, release, unknown)
    devs = scan_devices(host, unknown)
    install = read_install(host, unknown)
    for key, note in install.notes.items():
        if f"rdma.{key}" not in unknown:  # said once, as the reason of the unknown
            notes[f"rdma.{key}"] = note
    decision = decide_stack(
        install,
        mods.modules,
        mods.sysfs_visible,
        bool(devs.devices) if devs.visible else None,
        _doca_series(),
        _mlnx_last_series(),
    )
    if decision.stack is None:
        unknown["rdma.stack"] = decision.why
    else:
        notes["rdma.stack"] = decision.why
    if decision.stack in ("mlnx_ofed", "doca") and rdma_peers_absent(host):
        notes["rdma.peer_memory_api"] = (
            f"{MEMORY_PEERS} is absent: that says nothing about the peer-memory API "
            "itself, which MLNX_OFED/DOCA ib_core keeps; releases from 24.04-0.6.6.0 on no longer "
            "create the directory (compat_matrix kernel_rdma_features "
            "memory_peers_sysfs_removed)"
        )
    arch = _arch(host, release, read)
    files = scan_module_files(host, module_file_paths(host, release, PEER_MODULE_FILES), unknown)
    symvers, symvers_path = read_ofed_symvers(host, release, _MACHINE.get(arch or ""))
    rdma = NodeRdma(
        stack=decision.stack,
        ofed_version=decision.ofed_version,
        modules=mods.modules,
        uverbs_abi=devs.uverbs_abi,
        peer_memory_api=_peer_memory_api(host, unknown),
        devices=devs.devices,
        module_files=files,
        ib_core_symvers=symvers,
        ib_core_symvers_path=symvers_path,
        installed_ofed_version=decision.installed_version,
    )
    gpu = scan_gpu(host, mods.modules, mods.sysfs_visible, unknown, read)
    limits = dataclasses.replace(_memlock(host, unknown, notes, read), rdma=scan_rdma_cgroup(host, unknown))
    if limits.rdma is not None:
        read["limits.rdma"] = "/sys/fs/cgroup (rdma.max along /proc/self/cgroup's path)"
    kconf = read_kernel_config(host, release, unknown, notes)
    # PCI addresses of the RDMA devices and GPUs (scan_acs and scan_iommu skip the unknown ones as well)
    endpoints = [a for a in [d.pci_address for d in devs.devices] + [g.pci_bus_id for g in gpu.gpus] if a]
    dkms = scan_dkms(host, unknown)
    module_names = {*PROBED_MODULES, *(m for build in dkms or () for m in build.modules or ())}
    facts = NodeFacts(
        name=name or _hostname(host, root, unknown),
        collected_at=(now or _dt.datetime.now(_dt.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        kernel=Kernel(
            release=release,
            config=kconf.config,
            config_source=kconf.source,
            cmdline=kconf.cmdline,
            cmdline_params=kconf.params,
            cma_total_kib=_cma_total(host, unknown, read),
            module_files=running_kernel_module_files(host, release, sorted(module_names), unknown),
        ),
        os=os_facts,
        rdma=rdma,
        gpu=gpu,
        limits=limits,
        arch=arch,
        unknown=unknown,
        notes=notes,
        dkms=dkms,
        pci_acs_redirect=scan_acs(host, endpoints, unknown),
        iommu_domains=scan_iommu(host, endpoints, unknown),
        origin=Location.described(f"probe of {host.root}"),
        net_interfaces=scan_interfaces(host, unknown),
        hostname_in_hosts=scan_hostname(host, unknown, read),
        numa_nodes=scan_numa(host, unknown),
        fabric=scan_fabric(host, mods.sysfs_visible, unknown),
        container_toolkit=scan_container_toolkit(host, unknown),
        mig=scan_mig(host, gpu.driver_version is not None or gpu.kernel_module is not None, unknown),
        state=scan_node_state(host, release, unknown, read),
    )
    return dataclasses.replace(facts, sources=probe_sources(facts, read, install.ofed_info_id is not None))


_MACHINE = {"amd64": "x86_64", "arm64": "aarch64", "ppc64le": "ppc64le", "s390x": "s390x"}


def _doca_series() -> frozenset[str] | None:
    """Release series (YY.MM) of which the compat matrix knows a DOCA-OFED release."""
    from ..errors import ImgcheckError
    from ..matrix import load_matrix

    try:
        rows = load_matrix().rows("doca_ofed_releases")
    except ImgcheckError:
        return None
    found = set()
    for row in rows:
        parts = (row.get("ofed_version") or "").split(".")
        if len(parts) >= 2 and parts[0].isdigit():
            found.add(f"{int(parts[0])}.{parts[1].split('-')[0]}")
    return frozenset(found)


def _mlnx_last_series() -> str | None:
    """MLNX_OFED's last release series (thresholds mlnx_ofed_last_series): a later series is DOCA-OFED."""
    from ..errors import ImgcheckError
    from ..matrix import load_matrix

    try:
        row = load_matrix().row("thresholds", key="mlnx_ofed_last_series")
    except ImgcheckError:
        return None
    return str(row["value"]) if row else None


_CMA_TOTAL = re.compile(r"^CmaTotal:\s+(\d+)\s+kB", re.M)


def _cma_total(host: HostRoot, unknown: dict[str, str], read: dict[str, str]) -> int | None:
    """CmaTotal of /proc/meminfo (fs/proc/meminfo.c prints it when the kernel has CONFIG_CMA)."""
    try:
        text = host.read_text("/proc/meminfo", 256 * 1024)
    except HostReadError as exc:
        unknown["kernel.cma_total_kib"] = str(exc)
        return None
    if text is None:
        unknown["kernel.cma_total_kib"] = "/proc/meminfo is not visible under the probe root"
        return None
    match = _CMA_TOTAL.search(text)
    if match is None:
        unknown["kernel.cma_total_kib"] = "/proc/meminfo has no CmaTotal line (a kernel without CONFIG_CMA)"
        return None
    read["kernel.cma_total_kib"] = "/proc/meminfo"
    return int(match.group(1))


def _read(host: HostRoot, path: str, key: str, unknown: dict[str, str]) -> str | None:
    try:
        value = host.read_value(path)
    except HostReadError as exc:
        unknown[key] = str(exc)
        return None
    if not value:
        unknown[key] = f"{path} is absent or empty"
        return None
    return value


def _os(host: HostRoot, unknown: dict[str, str], read: dict[str, str]) -> NodeOs:
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        try:
            text = host.read_text(path, 64 * 1024)
        except HostReadError as exc:
            unknown["os"] = str(exc)
            continue
        if text is not None:
            values = parse_os_release(text)
            unknown.pop("os", None)
            read["os"] = path
            return NodeOs(id=values.get("ID"), version_id=values.get("VERSION_ID"))
    unknown.setdefault("os", "no /etc/os-release or /usr/lib/os-release")
    return NodeOs()


def _peer_memory_api(host: HostRoot, unknown: dict[str, str]) -> bool | None:
    """MLNX_OFED/DOCA ib_core exposes /sys/kernel/mm/memory_peers; inbox kernels have no peer-memory API."""
    if not host.is_dir("/sys/kernel"):
        unknown["rdma.peer_memory_api"] = "/sys/kernel is not visible under the probe root"
        return None
    return host.is_dir(MEMORY_PEERS)


def rdma_peers_absent(host: HostRoot) -> bool:
    return host.is_dir("/sys/kernel") and not host.is_dir(MEMORY_PEERS)


_LIMIT_LINE = re.compile(r"^Max locked memory\s+(?P<soft>\S+)\s+(?P<hard>\S+)\s+(?P<unit>\S+)", re.M)


def _memlock(host: HostRoot, unknown: dict[str, str], notes: dict[str, str], read: dict[str, str]) -> Limits:
    """The soft RLIMIT_MEMLOCK of the probe process itself, in KiB (-1 = unlimited).

    It is what a process started the same way as the probe gets: run the probe as a Slurm task or as
    a pod with the same runtime settings as the jobs and it is the jobs' limit. RDMA registration
    pins memory against this limit.
    """
    try:
        text = host.read_text("/proc/self/limits", 64 * 1024)
    except HostReadError as exc:
        text = None
        unknown["limits.memlock_kib"] = str(exc)
    if text is not None:
        match = _LIMIT_LINE.search(text)
        if match:
            kib = _to_kib(match.group("soft"))
            if kib is not None:
                notes["limits.memlock_kib"] = (
                    "soft 'Max locked memory' of the probe process (/proc/self/limits): "
                    "what a process launched like the probe gets, not a node-wide setting"
                )
                read["limits.memlock_kib"] = "/proc/self/limits"
                return Limits(memlock_kib=kib)
    conf, conf_path = _limits_conf(host)
    if conf is not None and conf_path is not None:  # set together
        read["limits.memlock_kib"] = conf_path
        notes["limits.memlock_kib"] = (
            "'* soft memlock' from /etc/security/limits.conf: applies to PAM logins "
            "(ssh, su); containers and Slurm tasks get their runtime's limit instead"
        )
        unknown.pop("limits.memlock_kib", None)
        return Limits(memlock_kib=conf)
    unknown.setdefault("limits.memlock_kib", "no /proc/self/limits and no memlock line in /etc/security/limits.conf")
    return Limits()


def _to_kib(value: str) -> int | None:
    if value == "unlimited":
        return -1
    return int(value) // 1024 if value.isdigit() else None


def _limits_conf(host: HostRoot) -> tuple[int | None, str | None]:
    """The '* soft memlock' value in KiB (-1 unlimited) and the file that set it last."""
    paths = ["/etc/security/limits.conf"]
    try:
        paths += [f"/etc/security/limits.d/{n}" for n in host.listdir("/etc/security/limits.d") if n.endswith(".conf")]
    except HostReadError:
        pass
    found = found_in = None
    for path in paths:  # later files override earlier ones, as pam_limits reads them
        try:
            text = host.read_text(path, 1024 * 1024) or ""
        except HostReadError:
            continue
        for line in text.splitlines():
            fields = line.split("#", 1)[0].split()
            if len(fields) == 4 and fields[0] == "*" and fields[1] in ("soft", "-") and fields[2] == "memlock":
                value = fields[3]
                if value in ("unlimited", "infinity") or value.isdigit():
                    found, found_in = (-1 if not value.isdigit() else int(value)), path
    return found, found_in


def _hostname(host: HostRoot, root: str, unknown: dict[str, str]) -> str:
    candidates = ["/etc/hostname"]
    if os.path.abspath(root) == "/":  # /proc/sys/kernel/hostname is the reader's UTS namespace: only ours at /
        candidates.insert(0, "/proc/sys/kernel/hostname")
    for path in candidates:
        try:
            value = host.read_value(path)
        except HostReadError:
            continue
        if value:
            return value.split()[0]
    raise UsageError("cannot tell the node's name (no /etc/hostname under the root); give --name NAME")


def _arch(host: HostRoot, release: str | None, read: dict[str, str]) -> str | None:
    for path in ("/bin/sh", "/usr/bin/env"):
        try:
            real = host.resolve(path)
            if real is None:
                continue
            with open(real, "rb") as fh:
                head = fh.read(20)
        except (HostReadError, OSError):
            continue
        if len(head) == 20 and head[:4] == b"\x7fELF":
            order: Literal["little", "big"] = "little" if head[5] == 1 else "big"
            machine = _ELF_MACHINES.get(int.from_bytes(head[18:20], order))
            if machine:
                read["arch"] = path  # its ELF header
                return machine
    if release:
        for suffix, arch in _RELEASE_ARCH.items():
            if release.endswith(suffix):
                read["arch"] = OSRELEASE
                return arch
    return None
