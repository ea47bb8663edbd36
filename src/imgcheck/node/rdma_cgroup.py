"""The RDMA cgroup limits the probe process runs under: rdma.max of its cgroup and every ancestor (cgroup v2).

The rdma controller limits, per device, `hca_handle` (one per opened device context: each process that opens an
HCA charges one, ib_uverbs' ucontext allocation) and `hca_object` (QPs, CQs, MRs, PDs ... together):
Documentation/admin-guide/cgroup-v2.rst "RDMA" (rdma.max lines `mlx5_0 hca_handle=2 hca_object=2000`, `max` for no
limit) and kernel/cgroup/rdma.c. A limit holds at every level, so the effective one is the smallest along the path.
Like memlock_kib it is the limit of a process launched the way the probe was (a pod of the job's QoS class, a
Slurm task), not a node-wide setting.
"""

from __future__ import annotations

from .hostroot import HostReadError, HostRoot

CGROUP_ROOT = "/sys/fs/cgroup"
RESOURCES = ("hca_handle", "hca_object")
_MAX_DEPTH = 64


def _own_path(host: HostRoot) -> str | None:
    try:
        text = host.read_text("/proc/self/cgroup", 64 * 1024)
    except HostReadError:
        return None
    for line in (text or "").splitlines():
        if line.startswith("0::"):
            return line[3:].strip() or "/"
    return None


def parse_rdma_max(text: str) -> dict[str, dict[str, int | None]]:
    """{device: {resource: limit, None for max}} from rdma.max."""
    found: dict[str, dict[str, int | None]] = {}
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        limits: dict[str, int | None] = {}
        for word in words[1:]:
            key, _, value = word.partition("=")
            if key in RESOURCES:
                limits[key] = None if value == "max" else int(value) if value.isdigit() else None
        found[words[0]] = limits
    return found


def scan_rdma_cgroup(host: HostRoot, unknown: dict[str, str]) -> dict[str, dict[str, int | None]] | None:
    """The effective per-device limits; {} when no level limits any device; None when unreadable."""
    path = _own_path(host)
    if path is None:
        unknown["limits.rdma"] = (
            "/proc/self/cgroup has no cgroup v2 entry (or is not visible): the RDMA cgroup is unknown"
        )
        return None
    if not host.is_dir(CGROUP_ROOT):
        unknown["limits.rdma"] = f"{CGROUP_ROOT} is not visible under the probe root"
        return None
    try:
        controllers = host.read_text(f"{CGROUP_ROOT}/cgroup.controllers", 4096) or ""
    except HostReadError:
        controllers = ""
    if "rdma" not in controllers.split():
        unknown["limits.rdma"] = f"the rdma controller is not listed in {CGROUP_ROOT}/cgroup.controllers"
        return None
    effective: dict[str, dict[str, int | None]] = {}
    parts = [p for p in path.split("/") if p][:_MAX_DEPTH]
    for depth in range(1, len(parts) + 1):
        level = f"{CGROUP_ROOT}/" + "/".join(parts[:depth])
        try:
            text = host.read_text(f"{level}/rdma.max", 64 * 1024)
        except HostReadError:
            continue
        for device, limits in parse_rdma_max(text or "").items():
            mine = effective.setdefault(device, {})
            for key, value in limits.items():
                if value is not None and (mine.get(key) is None or value < (mine[key] or 0)):
                    mine[key] = value
                else:
                    mine.setdefault(key, None)
    return effective
