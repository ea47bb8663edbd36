"""DMA-BUF registration (F4): the GPU offers it, the NIC stack or the image's libibverbs cannot take it."""

from __future__ import annotations

from collections.abc import Iterator

from ..model.node import STACK_INBOX
from . import facts
from .context import Ctx
from .emit import Outcome, decided, finding, unknown
from .gates import over_rdma

RULES = ("DMABUF-UNSUPPORTED",)
NEEDS = {
    "nccl_features": {"dmabuf", "dmabuf_no_backoff"},
    "kernel_rdma_features": {("dmabuf_mr", "inbox"), ("dmabuf_mr", "mlnx_ofed")},
    "rdma_core_functions": {"ibv_reg_dmabuf_mr"},
}
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "DMABUF-UNSUPPORTED": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA),
}
READS = {
    "DMABUF-UNSUPPORTED": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA, facts.CUDA, facts.GPU_DRIVER),
}


@over_rdma("DMABUF-UNSUPPORTED", need_version=False)
def check(ctx: Ctx, rule: str) -> Iterator[Outcome]:
    # Node and library facts first: when they decide it, NCCL's version does not matter (gate order)
    s = ctx.setting("NCCL_DMABUF_ENABLE")
    if s is not None and s.as_int() == 0:
        yield decided(rule, f"{s.label} turns DMA-BUF off")
        return
    nic_ok, why = ctx.nic_dmabuf
    if nic_ok:
        yield decided(rule, f"the NIC stack and the image's libibverbs can register DMA-BUF memory ({why})")
        return
    module = ctx.node.gpu.kernel_module
    if module is not None and module != "open":
        yield decided(rule, "the GPU driver's proprietary kernel modules export no DMA-BUF, so NCCL never tries it")
        return
    newer = ctx.nccl_at_least("dmabuf")
    if newer is None:
        if nic_ok is False and module == "open":  # the node rules DMA-BUF out: only NCCL's version is asked
            yield unknown(
                rule,
                f"{why}, while the GPU driver's open kernel modules export DMA-BUF: whether NCCL tries it (and fails "
                f"or falls back) depends on its version, from {ctx.nccl_floor('dmabuf')}: "
                + ctx.nccl_unknown_reason("dmabuf"),
            )
        else:
            yield unknown(rule, ctx.nccl_unknown_reason("dmabuf"))
        return
    nccl = ctx.nccl
    assert nccl is not None  # a decided feature needs a version
    if not newer:
        return
    if module is None:
        yield unknown(rule, f"{why}; whether NCCL tries DMA-BUF depends on " + ctx.unknown_why("gpu.kernel_module"))
        return
    if nic_ok is None:
        yield unknown(rule, why)
        return
    rdma_core = ctx.lib_first_release("ibv_reg_dmabuf_mr")
    floor = ctx.stack_floor("dmabuf_mr")
    if ctx.node.rdma.stack == STACK_INBOX:
        nic_fix = f"or upgrade the node kernel to >= {floor} (and rdma-core >= {rdma_core} in the image)"
    else:
        nic_fix = f"or upgrade the node's MLNX_OFED/DOCA-OFED to >= {floor} (and rdma-core >= {rdma_core} in the image)"
    lib_dmabuf = ctx.lib_has("ibv_reg_dmabuf_mr")
    if lib_dmabuf is False:
        nic_fix = f"or use an image with rdma-core >= {rdma_core} (libibverbs exporting ibv_reg_dmabuf_mr)"
    no_backoff = ctx.nccl_at_least("dmabuf_no_backoff")
    evidence = (
        ctx.nccl_evidence()
        + [
            ctx.lib_evidence("has_reg_dmabuf_mr", lib_dmabuf),
            ctx.node_ev("gpu.kernel_module", module),
        ]
        + ctx.stack_evidence()
    )
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        variant="fallback" if no_backoff is False else None,
        nccl=nccl.version,
        why=why,
        nic_fix=nic_fix,
    )
