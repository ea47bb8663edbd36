"""`undefined symbol: nccl…` (two libnccl in one process) vs the NCCL copies the image carries."""

from __future__ import annotations

from collections.abc import Iterator

from ..result import JoinNote
from .context import CONTRADICTS, EXPLAINS, UNKNOWN, JoinContext

SIGNATURES: tuple[str, ...] = ("LD-UNDEFINED-NCCL-SYMBOL",)


def join(ctx: JoinContext) -> Iterator[JoinNote]:
    image = ctx.image
    if image is None:
        return
    copies = [n for n in image.nccl if n.path]
    ev = ctx.nccl_evidence()
    listed = ", ".join(f"{n.version or '?'} at {n.path}" for n in copies[:4])
    if len(copies) > 1:
        yield ctx.note("nccl-copies", EXPLAINS, "nccl-copies.several", ev, n=len(copies), copies=listed)
    elif len(copies) == 1:
        yield ctx.note("nccl-copies", CONTRADICTS, "nccl-copies.one", ev, copies=listed)
    else:
        yield ctx.note("nccl-copies", UNKNOWN, "nccl-copies.none", ev)
