"""Locked-memory limit for jobs on the node (F8)."""

from __future__ import annotations

from collections.abc import Iterator

from ..model.location import Location
from ..model.report import Evidence
from .context import Ctx
from .emit import Outcome, finding, unknown

RULES = ("MEMLOCK-TOO-LOW", "RDMA-CGROUP-HCA-HANDLES")
NEEDS = {"thresholds": {"memlock_reported_failing_kib"}, "nccl_features": {"relaxed_ordering_iova2"}}


def check(ctx: Ctx) -> Iterator[Outcome]:
    yield from _memlock(ctx)
    yield from _hca_handles(ctx)


def _hca_handles(ctx: Ctx) -> Iterator[Outcome]:
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


def _memlock(ctx: Ctx) -> Iterator[Outcome]:
    rule = "MEMLOCK-TOO-LOW"
    if ctx.lib is None or ctx.node_has_rdma is False:
        return  # no registration without libibverbs or RDMA devices
    memlock = ctx.node.limits.memlock_kib
    if memlock is None:
        yield unknown(rule, ctx.unknown_why("limits.memlock_kib"))
        return
    if memlock < 0:
        return  # unlimited
    if memlock == 0:
        return  # a zero limit fails with EPERM before any accounting: REG-MEMLOCK-ZERO
    failing = ctx.matrix.threshold("memlock_reported_failing_kib")
    evidence = [ctx.node_ev("limits.memlock_kib", memlock)]
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        variant=None if memlock <= failing else "finite",
        memlock_kib=memlock,
        reg_fn=ctx.reg_fn,
    )
