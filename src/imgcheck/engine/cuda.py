"""CUDA toolkit in the image against the node's driver (minor-version compatibility, forward compat)."""

from __future__ import annotations

from ..model.report import Evidence
from ..versions.ecosystems import at_least, numeric_tuple
from .context import Ctx
from .emit import finding, unknown

RULES = ("CUDA-DRIVER-TOO-OLD",)


def check(ctx: Ctx):
    rule = "CUDA-DRIVER-TOO-OLD"
    cuda = ctx.image.cuda
    if cuda is None or not cuda.version:
        if ctx.image.nccl or any(p.name == "torch" for p in ctx.image.packages):
            yield unknown(rule, "the image's CUDA toolkit version was not found (no /usr/local/cuda/version.json "
                                "or CUDA_VERSION, no nvidia-cuda-runtime wheel, libcudart package or file); the framework "
                                "may link its CUDA runtime statically")
        return
    major = numeric_tuple(cuda.version)[:1]
    driver = ctx.node.gpu.driver_version
    if not driver or not numeric_tuple(driver):
        yield unknown(rule, ctx.unknown_why("gpu.driver_version"))
        return
    row = ctx.matrix.row("cuda_minor_compat", cuda_major=major[0]) if major else None
    if row is None:
        yield unknown(rule, f"the matrix has no minimum driver for CUDA {cuda.version}")
        return
    min_driver = row["minimum_driver"]
    if at_least(driver, min_driver):
        return
    branch = ctx.driver_branch()
    native = ctx.matrix.row("nvidia_driver_cuda", driver_branch=branch)
    hint = f"{native['newest_cuda_native']} or older" if native and native.get("newest_cuda_native") else \
        f"a version driver {driver} supports"
    evidence = [Evidence("image.cuda.version", cuda.version, cuda.path, cuda.layer),
                ctx.node_ev("gpu.driver_version", driver, "/proc/driver/nvidia/version")]
    params = dict(cuda=cuda.version, cuda_major=major[0], min_driver=min_driver, driver_version=driver,
                  node_cuda_hint=hint, compat_driver=cuda.compat_driver, compat_path=cuda.compat_path)
    if cuda.compat_driver and at_least(cuda.compat_driver, min_driver):
        evidence.append(Evidence("image.cuda.compat_driver", cuda.compat_driver, cuda.compat_path, cuda.layer))
        yield finding(ctx.matrix, rule, evidence, variant="forward-compat", **params)
    else:
        yield finding(ctx.matrix, rule, evidence, **params)
