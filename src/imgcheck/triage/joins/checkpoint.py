"""A segfault in crc32 while checkpointing vs the platform of the public reports (GB200, one driver branch)."""

from __future__ import annotations

from collections.abc import Iterator

from ...knowledge import cuda as cuda_k
from ...model.report import node_evidence
from ..result import JoinNote
from .context import CONSISTENT, UNKNOWN, JoinContext

SIGNATURES: tuple[str, ...] = ("CKPT-CRC32-SEGFAULT",)


def join(ctx: JoinContext) -> Iterator[JoinNote]:
    node = ctx.node
    if node is None:
        return
    drv = node.gpu.driver_version
    ev = (node_evidence(node, "arch", node.arch), node_evidence(node, "gpu.driver_version", drv))
    branch = str(ctx.kb.threshold("ckpt_crc32_segfault_driver_branch"))
    match = node.arch in ("arm64", "aarch64") and cuda_k.branch(drv) == branch
    params = {"node": node.name, "arch": node.arch or "arch unknown", "driver": drv or "unknown", "branch": branch}
    if match:
        yield ctx.note("checkpoint-segfault", CONSISTENT, "checkpoint-segfault.same-platform", ev, **params)
    else:
        yield ctx.note("checkpoint-segfault", UNKNOWN, "checkpoint-segfault.other-platform", ev, **params)
