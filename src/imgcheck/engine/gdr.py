"""GPUDirect RDMA through peer memory (F2, F3, F5) and the cuMem-on-old-driver hypothesis."""

from __future__ import annotations

from collections.abc import Iterator

from ..knowledge import gpudirect
from ..model.location import Location
from ..model.node import STACK_INBOX
from ..model.report import Evidence
from ..versions import ranges
from ..versions.ecosystems import numeric_tuple
from . import facts
from .context import Ctx
from .emit import Outcome, finding, unknown
from .gates import over_rdma

RULES = ("GDR-PEERMEM-MISSING", "GDR-NCCL-LEGACY-MEMORY-PEERS", "CUMEM-OLD-DRIVER")
NEEDS = {
    "thresholds": {"cumem_old_driver_below", "memory_peers_sysfs_last_seen_ofed_series"},
    "nccl_features": {
        "cumem_default",
        "cumem_without_vmm_gdr_check",
        "gdr_module_sysfs_check",
        "dmabuf",
        "relaxed_ordering_iova2",
    },
    # the kernel_rdma_features and rdma_core_functions rows it reads through knowledge.gpudirect are that
    # module's NEEDS (knowledge/__init__.py), declared once there
}
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "GDR-PEERMEM-MISSING": (facts.LIBIBVERBS, facts.NODE_RDMA),
    "GDR-NCCL-LEGACY-MEMORY-PEERS": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA),
    "CUMEM-OLD-DRIVER": (facts.NCCL,),
}
READS = {
    "GDR-PEERMEM-MISSING": (facts.LIBIBVERBS, facts.NODE_RDMA, facts.NCCL, facts.CUDA, facts.GPU_DRIVER, facts.PEERMEM),
    "GDR-NCCL-LEGACY-MEMORY-PEERS": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA, facts.CUDA, facts.PEERMEM),
    "CUMEM-OLD-DRIVER": (facts.NCCL, facts.CUDA, facts.GPU_DRIVER),
}


def host_staging_chosen(ctx: Ctx) -> bool:
    """NCCL_NET_GDR_LEVEL=LOC (or 0) forbids GPUDirect RDMA: every data buffer is host memory on purpose."""
    gdr = ctx.setting("NCCL_NET_GDR_LEVEL")
    return gdr is not None and gdr.value.strip().upper() in ("LOC", "0")


def _gdr_checks_words(ctx: Ctx) -> str:
    return gpudirect.nccl_gdr_checks_words(ctx.matrix, ctx.nccl.version if ctx.nccl else None)


def _peermem_evidence(ctx: Ctx) -> list[Evidence]:
    from .node_only import gdr_workload  # the workload path evaluated (these rules: NCCL's IB transport)

    pm = ctx.node.gpu.peermem
    return [
        ctx.node_ev("gpu.peermem.loaded", pm.loaded),
        ctx.node_ev("gpu.peermem.legacy_nv_peer_mem", pm.legacy_nv_peer_mem),
        _memory_peers_evidence(ctx),
        ctx.node_ev("rdma.stack", ctx.node.rdma.stack),
        ctx.node_ev("gpu.kernel_module", ctx.node.gpu.kernel_module),
        Evidence("workload.path", gdr_workload(ctx)),
    ]


def _memory_peers_evidence(ctx: Ctx) -> Evidence:
    seen = ctx.node.rdma.peer_memory_api
    if seen is not None:
        return ctx.node_ev("rdma.peer_memory_api", seen)
    value, words = ctx.memory_peers_api  # not probed: what the matrix says about this stack and release
    return ctx.node_ev("rdma.peer_memory_api", words if value is not None else None)


def check(ctx: Ctx) -> Iterator[Outcome]:
    yield from _peermem(ctx)
    yield from _legacy_memory_peers(ctx)
    yield from _cumem(ctx)


@over_rdma("GDR-PEERMEM-MISSING", need_version=False)
def _peermem(ctx: Ctx, rule: str) -> Iterator[Outcome]:
    # NCCL present with its version unknown: every release needs a peer-memory module for GPUDirect RDMA when
    # DMA-BUF is out, and the node side can rule DMA-BUF out for all of them (gpudirect.dmabuf_usable asks the
    # version only where it matters)
    if host_staging_chosen(ctx):
        return  # NCCL_NET_GDR_LEVEL=LOC: host staging is chosen on purpose, no GPUDirect path is wanted
    dmabuf, dmabuf_why = ctx.dmabuf_usable
    if dmabuf:
        return  # NCCL prefers DMA-BUF; peer memory is not needed
    pm = ctx.node.gpu.peermem
    driver = ctx.node.gpu.driver_version
    evidence = ctx.nccl_evidence() + _peermem_evidence(ctx) + [ctx.node_ev("gpu.driver_version", driver)]
    if pm.loaded and pm.version and driver and pm.version != driver:
        yield finding(
            ctx.matrix,
            rule,
            evidence + [ctx.node_ev("gpu.peermem.version", pm.version)],
            variant="version-mismatch",
            peermem_version=pm.version,
            driver_version=driver,
            reg_fn=ctx.reg_fn,
        )
        return
    if pm.loaded or pm.legacy_nv_peer_mem:
        return  # a module is there; whether this NCCL sees it is GDR-NCCL-LEGACY-MEMORY-PEERS
    if pm.loaded is None:
        yield unknown(rule, ctx.unknown_why("gpu.peermem.loaded"))
        return
    if dmabuf is None:
        yield unknown(rule, f"nvidia-peermem is not loaded, and whether DMA-BUF works is unknown: {dmabuf_why}")
        return
    variant = None
    no_api = ctx.node_has_feature("peer_memory_api")[0] is False  # decided by the kernel's symbols where seen
    if ctx.node.rdma.stack == STACK_INBOX and no_api and ctx.node.gpu.kernel_module == "proprietary":
        variant = "inbox-proprietary"
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        variant=variant,
        hca=ctx.hca,
        nccl_checks=_gdr_checks_words(ctx),
        dmabuf_why_not=f"DMA-BUF is out because {dmabuf_why}",
    )


