"""`vendor err 129` (retries exhausted) vs NCCL_IB_RETRY_CNT as the ranks saw it."""

from __future__ import annotations

from collections.abc import Iterator

from ...model.report import Evidence
from ..result import JoinNote
from .context import CONSISTENT, EXPLAINS, JoinContext

SIGNATURES: tuple[str, ...] = ("IB-VENDOR-ERR-129",)


def join(ctx: JoinContext) -> Iterator[JoinNote]:
    val, where, e = ctx.env("NCCL_IB_RETRY_CNT")
    top = ctx.kb.threshold("nccl_ib_retry_cnt_max")
    if e is not None and val is not None:
        try:
            high = int(val) > top
        except ValueError:
            high = None
        if high:
            yield ctx.note("ib-retry-count", EXPLAINS, "ib-retry-count.high", (e,), value=val, where=where, top=top)
        else:
            yield ctx.note("ib-retry-count", CONSISTENT, "ib-retry-count.within", (e,), value=val, where=where, top=top)
    elif ctx.image is not None:
        yield ctx.note(
            "ib-retry-count",
            CONSISTENT,
            "ib-retry-count.unset",
            (Evidence("image.env.NCCL_IB_RETRY_CNT", None),),
            top=top,
        )
