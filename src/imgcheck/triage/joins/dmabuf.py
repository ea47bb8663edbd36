"""dma-buf: a registration the node refused, and `DMA-BUF is available` vs the GPU kernel module."""

from __future__ import annotations

from collections.abc import Iterator

from ...model.report import Evidence, node_evidence
from ..predicates import dmabuf_kernel_capable
from ..result import JoinNote
from .context import CONSISTENT, CONTRADICTS, EXPLAINS, UNKNOWN, JoinContext

REGISTRATION = "IBV-REG-DMABUF-EOPNOTSUPP"
SIGNATURES: tuple[str, ...] = (REGISTRATION,)
ALWAYS = True  # also reads the log's "DMA-BUF is available" context


def join(ctx: JoinContext) -> Iterator[JoinNote]:
    node = ctx.node
    if REGISTRATION in ctx.present:
        v, why = dmabuf_kernel_capable(ctx.facts)
        ev = [
            node_evidence(node, "kernel.release", node.kernel.release if node else None),
            node_evidence(node, "rdma.ofed_version", node.rdma.ofed_version if node else None),
        ]
        if ctx.image is not None:
            ev += ctx.lib_evidence()
        if v is False:
            yield ctx.note("dmabuf-registration", EXPLAINS, "dmabuf-registration.incapable", ev, why=why)
        elif v is True:
            yield ctx.note("dmabuf-registration", CONTRADICTS, "dmabuf-registration.capable", ev, why=why)
        else:
            yield JoinNote("dmabuf-registration", UNKNOWN, why, tuple(ev))
    if ctx.log.dmabuf_gpus and node is not None and node.gpu.kernel_module:
        ev = [
            Evidence("log.dmabuf_gpus", ",".join(str(g) for g in ctx.log.dmabuf_gpus)),  # a scalar, as Evidence holds
            node_evidence(node, "gpu.kernel_module", node.gpu.kernel_module),
        ]
        if node.gpu.kernel_module == "open":
            yield ctx.note("dmabuf-gpu", CONSISTENT, "dmabuf-gpu.open", ev, node=node.name)
        else:
            yield ctx.note("dmabuf-gpu", CONTRADICTS, "dmabuf-gpu.proprietary", ev, node=node.name)