@over_rdma("GDR-NCCL-LEGACY-MEMORY-PEERS")
def _legacy_memory_peers(ctx: Ctx, rule: str) -> Iterator[Outcome]:
    nccl = ctx.nccl
    assert nccl is not None  # over_rdma runs the rule only with NCCL
    pm = ctx.node.gpu.peermem
    if not pm.loaded or pm.legacy_nv_peer_mem or ctx.nccl_at_least("gdr_module_sysfs_check"):
        return
    dmabuf, dmabuf_why = ctx.dmabuf_usable
    if dmabuf:
        return
    visible, why = ctx.peermem_visible
    if visible is None:
        yield unknown(rule, why)
        return
    if visible:
        return
    if dmabuf is None:
        yield unknown(
            rule,
            f"NCCL {nccl.version} will not see nvidia-peermem here; whether DMA-BUF "
            f"covers for it is unknown: {dmabuf_why}",
        )
        return
    yield finding(
        ctx.matrix,
        rule,
        ctx.nccl_evidence() + _peermem_evidence(ctx),
        nccl=nccl.version,
        hca=ctx.hca,
        node_stack=f"{ctx.node.rdma.stack or 'unknown stack'} {ctx.node.rdma.ofed_version or ''}".strip(),
    )


@over_rdma("CUMEM-OLD-DRIVER")
def _cumem(ctx: Ctx, rule: str) -> Iterator[Outcome]:
    nccl = ctx.nccl
    assert nccl is not None  # over_rdma runs the rule only with NCCL
    newer = ctx.nccl_at_least("cumem_default")
    if newer is None:
        yield unknown(rule, ctx.nccl_unknown_reason("cumem_default"))
        return
    if not newer:
        return
    unflagged = ctx.nccl_at_least("cumem_without_vmm_gdr_check")
    if unflagged is None:
        yield unknown(rule, ctx.nccl_unknown_reason("cumem_without_vmm_gdr_check"))
        return
    if not unflagged:
        # NCCL 2.19 - 2.23 uses cuMem only when the GPU reports VMM GPUDirect RDMA support, and then sets
        # gpuDirectRDMACapable: the buffers nvidia-peermem sees are the ones it is made for (row RE-EINVAL-CUMEM-R470)
        return
    cumem = ctx.setting("NCCL_CUMEM_ENABLE")
    if cumem is not None and cumem.as_int() == 0:
        return
    driver = ctx.node.gpu.driver_version
    if not driver or not numeric_tuple(driver):
        yield unknown(rule, ctx.unknown_why("gpu.driver_version"))
        return
    floor = str(ctx.matrix.threshold("cumem_old_driver_below"))
    old = ranges.below(driver, floor)
    if old is None:
        yield unknown(rule, f"cannot tell whether driver {driver} is below {floor}")
        return
    if not old:
        return
    cuda = ctx.image.cuda
    compat = cuda.compat_driver if cuda else None
    if compat is None and (reason := ctx.image_unknown("cuda.compat_driver")):
        yield unknown(rule, "whether the image carries forward-compat libcuda is unknown (" + reason + ")")
        return
    if cuda is None or not compat or not ranges.at_least(compat, floor):  # no cuda: no compat either
        return  # without forward-compat the CUDA runtime never reaches NCCL (CUDA-DRIVER-TOO-OLD)
    if host_staging_chosen(ctx):
        return  # NCCL_NET_GDR_LEVEL=LOC: no GPU buffer is registered
    dmabuf, _ = ctx.dmabuf_usable
    if dmabuf:
        return
    visible, why = ctx.peermem_visible
    if visible is None:
        yield unknown(rule, why)
        return
    if not visible:
        return  # no peer-memory registration of GPU buffers at all (host staging)
    yield finding(
        ctx.matrix,
        rule,
        ctx.nccl_evidence()
        + [
            ctx.node_ev("gpu.driver_version", driver),
            Evidence("image.cuda.compat_driver", compat, Location.file(cuda.compat_path, cuda.layer)),
        ]
        + ([cumem.evidence] if cumem else [])
        + _peermem_evidence(ctx),
        nccl=nccl.version,
        driver_version=driver,
        driver_branch=ctx.driver_branch(),
        compat_driver=compat,
        reg_fn=ctx.reg_fn,
    )
