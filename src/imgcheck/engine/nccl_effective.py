"""Settings NCCL derives at run time, decided from the facts instead of asked: the value a setting takes when the
image and launch do not set it (its default in the image's release, catalogs/nccl_params.json default_history) and
what NCCL then does with the driver and GPUs it finds. Known-issue conditions (nccl_releases) read these.

cuMem (NCCL's device buffers through cuMemCreate, and the IPC and registration paths that follow from it), per
src/misc/cudawrap.cc at each tag: ncclCuMemEnable() is NCCL_CUMEM_ENABLE when it is >= 0; at -2 (the default from
the release nccl_features cumem_default names) it is ncclIsCuMemSupported(): the CUDA driver version is at least
cumem_default.driver_cuda_min, the device supports VMM, and before cumem_without_vmm_gdr_check the device also
reports GPUDirect RDMA with VMM.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..knowledge import gpus as gpus_k
from ..model.report import Evidence
from ..versions import ranges
from .context import Ctx


@dataclass(frozen=True)
class Derived:
    """A derived setting: on (None: the facts cannot tell), how it was decided or what is missing, the evidence, and
    the fact whose answer would decide it (engine/facts.py words) when undecided."""

    on: bool | None
    why: str
    evidence: tuple[Evidence, ...] = ()
    fact: str | None = None


def param_default(ctx: Ctx, name: str) -> tuple[bool, int | None]:
    """(read, default) of an NCCL_PARAM in the image's NCCL release: read False when the release does not read it
    (before `first` or from `removed_in`); default None when the release or the value is not known."""
    nccl = ctx.nccl
    row = ctx.matrix.row("nccl_params", name=name)
    if nccl is None or row is None:
        return False, None
    version = nccl.version
    if ranges.at_least(version, row["first"]) is False:
        return False, None
    if row.get("removed_in") and ranges.at_least(version, row["removed_in"]) is True:
        return False, None
    value = row.get("default_int")
    for step in row.get("default_history") or ():
        since, _, default = step.partition(": ")
        reached = ranges.at_least(version, since)
        if reached is None:
            return True, None
        if reached:
            try:
                value = int(default, 0)
            except ValueError:
                value = None
    return True, value


def cumem(ctx: Ctx) -> Derived:
    """Whether the image's NCCL allocates its buffers with cuMem on this node and launch."""
    nccl = ctx.nccl
    if nccl is None:
        return Derived(None, "the image's NCCL is unknown", fact="image.nccl")
    read, default = param_default(ctx, "NCCL_CUMEM_ENABLE")
    ev = tuple(ctx.nccl_evidence())
    if not read:
        return Derived(False, f"NCCL {nccl.version} has no cuMem path (NCCL_CUMEM_ENABLE is not read)", ev)
    s = ctx.setting("NCCL_CUMEM_ENABLE")
    if s is not None:
        value = s.as_int()
        ev += (s.evidence,)
        if value is None:
            value = default  # NCCL's strtoll fails: it keeps the default
        elif value >= 0:
            return Derived(value != 0, f"NCCL_CUMEM_ENABLE={s.value.strip()}", ev)
    else:
        # unset, or an Env that was not read: the release's default, as for every other setting a rule reads (the
        # known-issue rows' workaround settings are read the same way); `why` says which
        value = default
    if value is None:
        return Derived(None, f"the default of NCCL_CUMEM_ENABLE in NCCL {nccl.version} is unknown", ev, "image.nccl")
    if value >= 0:
        return Derived(value != 0, f"NCCL {nccl.version}'s default NCCL_CUMEM_ENABLE={value}{_unset(ctx, s)}", ev)
    if value != -2:
        return Derived(False, f"NCCL_CUMEM_ENABLE={value} (only -2 means auto)", ev)
    return _cumem_auto(ctx, ev, _unset(ctx, s))


def _unset(ctx: Ctx, s: object) -> str:
    if s is None and ctx.image.unknown_reason("env"):
        return " (if neither the image's Env nor the launch sets NCCL_CUMEM_ENABLE: the Env was not read)"
    return ""


def _cumem_auto(ctx: Ctx, ev: tuple[Evidence, ...], unset: str) -> Derived:
    """NCCL_CUMEM_ENABLE=-2: ncclIsCuMemSupported() on this node."""
    row = ctx.matrix.need("nccl_features", feature="cumem_default")
    want = row["driver_cuda_min"]
    driver = driver_cuda_at_least(ctx, want)
    if driver is False:
        return Derived(False, f"auto (-2), and the driver's CUDA is below {want}{unset}", ev)
    if driver is None:
        return Derived(
            None,
            f"auto (-2): on when the driver's CUDA is {want} or newer, which the node facts do not show",
            ev,
            "node.gpu.driver_version",
        )
    ev += (ctx.node_ev("gpu.driver_version", ctx.node.gpu.driver_version),)
    needs_gdr = ctx.nccl_at_least("cumem_without_vmm_gdr_check")
    if needs_gdr is None:
        return Derived(None, ctx.nccl_unknown_reason("cumem_without_vmm_gdr_check"), ev, "image.nccl")
    if needs_gdr:
        return Derived(True, f"auto (-2), with a driver for CUDA {want} or newer{unset}", ev)
    # 2.19 - 2.23 also need the device's GPUDirect-RDMA-with-VMM attribute: a GPU class without GPUDirect RDMA
    # (gpu_classes) does not report it; one with it does on a driver of that CUDA
    classes = [gpus_k.class_of(g, ctx.matrix)[1].get("gpudirect_rdma") for g in ctx.node.gpu.gpus]
    if not classes:
        return Derived(None, "auto (-2): also needs GPUDirect RDMA with VMM on the GPU", ev, "node.gpu.gpus")
    if any(c == "unsupported" for c in classes):
        return Derived(False, "auto (-2), and the GPU has no GPUDirect RDMA (so no VMM GPUDirect RDMA)", ev)
    if all(c == "supported" for c in classes):
        return Derived(True, f"auto (-2), with a driver for CUDA {want} or newer and GPUDirect-RDMA GPUs{unset}", ev)
    return Derived(None, "auto (-2): also needs GPUDirect RDMA with VMM on the GPU", ev, "node.gpu.gpus")


def driver_cuda_at_least(ctx: Ctx, want: str) -> bool | None:
    """The CUDA version the driver reports (cudaDriverGetVersion) is `want` or newer: the probe's reading, else the
    newest CUDA the driver branch supports natively (nvidia_driver_cuda); a forward-compat libcuda in the image
    raises it, so below that only an image known to have none says no."""
    have = ctx.node.gpu.cuda_driver_version
    if have:
        return ranges.at_least(have, want)
    branch = ctx.driver_branch()
    row = ctx.matrix.row("nvidia_driver_cuda", driver_branch=branch) if branch else None
    native = row.get("newest_cuda_native") if row else None
    if not native:
        return None
    if ranges.at_least(native, want):
        return True
    cuda = ctx.image.cuda
    return False if cuda is not None and cuda.compat_driver is None and not ctx.image_unknown("cuda") else None
