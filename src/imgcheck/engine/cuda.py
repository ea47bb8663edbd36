"""CUDA toolkit in the image against the node's driver (minor-version compatibility, forward compat)."""

from __future__ import annotations

from collections.abc import Iterator

from ..knowledge import cuda as cuda_k
from ..knowledge import gpu_frameworks
from ..knowledge import gpus as gpus_k
from ..knowledge import nccl as nccl_k
from ..model.image import Nccl
from ..model.location import Location
from ..model.report import Evidence
from ..versions import ranges
from . import facts
from .context import Ctx
from .emit import Outcome, assuming, decided, finding, unknown

RULES = ("CUDA-DRIVER-TOO-OLD",)
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "CUDA-DRIVER-TOO-OLD": (facts.CUDA,),
}
READS = {
    "CUDA-DRIVER-TOO-OLD": (facts.CUDA, facts.COMPAT, facts.GPU_DRIVER),
}
NEEDS = {"thresholds": {"cuda_forward_compat_first"}}
_COMPAT_FACT = "image.cuda.compat_driver"


def check(ctx: Ctx) -> Iterator[Outcome]:
    rule = "CUDA-DRIVER-TOO-OLD"
    cuda = ctx.image.cuda
    own = cuda.version if cuda is not None else None
    # libnccl links its CUDA runtime statically (NCCL's Makefile: cudart_static): the release it was built
    # against asks the driver for its own level, with or without another CUDA runtime in the image
    nccl = nccl_k.nccl_in_use(ctx.image)
    nccl_cuda = nccl.cuda if nccl is not None else None
    from_nccl = nccl_cuda is not None and (
        not own or (cuda_k.cuda_major(nccl_cuda) or 0) > (cuda_k.cuda_major(own) or 0)
    )
    if not own and not from_nccl:
        if ctx.image.nccl or any(gpu_frameworks.runs_gpu_code(p) for p in ctx.image.packages):
            yield unknown(
                rule,
                "the image's CUDA toolkit version was not found (no /usr/local/cuda/version.json "
                "or CUDA_VERSION, no nvidia-cuda-runtime wheel, libcudart package or file), nor the CUDA "
                "release its libnccl was built against (image.nccl.cuda: no 'NCCL version ...+cudaX.Y' line "
                "read); the framework may link its CUDA runtime statically",
            )
        return
    if from_nccl:
        assert nccl is not None and nccl_cuda is not None  # from_nccl says so
        yield from _judge(ctx, rule, nccl_cuda, Evidence("image.nccl.cuda", nccl_cuda, nccl.location), nccl)
    else:
        assert cuda is not None and own is not None  # not from_nccl and own is set
        yield from _judge(ctx, rule, own, Evidence("image.cuda.version", own, cuda.location), None)


def _judge(ctx: Ctx, rule: str, version: str, subject: Evidence, nccl: Nccl | None) -> Iterator[Outcome]:
    """The rule for the CUDA release `version` (the image's toolkit or runtime, or libnccl's own build)."""
    cuda = ctx.image.cuda
    driver = ctx.node.gpu.driver_version
    meets, why = cuda_k.driver_meets(ctx.matrix, driver, version)
    if meets is None:
        yield unknown(rule, ctx.unknown_why("gpu.driver_version") if not driver else why)
        return
    if meets:
        yield decided(rule, "the driver runs this CUDA natively, forward-compat libcuda or not")
        return
    min_driver = cuda_k.minimum_driver(ctx.matrix, version)
    assert min_driver is not None  # driver_meets said False, which it does only against a floor
    major = cuda_k.cuda_major(version)
    native = ctx.matrix.row("nvidia_driver_cuda", driver_branch=ctx.driver_branch())
    hint = (
        f"{native['newest_cuda_native']} or older"
        if native and native.get("newest_cuda_native")
        else f"a version driver {driver} supports"
    )
    evidence = [subject, ctx.node_ev("gpu.driver_version", driver)]
    if nccl is not None:
        evidence.append(Evidence("image.nccl.version", nccl.version, nccl.location))
    compat = cuda.compat_driver if cuda is not None else None
    compat_unknown = compat is None and ctx.image_unknown("cuda.compat_driver")
    params = dict(
        cuda=version,
        cuda_major=major,
        min_driver=min_driver,
        driver_version=driver,
        node_cuda_hint=hint,
        compat_driver=compat or "none",
        compat_path=(cuda.compat_path if cuda is not None else None) or "none",
        nccl_version=nccl.version if nccl is not None else "none",
        nccl_path=(nccl.path if nccl is not None else None) or "none",
        subject=(
            f"libnccl {nccl.version} ({nccl.path or 'the image'}) links the CUDA {version} runtime statically, so it"
            if nccl is not None
            else f"CUDA {version} in the image"
        ),
    )
    if compat_unknown:
        # a facts file that does not say whether /usr/local/cuda/compat exists cannot yield "every call fails",
        # unless forward compatibility could not help anyway
        impossible = _no_forward_compat(ctx, version, evidence, params)
        found = finding(ctx.matrix, rule, evidence, variant=impossible, **params) if impossible else None
        if found is not None and impossible == "gpu-no-forward-compat":
            yield found  # a cuda-compat libcuda in the image would fail too (error 804)
        elif found is not None:
            yield assuming(found, "the image carries no cuda-compat libcuda of a later CUDA release", _COMPAT_FACT)
        else:
            yield unknown(
                rule,
                f"{why}, and whether the image carries forward-compat libcuda is unknown "
                f"({ctx.image_unknown('cuda.compat_driver')})",
            )
        return
    if compat and ranges.at_least(compat, min_driver):
        assert cuda is not None  # compat came from it
        evidence.append(Evidence("image.cuda.compat_driver", compat, Location.file(cuda.compat_path, cuda.layer)))
        yield finding(ctx.matrix, rule, evidence, variant="forward-compat", **params)
    else:
        # before CUDA 11 each toolkit release has its own floor (no minor-version compatibility row)
        per_release = major is not None and ctx.matrix.row("cuda_minor_compat", cuda_major=major) is None
        variant = "per-release" if per_release else ("nccl-build" if nccl is not None else None)
        impossible = _no_forward_compat(ctx, version, evidence, params)
        yield finding(ctx.matrix, rule, evidence, variant=impossible or variant, **params)


def _no_forward_compat(
    ctx: Ctx, version: str, evidence: list[Evidence], params: dict[str, int | str | None]
) -> str | None:
    """The variant saying forward compatibility cannot rescue this CUDA on this node, or None where it can (or
    where that depends on a fact not known: the finding then keeps its "data-center GPUs only" fix)."""
    first = str(ctx.matrix.need("thresholds", key="cuda_forward_compat_first")["value"])
    params["compat_first"] = first
    if ranges.at_least(version, first) is False:
        return "no-forward-compat"  # no cuda-compat package exists for a CUDA release before the first one
    gpus = ctx.node.gpu.gpus
    if not gpus:
        return None
    classes = [(g, *gpus_k.class_of(g, ctx.matrix)) for g in gpus]
    unsupported = [
        (g, klass)
        for g, klass, row in classes
        if (gpus_k.class_forward_compat(g.gpu_class, ctx.matrix) if g.gpu_class else row.get("forward_compat"))
        == "unsupported"
    ]
    if len(unsupported) != len(gpus):
        return None
    gpu, klass = unsupported[0]
    evidence.append(ctx.node_ev("gpu.gpus.name", gpu.name))
    params.update(gpu=gpu.name or "(unnamed)", gpu_class=klass or "consumer")
    return "gpu-no-forward-compat"
