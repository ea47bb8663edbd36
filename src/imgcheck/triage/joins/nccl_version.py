"""The NCCL version the log printed vs the NCCL(s) in the image."""

from __future__ import annotations

from collections.abc import Iterator

from ...model.report import Evidence
from ..result import JoinNote
from .context import CONSISTENT, CONTRADICTS, UNKNOWN, JoinContext

SIGNATURES: tuple[str, ...] = ()
ALWAYS = True  # reads the log's "NCCL version" lines


def join(ctx: JoinContext) -> Iterator[JoinNote]:
    image, log = ctx.image, ctx.log
    if image is None or not log.nccl_versions:
        return
    image_versions = sorted({n.version for n in image.nccl if n.version})
    ev = [Evidence("log.nccl_version", ", ".join(log.nccl_versions))] + ctx.nccl_evidence()
    logv = ", ".join(log.nccl_versions)
    if not image_versions:
        yield ctx.note("nccl-version", UNKNOWN, "nccl-version.none-in-image", ev, log=logv)
    elif set(log.nccl_versions) <= set(image_versions):
        yield ctx.note("nccl-version", CONSISTENT, "nccl-version.in-image", ev, log=logv)
    else:
        yield ctx.note("nccl-version", CONTRADICTS, "nccl-version.other", ev, log=logv, image=", ".join(image_versions))
