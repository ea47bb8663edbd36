"""Locked-memory limit for jobs on the node (F8)."""

from __future__ import annotations

from collections.abc import Iterator

from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding

RULE = "MEMLOCK-TOO-LOW"


@rule(
    RULE,
    requires=(facts.LIBIBVERBS, facts.NODE_RDMA),
    reads=(facts.MEMLOCK,),
    needs={"thresholds": {"memlock_reported_failing_kib"}, "nccl_features": {"relaxed_ordering_iova2"}},
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
    )


RULES, NEEDS, REQUIRES, READS, check = family(memlock_too_low)
