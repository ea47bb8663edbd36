"""CUDA forward-compatibility libraries on a GPU class that does not support them.

When the image's cuda-compat libcuda is newer than the node's driver it is the one CUDA uses, and forward
compatibility works only on data-center GPUs, select NGC Server Ready RTX SKUs and Jetson boards (NVIDIA's CUDA
compatibility guide): elsewhere cuInit fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..knowledge import gpus as gpus_k
from ..model.location import Location
from ..model.report import Evidence
from ..versions import ranges
from . import facts
from .context import Ctx
from .emit import Outcome, finding, unknown

RULES = ("CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU",)
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU": (facts.CUDA, facts.COMPAT),
}
READS = {
    "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU": (facts.CUDA, facts.COMPAT, facts.GPU_DRIVER),
}


def check(ctx: Ctx) -> Iterator[Outcome]:
    rule = RULES[0]
    cuda = ctx.image.cuda
    compat = cuda.compat_driver if cuda else None
    driver = ctx.node.gpu.driver_version
    if cuda is None or not compat or not driver:  # no cuda: no compat either
        return  # no compat library, or no driver to compare it with: nothing to say (CUDA-DRIVER-TOO-OLD covers floors)
    newer = ranges.at_least(compat, driver)
    if newer is None:
        yield unknown(rule, f"cannot tell whether forward-compat libcuda {compat} is newer than driver {driver}")
        return
    if not newer or ranges.at_least(driver, compat):
        return  # the driver is at least as new: CUDA uses the driver's own libcuda, compat is never loaded
    for gpu in ctx.node.gpu.gpus:
        klass, row = gpus_k.class_of(gpu, ctx.matrix)
        support = row.get("forward_compat") if row else None
        if klass and not row:
            support = "unsupported" if klass == "consumer" else None
        if support == "supported":
            continue
        evidence = [
            Evidence("image.cuda.compat_driver", compat, Location.file(cuda.compat_path, cuda.layer)),
            ctx.node_ev("gpu.driver_version", driver),
            ctx.node_ev("gpu.gpus.name", gpu.name),
            ctx.node_ev("gpu.gpus.gpu_class", klass),
        ]
        if support == "unsupported":
            yield finding(
                ctx.matrix,
                rule,
                evidence,
                gpu=gpu.name,
                gpu_class=klass,
                compat_driver=compat,
                driver_version=driver,
                cuda=cuda.version or "unknown",
            )
        else:
            yield unknown(
                rule,
                f"forward-compat libcuda {compat} is newer than driver {driver}; whether the "
                f"{klass or 'unclassified'} GPU {gpu.name or '(unnamed)'} supports forward "
                "compatibility is not known (only select RTX SKUs do)",
            )
        return  # one answer per node
