"""LD_PRELOAD in the process environment: a GPU-sharing shim that intercepts the CUDA driver API under NCCL.

GPU-sharing layers (HAMi's libvgpu.so, catalog cuda_intercept_shims) preload a library that wraps libcuda's entry
points, cuGetProcAddress included, so that calls fetched through cudaGetDriverEntryPoint (NCCL's way of calling the
driver) run through it as well. What that means for NCCL is read from the shim's hook table: the cuMem (VMM) calls
NCCL's buffers use from the release in nccl_features cumem_default, and its host buffers from cumem_host_shm.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from . import facts
from .context import Ctx
from .emit import Outcome, decided, finding, unknown

RULE = "ENV-CUDA-SHIM-PRELOADED"
RULES = (RULE,)
NEEDS = {"nccl_features": {"cumem_default", "cumem_host_shm"}}
REQUIRES = {RULE: (facts.NCCL,)}
READS = {RULE: (facts.NCCL, facts.setting("LD_PRELOAD"))}


def _preloaded(value: str) -> list[str]:
    """The paths LD_PRELOAD names: separated by spaces or colons (ld.so(8))."""
    return [p for p in re.split(r"[\s:]+", value) if p]


def check(ctx: Ctx) -> Iterator[Outcome]:
    if ctx.nccl_present is not True:
        return  # no NCCL; unknown: the engine asks
    setting = ctx.setting("LD_PRELOAD")
    if setting is None:
        return  # not set, or not known (the engine asks the setting)
    shims = {str(r["file"]): r for r in ctx.matrix.rows("cuda_intercept_shims")}
    paths = _preloaded(setting.value)
    hits = [(p, shims[os.path.basename(p)]) for p in paths if os.path.basename(p) in shims]
    if not hits:
        if any("$" in p for p in paths):
            yield unknown(RULE, f"{setting.label}: a path the shell expands at run time may name a CUDA shim")
            return
        yield decided(RULE, f"{setting.label}: no CUDA-intercepting shim of catalog cuda_intercept_shims")
        return
    cumem = ctx.matrix.need("nccl_features", feature="cumem_default")["nccl_min"]
    host = ctx.matrix.need("nccl_features", feature="cumem_host_shm")["nccl_min"]
    nccl = ctx.nccl.version if ctx.nccl is not None and ctx.nccl.version else "(version unknown)"
    for path, row in hits:
        yield finding(
            ctx.matrix,
            RULE,
            [setting.evidence, *ctx.nccl_evidence()],
            setting=setting.label,
            path=path,
            file=row["file"],
            project=row["project"],
            hooks=row["hooks"],
            nccl=nccl,
            cumem_from=cumem,
            cumem_host_from=host,
        )
