"""A WSL2 / Hyper-V GPU-PV guest: the GPU is reached through /dev/dxg (dxgkrnl) with the Windows host driver's user
space, which the guest must hold under /usr/lib/wsl. No Linux NVIDIA driver runs there, and the container runtime
takes libcuda / libnvidia-ml / nvidia-smi from the adapter's DriverStore folder instead (libnvidia-container
src/dxcore.c; catalog container_runtime_injects, mode wsl). A guest without those files (a Hyper-V VM whose files
were not copied, or copied from another host driver release) fails at NVML / CUDA initialisation.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding

RULE = "NODE-GPU-PV-DRIVER-FILES"
DRIVERS_DIR = "/usr/lib/wsl/drivers/"


def _missing(ctx: Ctx, files: tuple[str, ...]) -> list[str]:
    """The DriverStore files the runtime looks for (dxcore.c) that no /usr/lib/wsl/drivers/<folder> holds, and
    libdxcore.so when /usr/lib/wsl/lib lacks it."""
    names_in_store = {posixpath.basename(f) for f in files if f.startswith(DRIVERS_DIR)}
    names_in_lib = {posixpath.basename(f) for f in files if not f.startswith(DRIVERS_DIR)}
    wanted = [r for r in ctx.matrix.rows("container_runtime_injects") if r["mode"] == "wsl"]
    missing = []
    for row in wanted:
        name = str(row["name"])
        where = names_in_lib if row["array"] == "dxcore_libs" else names_in_store
        if name not in where:
            missing.append(name)
    return missing


@rule(
    RULE,
    requires=(facts.DXG,),
    reads=(facts.WSL_FILES,),
    needs={"container_runtime_injects": {"wsl:libdxcore.so", "wsl:libnvidia-ml.so.1", "wsl:libcuda.so.1.1"}},
)
def gpu_pv_driver_files(ctx: Ctx) -> Iterator[Outcome]:
    gpu = ctx.node.gpu
    if not gpu.dxg_device:
        return  # no GPU-PV channel: not a WSL2 / GPU-P guest (or not known: the contract asks)
    files = gpu.wsl_driver_files
    if files is None:
        return  # not read: the contract asks
    missing = _missing(ctx, files)
    if not missing:
        yield decided(RULE, "the guest holds the DriverStore files the runtime looks for")
        return
    core = [n for n in missing if n.startswith(("libnvidia-ml.so", "libcuda.so", "libdxcore"))]
    yield finding(
        ctx.matrix,
        RULE,
        [ctx.node_ev("gpu.dxg_device", True), ctx.node_ev("gpu.wsl_driver_files", len(files))],
        variant=None if core else "partial",
        missing=", ".join(missing),
        count=len(files),
    )


RULES, NEEDS, REQUIRES, READS, check = family(gpu_pv_driver_files)
