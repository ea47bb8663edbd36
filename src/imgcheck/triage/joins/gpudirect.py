"""`GPU Direct RDMA Disabled` vs peer memory on the node and the NCCL version's module check."""

from __future__ import annotations

from collections.abc import Iterator

from ...knowledge import nccl as nccl_k
from ...knowledge import stack as stack_k
from ...model.report import Evidence, node_evidence
from ..predicates import nccl_lacks, peermem_loaded
from ..result import JoinNote
from .context import CONTRADICTS, EXPLAINS, UNKNOWN, JoinContext

SIGNATURES: tuple[str, ...] = ("GDR-DISABLED",)


def join(ctx: JoinContext) -> Iterator[JoinNote]:
    node = ctx.node
    pm, pm_why = peermem_loaded(ctx.facts)
    old_gdr_check, old_why = nccl_lacks(ctx.facts, "gdr_module_sysfs_check")
    peers, peers_why = stack_k.memory_peers_api(ctx.kb, node) if node is not None else (None, "")
    ev = [
        node_evidence(node, "gpu.peermem.loaded", node.gpu.peermem.loaded if node else None),
        node_evidence(node, "rdma.peer_memory_api", node.rdma.peer_memory_api if node else None),
        node_evidence(node, "gpu.kernel_module", node.gpu.kernel_module if node else None),
    ]
    if ctx.nccl_version:
        ev.append(Evidence("nccl.version", ctx.nccl_version))
    if pm is False:
        yield ctx.note("gpudirect", EXPLAINS, "gpudirect.no-peermem", ev, why=pm_why)
    elif pm is True and node is not None and old_gdr_check is True and peers is False:
        floor = nccl_k.feature_floor(ctx.kb, "gdr_module_sysfs_check")
        yield ctx.note(
            "gpudirect", EXPLAINS, "gpudirect.old-check", ev, why=pm_why, old=old_why, peers=peers_why, floor=floor
        )
    elif pm is True and node is not None and (peers is None or old_gdr_check is None):
        # whether this NCCL finds the peer-memory client depends on memory_peers and the NCCL version
        yield ctx.note(
            "gpudirect",
            UNKNOWN,
            "gpudirect.undecided",
            ev,
            why=pm_why,
            peers=peers_why or "memory_peers unknown",
            old=old_why or "NCCL version unknown",
        )
    elif pm is True:
        yield ctx.note("gpudirect", CONTRADICTS, "gpudirect.should-work", ev, why=pm_why)
    else:
        yield JoinNote("gpudirect", UNKNOWN, pm_why, tuple(ev))
