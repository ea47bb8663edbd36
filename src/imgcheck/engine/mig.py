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

from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown
from .node_only import node_only

NCCL_ON_MIG = "NODE-MIG-NCCL"


def capable(ctx: Ctx) -> list[str] | None:
    """Names of the node's GPUs that support MIG; None when the GPUs are not known."""
    names = [g.name for g in ctx.node.gpu.gpus if g.name]
    if not names:
        return None
    patterns = [str(r["pattern"]) for r in ctx.matrix.rows("mig_gpus")]
    return [n for n in names if any(re.search(p, n) for p in patterns)]


@rule(NCCL_ON_MIG, requires=(facts.NCCL,), reads=(facts.MIG_INSTANCES,), needs={"mig_gpus": set()})
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
    yield finding(ctx.matrix, NCCL_ON_MIG, ev, node=ctx.node.name, instances=total, gpus=len(instances))


RULES, NEEDS, REQUIRES, READS, check = family(nccl_on_mig)
