"""CUDA toolkit in the image against the node's driver (minor-version compatibility, forward compat)."""

from __future__ import annotations

from collections.abc import Iterator

from ..knowledge import cuda as cuda_k
from ..model.location import Location
from ..model.report import Evidence
from ..versions import ranges
from . import facts
from .context import Ctx
from .emit import Outcome, decided, finding, unknown

RULES = ("CUDA-DRIVER-TOO-OLD",)
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "CUDA-DRIVER-TOO-OLD": (facts.CUDA,),
}
READS = {
    "CUDA-DRIVER-TOO-OLD": (facts.CUDA, facts.COMPAT, facts.GPU_DRIVER),
}


def check(ctx: Ctx) -> Iterator[Outcome]:
    rule = "CUDA-DRIVER-TOO-OLD"
    cuda = ctx.image.cuda
    if cuda is None or not cuda.version:
        if ctx.image.nccl or any(p.name == "torch" for p in ctx.image.packages):
            yield unknown(
                rule,
                "the image's CUDA toolkit version was not found (no /usr/local/cuda/version.json "
                "or CUDA_VERSION, no nvidia-cuda-runtime wheel, libcudart package or file); the framework "
                "may link its CUDA runtime statically",
            )
        return
    driver = ctx.node.gpu.driver_version
    meets, why = cuda_k.driver_meets(ctx.matrix, driver, cuda.version)
    if meets is None:
        yield unknown(rule, ctx.unknown_why("gpu.driver_version") if not driver else why)
        return
    if meets:
        yield decided(rule, "the driver runs this CUDA natively, forward-compat libcuda or not")
        return
    min_driver = cuda_k.minimum_driver(ctx.matrix, cuda.version)
    assert min_driver is not None  # driver_meets said False, which it does only against a floor
    major = cuda_k.cuda_major(cuda.version)
    native = ctx.matrix.row("nvidia_driver_cuda", driver_branch=ctx.driver_branch())
    hint = (
        f"{native['newest_cuda_native']} or older"
        if native and native.get("newest_cuda_native")
        else f"a version driver {driver} supports"
    )
    evidence = [Evidence("image.cuda.version", cuda.version, cuda.location), ctx.node_ev("gpu.driver_version", driver)]
    compat = cuda.compat_driver
    if compat is None and ctx.image_unknown("cuda.compat_driver"):
        # a facts file that does not say whether /usr/local/cuda/compat exists cannot yield "every call fails"
        yield unknown(
            rule,
            f"{why}, and whether the image carries forward-compat libcuda is unknown "
            f"({ctx.image_unknown('cuda.compat_driver')})",
        )
        return
    params = dict(
        cuda=cuda.version,
        cuda_major=major,
        min_driver=min_driver,
        driver_version=driver,
        node_cuda_hint=hint,
        compat_driver=compat or "none",
        compat_path=cuda.compat_path or "none",
    )
    if compat and ranges.at_least(compat, min_driver):
        evidence.append(Evidence("image.cuda.compat_driver", compat, Location.file(cuda.compat_path, cuda.layer)))
        yield finding(ctx.matrix, rule, evidence, variant="forward-compat", **params)
    else:
        # before CUDA 11 each toolkit release has its own floor (no minor-version compatibility row)
        per_release = major is not None and ctx.matrix.row("cuda_minor_compat", cuda_major=major) is None
        yield finding(ctx.matrix, rule, evidence, variant="per-release" if per_release else None, **params)
