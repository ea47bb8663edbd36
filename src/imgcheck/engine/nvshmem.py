"""NVSHMEM's own peer-memory check (issue #32). NVSHMEM's IB transports do not ask the NIC whether GPU memory can be
registered: they look for sysfs files (nvshmem_peer_detection rows, read from NVSHMEM's source per release). Releases
that accept only the MLNX_OFED peer-memory API's /sys/kernel/mm/memory_peers files skip the transport on a node
that loads nvidia_peermem without that directory, where NCCL (which also reads /sys/module/nvidia_peermem) works."""

from __future__ import annotations

from collections.abc import Iterator

from ..knowledge import gpudirect, registrars
from ..model.report import Evidence
from ..versions import ranges
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown

RULE = "NVSHMEM-PEERMEM-UNDETECTED"
TABLE = "nvshmem_peer_detection"
REGISTRAR = "nvshmem"
MODULE_ACCEPTED = "module-or-memory-peers"


def _first_accepting(ctx: Ctx) -> str | None:
    rows = [r for r in ctx.matrix.rows(TABLE) if r["detection"] == MODULE_ACCEPTED]
    return rows[0]["release"] if rows else None


@rule(
    RULE,
    requires=(facts.PACKAGES, facts.NODE_RDMA),
    reads=(facts.PEERMEM, facts.GPU_MODULE, facts.GPU_DRIVER, facts.KERNEL),
)
def peermem_undetected(ctx: Ctx) -> Iterator[Outcome]:
    found = [r for r in registrars.registrars_in(ctx.matrix, ctx.image) if r.registrar == REGISTRAR]
    if not found and (reason := ctx.image.unknown_reason("packages")):
        yield unknown(
            RULE,
            f"whether the image has NVSHMEM is unknown: its packages were not read ({reason})",
            ("image.packages",),
        )
        return
    if not found:
        # a source build (DeepEP's install) is not recognised: the words say what was looked at
        yield decided(RULE, "no NVSHMEM package (nvidia-nvshmem-cu*, libnvshmem3-*) among the image's packages")
        return
    if ctx.node_has_rdma is False:
        yield decided(RULE, "the node has no RDMA device: NVSHMEM's IB transports are not used")
        return
    nvshmem = found[0]
    first = _first_accepting(ctx)
    older = ranges.below(nvshmem.package.version, first) if first else None
    if older is False:
        yield decided(RULE, f"{nvshmem.words()} also accepts the loaded nvidia_peermem module (from {first})")
        return
    pm, api = ctx.node.gpu.peermem.loaded, ctx.node.rdma.peer_memory_api
    if api is True or pm is False:
        # the memory_peers files exist, or no peer-memory module at all: GDR-REGISTRAR-FAILS-WITHOUT-GDR speaks
        why = "/sys/kernel/mm/memory_peers exists" if api else "nvidia_peermem is not loaded"
        yield decided(RULE, f"{why}: {nvshmem.words()}'s own check agrees with the node")
        return
    if older is None:
        yield unknown(RULE, f"which peer-memory files {nvshmem.words()} checks is not known for its release")
        return
    if pm is None or api is None:
        yield unknown(
            RULE,
            f"{nvshmem.words()} accepts only /sys/kernel/mm/memory_peers/nv_mem{{,_nc}}; "
            + ctx.unknown_why("gpu.peermem.loaded" if pm is None else "rdma.peer_memory_api"),
            ("node.gpu.peermem.loaded" if pm is None else "node.rdma.peer_memory_api",),
        )
        return
    dmabuf_ok, dmabuf_why = gpudirect.node_paths(ctx.matrix, ctx.node).dmabuf
    if dmabuf_ok is not False:
        yield unknown(
            RULE,
            f"{nvshmem.words()} would not find nvidia_peermem here (no /sys/kernel/mm/memory_peers); whether it "
            f"takes the DMA-BUF path instead is not read for its release ({dmabuf_why})",
        )
        return
    yield finding(
        ctx.matrix,
        RULE,
        [
            Evidence.member(
                "image.packages", nvshmem.package.name, "version", nvshmem.package.version, nvshmem.package.location
            ),
            ctx.node_ev("gpu.peermem.loaded", pm),
            ctx.node_ev("rdma.peer_memory_api", api),
            ctx.node_ev("gpu.kernel_module", ctx.node.gpu.kernel_module),
        ],
        nvshmem=nvshmem.words(),
        first=first,
        dmabuf_why=dmabuf_why,
    )


RULES, NEEDS, REQUIRES, READS, check = family(peermem_undetected)
