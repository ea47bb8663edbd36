"""DMA-BUF registration (F4): the GPU offers it, the NIC stack or the image's libibverbs cannot take it."""

from __future__ import annotations

from ..model.node import STACK_INBOX
from .context import Ctx
from .emit import finding, unknown
from .gates import over_rdma

RULES = ("DMABUF-UNSUPPORTED",)


@over_rdma("DMABUF-UNSUPPORTED")
def check(ctx: Ctx, rule: str):
    if not ctx.nccl_at_least("dmabuf"):
        return
    s = ctx.setting("NCCL_DMABUF_ENABLE")
    if s is not None and s.as_int() == 0:
        return
    nic_ok, why = ctx.nic_dmabuf
    if nic_ok:
        return
    module = ctx.node.gpu.kernel_module
    if module is None:
        yield unknown(rule, f"{why}; whether NCCL tries DMA-BUF depends on " + ctx.unknown_why("gpu.kernel_module"))
        return
    if module != "open":
        return  # the GPU does not offer DMA-BUF, so NCCL never calls ibv_reg_dmabuf_mr
    if nic_ok is None:
        yield unknown(rule, why)
        return
    if ctx.node.rdma.stack == STACK_INBOX:
        nic_fix = "or upgrade the node kernel to >= 5.12 (and rdma-core >= 34 in the image)"
    else:
        nic_fix = "or upgrade the node's MLNX_OFED/DOCA-OFED to >= 5.5 (and rdma-core >= 34 in the image)"
    if ctx.lib is not None and not ctx.lib.has_reg_dmabuf_mr:
        nic_fix = "or use an image with rdma-core >= 34 (libibverbs exporting IBVERBS_1.12)"
    no_backoff = ctx.nccl_at_least("dmabuf_no_backoff")
    evidence = ctx.nccl_evidence() + [
        ctx.lib_evidence("has_reg_dmabuf_mr", ctx.lib.has_reg_dmabuf_mr),
        ctx.node_ev("gpu.kernel_module", module),
    ] + ctx.stack_evidence()
    yield finding(ctx.matrix, rule, evidence, variant=None if no_backoff else "fallback",
                  nccl=ctx.nccl.version, why=why, nic_fix=nic_fix)
