"""Libraries other than NCCL that register GPU memory with the NIC, when neither GPUDirect RDMA path is open.

NCCL checks for a peer-memory module and DMA-BUF and stages through host memory without them (GDR-PEERMEM-MISSING).
Mooncake's transfer engine, NVSHMEM and DeepEP register CUDA buffers with the NIC and have no such fallback:
ibv_reg_mr on a cudaMalloc address without a peer-memory client returns EFAULT, ibv_reg_dmabuf_mr without DMA-BUF
export fails, and the library stops (catalog gpu_memory_registrars: how each is recognised, how it registers,
what it does without GPUDirect RDMA, from its source or vendor documentation).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..knowledge import gpudirect, registrars
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown

RULE = "GDR-REGISTRAR-FAILS-WITHOUT-GDR"


def _dmabuf(ctx: Ctx) -> tuple[bool | None, str]:
    """Whether a dma-buf MR of GPU memory can be made here: the node's side (open GPU modules, a stack that
    registers dma-buf MRs) and the image's libibverbs (ibv_reg_dmabuf_mr)."""
    node_ok, node_why = gpudirect.node_paths(ctx.matrix, ctx.node).dmabuf
    if node_ok is False:
        return False, node_why
    nic_ok, nic_why = ctx.nic_dmabuf
    if nic_ok is False:
        return False, nic_why
    if node_ok and nic_ok:
        return True, node_why
    return None, node_why if node_ok is None else nic_why


@rule(
    RULE,
    requires=(facts.PACKAGES, facts.LIBIBVERBS, facts.NODE_RDMA),
    reads=(facts.PEERMEM, facts.GPU_MODULE, facts.GPU_DRIVER, facts.KERNEL),
)
def registrar_fails_without_gdr(ctx: Ctx) -> Iterator[Outcome]:
    failing = [r for r in registrars.registrars_in(ctx.matrix, ctx.image) if r.without_gdr == registrars.FAILS]
    if not failing:
        if not ctx.image.unknown_reason("packages"):
            # NCCL's fallback is GDR-PEERMEM-MISSING's; libraries outside the table are not claimed either way
            yield decided(RULE, "no package of the image is a GPU-memory registrar that fails without GPUDirect RDMA")
        return
    if ctx.node_has_rdma is False or ctx.lib is None:
        return  # no RDMA on the node or in the image: the contract, or RDMA-NO-LIBIBVERBS, speaks
    if ctx.node_has_gpu is None:
        yield unknown(RULE, ctx.unknown_why("gpu.driver_version"))
        return
    peer_ok, peer_why = gpudirect.node_paths(ctx.matrix, ctx.node).peer_memory
    if peer_ok:
        yield decided(RULE, f"{peer_why}: {registrars.names(failing)} can register GPU memory through it")
        return
    dmabuf_ok, dmabuf_why = _dmabuf(ctx)
    fails = [r for r in failing if peer_ok is False and (dmabuf_ok is False or r.registration == "peer-memory")]
    if not fails:
        if peer_ok is None:
            yield unknown(RULE, f"{registrars.names(failing)} register GPU memory with the NIC; {peer_why}")
        elif dmabuf_ok is None:
            yield unknown(
                RULE,
                f"{registrars.names(failing)} register GPU memory with the NIC; nvidia-peermem is not loaded and "
                f"whether DMA-BUF works is unknown: {dmabuf_why}",
            )
        else:
            # DMA-BUF works, no peer memory: a build that registers through ibv_reg_mr only still fails
            yield unknown(
                RULE,
                f"nvidia-peermem is not loaded but DMA-BUF works here; whether {registrars.names(failing)} "
                "registers through DMA-BUF depends on its build or release (Mooncake: WITH_NVIDIA_PEERMEM builds "
                "call ibv_reg_mr and need nvidia-peermem), which is not read from the image",
            )
        return
    first = fails[0]
    evidence = [
        *(
            Evidence.member("image.packages", r.package.name, "version", r.package.version, r.package.location)
            for r in fails
        ),
        ctx.node_ev("gpu.peermem.loaded", ctx.node.gpu.peermem.loaded),
        ctx.node_ev("gpu.kernel_module", ctx.node.gpu.kernel_module),
        ctx.node_ev("rdma.stack", ctx.node.rdma.stack),
    ]
    yield finding(
        ctx.matrix,
        RULE,
        evidence,
        registrars=registrars.names(fails),
        symptom=first.symptom or "memory registration failed",
        peer_why=peer_why,
        dmabuf_why=dmabuf_why,
    )


RULES, NEEDS, REQUIRES, READS, check = family(registrar_fails_without_gdr)
