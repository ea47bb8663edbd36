"""Join what the log says with the image's and node's static facts, one module per concern.

Each module declares `SIGNATURES` (the signature ids it handles: their presence makes it run) and
`ALWAYS = True` when it also reads the log's INFO context and runs on every join, and `join(ctx) -> Iterator[JoinNote]` over one
`JoinContext`. Note texts are templates in signatures.json `join_notes`, as rule texts live in
rules.json. A note says whether the facts are consistent with the log, explain the error, or
contradict it (a contradiction usually means the log came from another image/node, or an
environment variable did not reach the ranks).
"""

from __future__ import annotations

from types import ModuleType

from ...job.model import JobFacts
from ...matrix import Matrix
from ...model.image import ImageFacts
from ...model.node import NodeFacts
from ..result import JoinNote, TriageReport
from . import (
    checkpoint,
    compile_caches,
    cuda_driver,
    dmabuf,
    efa,
    gpu_generation,
    gpudirect,
    ib_retry,
    nccl_copies,
    nccl_version,
    rdma_userspace,
    registration,
    relaxed_ordering,
)
from .context import CONSISTENT, CONTRADICTS, EXPLAINS, UNKNOWN, JoinContext

# In the order their notes are listed.
JOINERS: tuple[ModuleType, ...] = (
    nccl_version,
    relaxed_ordering,
    registration,
    dmabuf,
    rdma_userspace,
    gpudirect,
    cuda_driver,
    ib_retry,
    compile_caches,
    checkpoint,
    efa,
    nccl_copies,
    gpu_generation,
)

HANDLED: frozenset[str] = frozenset(s for m in JOINERS for s in m.SIGNATURES)

__all__ = ["CONSISTENT", "CONTRADICTS", "EXPLAINS", "HANDLED", "JOINERS", "UNKNOWN", "JoinContext", "join_notes"]


def join_notes(
    report: TriageReport,
    image: ImageFacts | None,
    node: NodeFacts | None,
    matrix: Matrix | None = None,
    templates: dict[str, str] | None = None,
    job: JobFacts | None = None,
) -> tuple[JoinNote, ...]:
    ctx = JoinContext.build(report, image, node, matrix, templates, job)
    notes: list[JoinNote] = []
    for mod in JOINERS:
        if not getattr(mod, "ALWAYS", False) and not set(mod.SIGNATURES) & set(ctx.present):
            continue
        notes.extend(mod.join(ctx))
    return tuple(notes)
