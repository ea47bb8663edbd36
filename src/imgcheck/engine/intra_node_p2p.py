"""Whether a job moves data GPU<->GPU over PCIe peer-to-peer on one node, for the node's ACS and IOMMU rules.

NCCL's P2P transport (and CUDA peer access, which it uses) sends GPU<->GPU traffic as PCIe peer-to-peer
transactions whenever CUDA reports that two GPUs of one node can access each other's memory. A bridge with ACS
P2P redirect, or an IOMMU translating the GPUs' DMA, sits in that path whether or not any NIC is involved (NCCL
troubleshooting guide, "GPU-to-GPU communication" and "PCI Access Control Services"). What decides whether the
path is used is the job's shape on one node: more than one GPU, and NCCL's P2P transport not turned off
(NCCL_P2P_DISABLE=1, or NCCL_P2P_LEVEL=LOC: src/graph/paths.cc, the parameter table in nccl_params.json).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..job.model import RUNTIME_DOCKER, RUNTIME_ENROOT, RUNTIME_KUBERNETES
from .context import Ctx

CONTAINER_RUNTIMES = (RUNTIME_DOCKER, RUNTIME_KUBERNETES, RUNTIME_ENROOT)
# NCCL_P2P_LEVEL values that allow no P2P path at all (LOC, or its numeric form 0): NCCL's own docs
P2P_LEVEL_NONE = ("LOC", "0")


@dataclass(frozen=True)
class PeerPath:
    """The job's GPU<->GPU P2P on one node: used (True), not used (False) or not known (None), and why."""

    used: bool | None
    why: str
    gpus: int | None = None


def _visible_devices(ctx: Ctx) -> int | None:
    """GPUs CUDA_VISIBLE_DEVICES leaves the process (a comma list), None when it is not set or not a list."""
    setting = ctx.setting("CUDA_VISIBLE_DEVICES")
    if setting is None:
        return None
    items = [v for v in setting.value.split(",") if v.strip()]
    return len(items)


def job_gpus(ctx: Ctx) -> tuple[int | None, str]:
    """How many GPUs the job uses on one node, and where that comes from (None: the spec does not say)."""
    visible = _visible_devices(ctx)
    if visible is not None:
        return visible, "CUDA_VISIBLE_DEVICES"
    job = ctx.job
    if job is None:
        return None, "no launch spec was given, so how many GPUs the job uses on one node is not known"
    node_gpus = len(ctx.node.gpu.gpus) or None
    if job.gpus is not None and job.gpus > 0:
        return job.gpus, job.gpus_setting or "GPUs the spec requests"
    if job.gpus == -1:
        if node_gpus is None:
            return None, "the spec requests all the node's GPUs and the node facts do not list them"
        return node_gpus, "all the node's GPUs (the spec requests all)"
    if job.ranks_per_node:
        return job.ranks_per_node, job.ranks_setting or "processes per node the spec starts"
    if job.runtime not in CONTAINER_RUNTIMES and node_gpus is not None:
        # no container runtime restricts the devices: the process sees every GPU of the node
        return node_gpus, "every GPU of the node (no container runtime restricts them)"
    return None, "the launch spec states neither a GPU count nor ranks per node"


def peer_path(ctx: Ctx) -> PeerPath:
    """Whether the job's NCCL moves data GPU<->GPU over PCIe P2P on one node."""
    present = ctx.nccl_present
    if present is False:
        return PeerPath(False, "the image has no NCCL, whose P2P transport is the peer-to-peer user")
    for name in ("NCCL_P2P_DISABLE",):
        setting = ctx.setting(name)
        if setting is not None and (setting.as_int() or 0) != 0:
            return PeerPath(False, f"{name}={setting.value}: NCCL's P2P transport is off")
    level = ctx.setting("NCCL_P2P_LEVEL")
    if level is not None and level.value.strip().upper() in P2P_LEVEL_NONE:
        return PeerPath(False, f"NCCL_P2P_LEVEL={level.value}: NCCL uses no P2P path")
    if len(ctx.node.gpu.gpus) == 1:
        return PeerPath(False, "the node has one GPU: no GPU<->GPU peer traffic")
    gpus, where = job_gpus(ctx)
    if gpus is None:
        return PeerPath(None, where)
    if gpus < 2:
        return PeerPath(False, f"the job uses {gpus} GPU per node ({where}): no GPU<->GPU peer traffic", gpus)
    if present is None:
        return PeerPath(None, "whether the image ships NCCL is not known", gpus)
    return PeerPath(True, where, gpus)
