"""Whether the image's libnccl carries device code the node's GPUs can run: the SM architectures read from its fat
binaries (image.nccl sass_archs / ptx_archs) against each GPU's compute capability (gpu_compute_capability)."""

from __future__ import annotations

from collections.abc import Iterator

from ..knowledge import gpus
from ..model.location import Location
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .emit import Outcome, finding, unknown

RULES = ("NCCL-LACKS-GPU-ARCH",)
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "NCCL-LACKS-GPU-ARCH": (facts.NCCL,),
}
READS = {
    "NCCL-LACKS-GPU-ARCH": (facts.NCCL,),
}
RULE = RULES[0]


def _archs(prefix: str, archs: tuple[int, ...]) -> str:
    return ", ".join(f"{prefix}_{a}" for a in archs) or "none"


def check(ctx: Ctx) -> Iterator[Outcome]:
    nccl = ctx.nccl
    names = sorted({g.name for g in ctx.node.gpu.gpus if g.name})
    if nccl is None or not names:
        return  # no NCCL, or a node whose GPUs are not named (nothing to compare with)
    if nccl.sass_archs is None and nccl.ptx_archs is None:
        # unknown when inspect looked and could not read them; facts that never carried them (a catalog reading,
        # facts written before the architectures were read) are silent, as for any fact of a list item
        why = ctx.image_unknown("nccl.sass_archs")
        if why:
            yield unknown(RULE, f"the SM architectures of NCCL {nccl.version} are unknown: {why}")
        return
    sass, ptx = nccl.sass_archs or (), nccl.ptx_archs or ()
    where = Location.file(nccl.archs_from or nccl.path, nccl.layer)
    for name in names:
        cc = gpus.compute_capability(name, ctx.matrix)
        if cc is None:
            yield unknown(RULE, f"the compute capability of {name} is not in the matrix (gpu_compute_capability)")
            continue
        major, minor, _row = cc
        if gpus.runs_on(major, minor, sass, ptx):
            continue
        yield finding(
            ctx.matrix,
            RULE,
            ctx.nccl_evidence()
            + [
                Evidence("image.nccl.sass_archs", _archs("sm", sass), where),
                Evidence("image.nccl.ptx_archs", _archs("compute", ptx), where),
                ctx.node_ev("gpu.gpus.name", name),
            ],
            nccl=nccl.version,
            gpu=name,
            cc=f"{major}.{minor}",
            sm=f"sm_{major}{minor}",
            sm_num=f"{major}{minor}",
            sass=_archs("sm", sass),
            ptx=_archs("compute", ptx),
        )
