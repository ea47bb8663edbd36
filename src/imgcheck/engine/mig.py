"""NCCL on a node whose GPUs are split by Multi-Instance GPU.

A MIG instance is a CUDA device of its own, but the NVIDIA MIG user guide lists what it cannot do: no CUDA IPC and
no GPU-to-GPU P2P (PCIe or NVLink) across instances, and a CUDA process enumerates one MIG device. Ranks on two
instances of one GPU share its PCI bus id, which NCCL refuses at init ("Duplicate GPU detected", init.cc, every
release since 2.5: catalog nccl_features); ranks on instances of different GPUs fall back to host memory. The node's
GPU instances come from /proc/driver/nvidia/capabilities (node/mig.py); GPUs that can be split are catalog mig_gpus.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..knowledge import visible_devices
from ..model.location import Location
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, assuming, decided, finding, unknown
from .node_only import node_only

NCCL_ON_MIG = "NODE-MIG-NCCL"
LAUNCH_ON_MIG = "job.mig_devices"  # the launch gives the job MIG devices (the visible-devices settings, resources)
_SETTINGS = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")
MIG_RESOURCE = "nvidia.com/mig-"  # the device plugin's MIG resources under the mixed strategy (nvidia.com/mig-1g.5gb)


def capable(ctx: Ctx) -> list[str] | None:
    """Names of the node's GPUs that support MIG; None when the GPUs are not known."""
    names = [g.name for g in ctx.node.gpu.gpus if g.name]
    if not names:
        return None
    patterns = [str(r["pattern"]) for r in ctx.matrix.rows("mig_gpus")]
    return [n for n in names if any(re.search(p, n) for p in patterns)]


@rule(
    NCCL_ON_MIG,
    requires=(facts.NCCL,),
    reads=(facts.MIG_INSTANCES, *facts.each_setting(*_SETTINGS)),
    needs={"mig_gpus": set()},
)
def nccl_on_mig(ctx: Ctx) -> Iterator[Outcome]:
    if not node_only(ctx) and ctx.nccl_present is False:
        yield decided(NCCL_ON_MIG, "the image has no NCCL")
        return
    instances = ctx.node.mig.gpu_instances
    if instances is None:
        found = capable(ctx)
        if found == []:
            yield decided(NCCL_ON_MIG, "none of the node's GPUs supports MIG (catalog mig_gpus)")
            return
        which = f"its {found[0]} GPUs support MIG" if found else "which GPUs it has is not known"
        yield unknown(
            NCCL_ON_MIG,
            f"whether MIG splits the node's GPUs ({which}): nvidia-smi -L lists MIG devices under a split GPU",
            (facts.MIG_INSTANCES.name,),
        )
        return
    if not instances:
        yield decided(NCCL_ON_MIG, "no GPU instance exists on the node: MIG splits none of its GPUs")
        return
    total = sum(instances.values())
    ev = [ctx.node_ev("mig.gpu_instances", ", ".join(f"{g}: {n}" for g, n in sorted(instances.items())))]
    ev += ctx.nccl_evidence()
    params: dict[str, Any] = {"node": ctx.node.name, "instances": total, "gpus": len(instances)}
    # The node's MIG configuration alone does not show the failure: NCCL refuses only ranks of one communicator on
    # instances of one GPU. Whether this job's ranks run on MIG devices, and several of them per node, is the launch's
    # (issue 32: the warning fired the same on a working job that gives each process one instance).
    migs, where = _mig_devices(ctx)
    job = ctx.job
    ranks = job.ranks_per_node if job is not None else None
    if migs and ranks is not None and ranks < 2:
        yield decided(
            NCCL_ON_MIG, f"{where} gives the job MIG devices, one rank per node: NCCL reaches peers over the network"
        )
        return
    if migs and ranks is not None:
        assert job is not None  # ranks came from it
        ev.append(Evidence("job.ranks_per_node", ranks, Location.file(job.path)))
        yield finding(ctx.matrix, NCCL_ON_MIG, [*ev, *migs], **params)
        return
    conditional = finding(ctx.matrix, NCCL_ON_MIG, [*ev, *migs], **params)
    if migs:
        words = f"several ranks of the job share a node and one NCCL communicator ({where} gives it MIG devices; how many ranks per node it starts is not stated)"
    else:
        words = "the job's ranks run on MIG devices of this node, several per node in one NCCL communicator (the launch does not show MIG devices: CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES MIG-<uuid> or an nvidia.com/mig-* resource)"
    yield assuming(conditional, words, LAUNCH_ON_MIG)


def _mig_devices(ctx: Ctx) -> tuple[list[Evidence], str]:
    """Evidence that the launch (or the image's Env) gives the job MIG devices, and where; empty when not shown."""
    out: list[Evidence] = []
    for name in _SETTINGS:
        s = ctx.setting(name)
        if s is not None and any(u.upper().startswith("MIG-") for u in visible_devices.parse(s.value).uuids):
            out.append(s.evidence)
    job = ctx.job
    if job is not None:
        for res, qty in job.resources or ():
            if res.startswith(MIG_RESOURCE):
                out.append(Evidence("job.resources", f"{res}: {qty}", Location.file(job.path)))
    return out, (job.where if job is not None else "the image's Env")


RULES, NEEDS, REQUIRES, READS, check = family(nccl_on_mig)
