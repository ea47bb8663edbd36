"""`NET/IB : Using ... [RO]` (relaxed ordering on) vs the image's libibverbs and NCCL."""

from __future__ import annotations

from collections.abc import Iterator

from ...knowledge import nccl as nccl_k
from ...model.report import Evidence
from ..result import JoinNote
from .context import CONSISTENT, CONTRADICTS, JoinContext

SIGNATURES: tuple[str, ...] = ()
ALWAYS = True  # reads the log's NET/IB context


def join(ctx: JoinContext) -> Iterator[JoinNote]:
    image, log, nver = ctx.image, ctx.log, ctx.nccl_version
    if log.relaxed_ordering is None or image is None:
        return
    floor = nccl_k.feature_floor(ctx.kb, "relaxed_ordering_iova2")
    lib = image.rdma.libibverbs
    iova2 = bool(lib and lib.has_reg_mr_iova2)
    nccl_ro = nccl_k.has_feature(ctx.kb, nver, "relaxed_ordering_iova2")
    ev = [Evidence("log.relaxed_ordering", log.relaxed_ordering)] + ctx.lib_evidence()
    if nver:
        ev.append(Evidence("nccl.version", nver))
    if log.relaxed_ordering:
        if iova2 and nccl_ro is not False:
            nccl_part = ctx.text("relaxed-ordering.nccl-part", nver=nver, floor=floor) if nccl_ro else ""
            yield ctx.note("relaxed-ordering", CONSISTENT, "relaxed-ordering.on-consistent", ev, nccl_part=nccl_part)
        elif not iova2:
            yield ctx.note("relaxed-ordering", CONTRADICTS, "relaxed-ordering.on-no-iova2", ev)
        else:
            yield ctx.note("relaxed-ordering", CONTRADICTS, "relaxed-ordering.on-old-nccl", ev, nver=nver, floor=floor)
        return
    ro_env, where, e = ctx.env("NCCL_IB_PCI_RELAXED_ORDERING")
    if e:
        ev.append(e)
    if iova2 and nccl_ro:
        if ro_env is not None:
            yield ctx.note(
                "relaxed-ordering",
                CONSISTENT,
                "relaxed-ordering.off-by-env",
                ev,
                floor=floor,
                value=ro_env,
                where=where,
            )
        else:
            yield ctx.note("relaxed-ordering", CONSISTENT, "relaxed-ordering.off-unknown", ev, floor=floor)
