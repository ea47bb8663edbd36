"""NCCL's shared-memory capability line vs the NCCL release and the GPU generation (nccl_gpu_generations rows,
the table the engine's NCCL-TOO-OLD-FOR-GPU reads)."""

from __future__ import annotations

from collections.abc import Iterator

from ...knowledge import nccl as nccl_k
from ...model.report import Evidence, node_evidence
from ..result import JoinNote
from .context import CONSISTENT, EXPLAINS, UNKNOWN, JoinContext

SIGNATURES: tuple[str, ...] = ("NCCL-MAXSHAREDMEM",)


def join(ctx: JoinContext) -> Iterator[JoinNote]:
    node = ctx.node
    names = sorted({g.name for g in node.gpu.gpus if g.name}) if node is not None else []
    names = names or list(ctx.log.gpu_names)
    ev = [Evidence("nccl.version", ctx.nccl_version)]
    if node is not None:
        ev.append(node_evidence(node, "gpu.gpus.name", ", ".join(names) or None))
    if ctx.nccl_version is None or not names:
        yield ctx.note("gpu-generation", UNKNOWN, "gpu-generation.unknown", ev, nccl=ctx.nccl_where)
        return
    old, why = nccl_k.older_than_gpu_generation(ctx.kb, ctx.nccl_version, names)
    if old:
        yield ctx.note("gpu-generation", EXPLAINS, "gpu-generation.too-old", ev, why=why)
    elif old is False:
        yield ctx.note("gpu-generation", CONSISTENT, "gpu-generation.new-enough", ev, why=why)
    else:
        yield JoinNote("gpu-generation", UNKNOWN, why, tuple(ev))
