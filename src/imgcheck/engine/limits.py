"""Locked-memory limit for jobs on the node (F8)."""

from __future__ import annotations

from collections.abc import Iterator

from .context import Ctx
from .emit import Outcome, finding, unknown

RULES = ("MEMLOCK-TOO-LOW",)
NEEDS = {"thresholds": {"memlock_reported_failing_kib"}, "nccl_features": {"relaxed_ordering_iova2"}}


def check(ctx: Ctx) -> Iterator[Outcome]:
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
