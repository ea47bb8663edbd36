"""Locked-memory limit for jobs on the node (F8)."""

from __future__ import annotations

from collections.abc import Iterator

from ..model.location import Location
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown

RULE = "MEMLOCK-TOO-LOW"


@rule(
    RULE,
    requires=(facts.LIBIBVERBS, facts.NODE_RDMA),
    reads=(facts.MEMLOCK,),
    needs={
        "thresholds": {"memlock_reported_failing_kib"},
        "nccl_features": {"relaxed_ordering_iova2"},
        "kernel_rdma_features": {
            ("memlock_counts_peer_gpu_buffers", "inbox"),
            ("memlock_counts_peer_gpu_buffers", "mlnx_ofed"),
        },
    },
)
def memlock_too_low(ctx: Ctx) -> Iterator[Outcome]:
    memlock = ctx.node.limits.memlock_kib
    if memlock is not None and memlock < 0:
        yield decided(RULE, "unlimited: nothing the image does can reach the limit")
        return
    if memlock == 0:
        yield decided(RULE, "a zero limit fails with EPERM before any accounting: REG-MEMLOCK-ZERO says so")
        return
    if ctx.image.rdma.libibverbs is None or ctx.node_has_rdma is False or memlock is None:
        return  # no registration without libibverbs or RDMA devices; unknown inputs: the engine asks
    failing = ctx.matrix.threshold("memlock_reported_failing_kib")
    evidence = [ctx.node_ev("limits.memlock_kib", memlock)]
    yield finding(
        ctx.matrix,
        RULE,
        evidence,
        variant=None if memlock <= failing else "finite",
        memlock_kib=memlock,
        reg_fn=ctx.reg_fn,
        gpu_words=gpu_buffers_counted_words(ctx),
    )


@rule("RDMA-CGROUP-HCA-HANDLES", requires=(facts.LIBIBVERBS, facts.NODE_RDMA), reads=())
def hca_handles(ctx: Ctx) -> Iterator[Outcome]:
    """Each process that opens an HCA charges one hca_handle of the rdma cgroup (ib_uverbs allocates a ucontext per
    opened device); NCCL opens every HCA it uses in every rank, so a node needs ranks-per-node handles per device."""
    rule = "RDMA-CGROUP-HCA-HANDLES"
    if ctx.lib is None or ctx.node_has_rdma is False:
        return
    limits = ctx.node.limits.rdma
    ranks = ctx.job.ranks_per_node if ctx.job is not None else None
    if limits is None:
        if ranks:
            yield unknown(rule, f"{ranks} ranks per node open each HCA; " + ctx.unknown_why("limits.rdma"))
        return
    devices = {d.name for d in ctx.node.rdma.devices if d.name}
    short = []
    for device, values in sorted(limits.items()):
        handles = values.get("hca_handle")
        if handles is None or (devices and device not in devices):
            continue
        if handles == 0 or (ranks is not None and ranks > handles):
            short.append((device, handles))
    if not short:
        if ranks is None and any(v.get("hca_handle") is not None for v in limits.values()):
            yield unknown(rule, "the RDMA cgroup limits hca_handle, and the ranks per node are unknown (no --job)")
        return
    words = ", ".join(f"{d} hca_handle={h}" for d, h in short)
    evidence = [ctx.node_ev("limits.rdma", words)]
    if ctx.job is not None and ranks is not None:
        evidence.append(Evidence("job.ranks_per_node", ranks, Location.file(ctx.job.path)))
    yield finding(ctx.matrix, rule, evidence, limits=words, ranks=ranks if ranks is not None else "any")


RULES, NEEDS, REQUIRES, READS, check = family(memlock_too_low, hca_handles)


def gpu_buffers_counted_words(ctx: Ctx) -> str:
    """Whether NCCL's GPU buffers count against RLIMIT_MEMLOCK here (docs/registration-errors.md RE-ENOMEM-MEMLOCK).

    DMA-BUF registrations are never counted; peer-memory ones only on MLNX/DOCA releases where the peer-memory
    fallback comes before the memlock failure's exit (5.1-2.5.8.0 on); before that a GPU buffer that fails the
    count falls through to nvidia-peermem and registers anyway.
    """
    from .registration import PATH_DMABUF, PATH_HOST, PATH_PEER, gpu_buffer_path

    kind, why = gpu_buffer_path(ctx)
    if kind == PATH_HOST:
        return f"Every data buffer is host memory here ({why}), so all of them count."
    if kind == PATH_DMABUF:
        return f"GPU buffers are registered through DMA-BUF here ({why}) and are not counted: only host buffers are."
    if kind == PATH_PEER:
        counted, stack_why = ctx.node_has_feature("memlock_counts_peer_gpu_buffers")
        if counted:
            return f"GPU buffers registered through nvidia-peermem count too ({stack_why})."
        if counted is False:
            return (
                f"GPU buffers registered through nvidia-peermem do not fail on it here ({stack_why}: the "
                "peer-memory fallback runs after the memlock failure), so only host buffers fail."
            )
        return f"Whether GPU buffers registered through nvidia-peermem count is unknown: {stack_why}."
    return f"Whether NCCL's GPU buffers count too is unknown: {why}."
