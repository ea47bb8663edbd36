"""A failed memory registration (ibv_reg_mr[_iova2]) vs the call the image can make, the relaxed
ordering setting, peer memory, the driver and memlock."""

from __future__ import annotations

from collections.abc import Iterator

from ...knowledge import cuda as cuda_k
from ...model.report import Evidence, node_evidence
from ...versions import ranges
from ..predicates import memlock_low, peermem_loaded
from ..result import JoinNote
from .context import CONTRADICTS, EXPLAINS, UNKNOWN, JoinContext

EINVAL, EFAULT, ENOMEM = "IBV-REG-MR-EINVAL", "IBV-REG-MR-EFAULT", "IBV-REG-MR-ENOMEM"
SIGNATURES: tuple[str, ...] = (EINVAL, EFAULT, ENOMEM)


def join(ctx: JoinContext) -> Iterator[JoinNote]:
    for sid in SIGNATURES:
        if sid in ctx.present:
            yield from _one(ctx, sid, ctx.present[sid].first.text)


def _one(ctx: JoinContext, sid: str, line: str) -> Iterator[JoinNote]:
    image, node = ctx.image, ctx.node
    call = "ibv_reg_mr_iova2" if "ibv_reg_mr_iova2" in line else "ibv_reg_mr"
    ev: list[Evidence] = [Evidence("log.failed_call", call)]
    if image is not None:
        ev += ctx.lib_evidence()
    ro_val, where, e = ctx.env("NCCL_IB_PCI_RELAXED_ORDERING")
    if e is not None:
        ev.append(e)
    if call == "ibv_reg_mr_iova2" and ro_val is not None and ro_val.strip() == "0":
        yield ctx.note("registration-call", CONTRADICTS, "registration-call.ro-off", ev, where=where)
    elif (
        call == "ibv_reg_mr_iova2"
        and image is not None
        and image.rdma.libibverbs is not None
        and image.rdma.libibverbs.has_reg_mr_iova2 is False
    ):
        yield ctx.note("registration-call", CONTRADICTS, "registration-call.no-iova2", ev)
    if node is None:
        return
    nev = ev + [
        node_evidence(node, "gpu.peermem.loaded", node.gpu.peermem.loaded),
        node_evidence(node, "gpu.driver_version", node.gpu.driver_version),
        node_evidence(node, "gpu.kernel_module", node.gpu.kernel_module),
    ]
    if sid == EFAULT:
        pm, why = peermem_loaded(ctx.facts)
        if pm is False:
            yield ctx.note("peer-memory", EXPLAINS, "peer-memory.efault-not-loaded", nev, why=why)
        elif pm is True:
            yield ctx.note("peer-memory", UNKNOWN, "peer-memory.efault-loaded", nev, why=why)
    elif sid == EINVAL:
        drv = node.gpu.driver_version
        cuda = image.cuda.version if image is not None and image.cuda else None
        if (
            drv
            and cuda
            and image is not None
            and ranges.below(drv, str(ctx.kb.threshold("cumem_old_driver_below")))
            and ranges.at_least(cuda, str(ctx.kb.threshold("cumem_min_cuda")))
        ):
            compat = ctx.text("peer-memory.compat-part") if image.cuda and image.cuda.compat_driver else ""
            yield ctx.note(
                "peer-memory",
                EXPLAINS,
                "peer-memory.einval-old-driver",
                nev + [Evidence("image.cuda.version", cuda)],
                drv=drv,
                major=cuda_k.cuda_major(cuda),
                cuda=cuda,
                compat=compat,
            )
        else:
            loaded = node.gpu.peermem.loaded
            state = "loaded" if loaded else "not loaded" if loaded is False else "unknown"
            yield ctx.note("peer-memory", UNKNOWN, "peer-memory.einval-unknown", nev, drv=drv or "unknown", state=state)
    elif sid == ENOMEM:
        low, why = memlock_low(ctx.facts)
        ev2 = (node_evidence(node, "limits.memlock_kib", node.limits.memlock_kib),)
        if low:
            yield ctx.note("memlock", EXPLAINS, "memlock.low", ev2, why=why)
        elif low is False:
            yield ctx.note("memlock", CONTRADICTS, "memlock.enough", ev2, why=why)
        else:
            yield JoinNote("memlock", UNKNOWN, why, ev2)
