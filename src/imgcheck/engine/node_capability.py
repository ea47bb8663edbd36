"""Whether the node can carry a multi-node GPU job at all: an RDMA device, an NVIDIA driver, nvidia_uvm.

A node whose facts show none of these is a CPU node or, as often, a probe that read the wrong root (a
DaemonSet pod without the host's /sys and /proc): it must never read as a green OK for a GPU image.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..model.node import NO_DRIVER_REASON
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding
from .node_only import node_only

RULE = "NODE-NO-MULTINODE-GPU-PATH"


def _driver(ctx: Ctx) -> bool | None:
    """The NVIDIA kernel driver is loaded (True), the probe looked and found none (False), or unknown."""
    gpu = ctx.node.gpu
    if gpu.driver_version or gpu.gpus:
        return True
    return False if ctx.node.unknown.get("gpu.driver_version", "").startswith(NO_DRIVER_REASON) else None


@rule(RULE, requires=(facts.GPU_WORKLOAD,), reads=(facts.NODE_RDMA, facts.GPU_DRIVER))
def no_multinode_gpu_path(ctx: Ctx) -> Iterator[Outcome]:
    if not (node_only(ctx) or ctx.gpu_image):
        return  # known not to use the GPU: the rule does not apply; unknown: the engine asks, then assumes it does
    rdma, driver = ctx.node_has_rdma, _driver(ctx)
    evidence = [ctx.node_ev("rdma.stack", ctx.node.rdma.stack), ctx.node_ev("gpu.driver_version", None)]
    if rdma is False and driver is False:
        yield finding(ctx.matrix, RULE, evidence, node=ctx.node.name)
    elif driver is False:
        yield finding(ctx.matrix, RULE, evidence, variant="no-driver", node=ctx.node.name)
    elif rdma is False and driver:
        evidence[1] = ctx.node_ev("gpu.driver_version", ctx.node.gpu.driver_version)
        yield finding(ctx.matrix, RULE, evidence, variant="no-rdma", node=ctx.node.name)
    elif driver and ctx.node.gpu.uvm_loaded is False:
        evidence = [ctx.node_ev("gpu.uvm_loaded", False)]
        yield finding(ctx.matrix, RULE, evidence, variant="no-uvm", node=ctx.node.name)
    elif rdma and driver:
        yield decided(RULE, "an RDMA device and the NVIDIA driver")
    # otherwise one of the two is unknown: the engine asks (engine/contract.py)


RULES, NEEDS, REQUIRES, READS, check = family(no_multinode_gpu_path)
