"""GDRCopy's kernel module on the node: its device node, its release's known defects, and the GPU it pins on.

gdrdrv registers a character major but makes no device class, so /dev/gdrdrv exists only where insmod.sh or the
packaged service mknod'ed it (NVIDIA/gdrcopy insmod.sh); libgdrapi's gdr_open opens that path and fails without it.
gdrdrv pins GPU memory with nvidia_p2p_get_pages, the GPUDirect RDMA API, which the NVIDIA driver refuses on GPUs
without GPUDirect RDMA (GeForce): every gdr_pin_buffer then fails with EINVAL. The rules apply where gdrdrv is
loaded: someone meant GDRCopy to be used there, and every consumer (gdrcopy_sanity, UCX's gdr_copy transport,
NCCL's GDRCOPY, NVSHMEM) goes through the same module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..knowledge import gpus as gpus_k
from ..versions.ecosystems import numeric_tuple
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown

NO_NODE = "GDRCOPY-NO-DEVICE-NODE"
DEFECT = "GDRCOPY-GDRDRV-KNOWN-DEFECT"
NO_GDR = "GDRCOPY-GPU-NO-GDR"
_WORLD_RW = 0o006  # insmod.sh: chmod a+w+r /dev/gdrdrv; a job that is not root needs the others' bits


@rule(NO_NODE, requires=(facts.GDRDRV,), reads=(facts.GDRDRV_DEVICE,))
def no_device_node(ctx: Ctx) -> Iterator[Outcome]:
    gpu = ctx.node.gpu
    if not gpu.gdrdrv_loaded:
        return  # not loaded: the rule does not apply; not known: the engine asks GDRDRV's question
    evidence = [ctx.node_ev("gpu.gdrdrv_loaded", True), ctx.node_ev("gpu.gdrdrv_device", gpu.gdrdrv_device)]
    if gpu.gdrdrv_registered is not None:
        evidence.append(ctx.node_ev("gpu.gdrdrv_registered", gpu.gdrdrv_registered))
    if gpu.gdrdrv_device is False:
        yield finding(ctx.matrix, NO_NODE, evidence, node=ctx.node.name)
        return
    if gpu.gdrdrv_device is None:
        return  # the engine asks GDRDRV_DEVICE's question
    mode = gpu.gdrdrv_device_mode
    evidence.append(ctx.node_ev("gpu.gdrdrv_device_mode", mode))
    if mode == "not-char":
        yield finding(ctx.matrix, NO_NODE, evidence, variant="not-char", node=ctx.node.name)
    elif mode is None:
        yield unknown(
            NO_NODE, f"/dev/gdrdrv exists but its mode could not be read ({ctx.unknown_why('gpu.gdrdrv_device_mode')})"
        )
    elif int(mode, 8) & _WORLD_RW != _WORLD_RW:
        yield finding(ctx.matrix, NO_NODE, evidence, variant="mode", node=ctx.node.name, mode=mode)
    else:
        yield decided(NO_NODE, f"/dev/gdrdrv is a character device with mode {mode}")


def _branch(version: str | None) -> int | None:
    parts = numeric_tuple(version) if version else ()
    return parts[0] if parts else None


def _dkms_release(ctx: Ctx) -> str | None:
    """The full GDRCopy release of the gdrdrv DKMS build for the running kernel (/var/lib/dkms/gdrdrv/<release>)."""
    kernel = ctx.node.kernel.release
    builds = [b for b in ctx.node.dkms or () if b.name == "gdrdrv" and b.version]
    mine = [b for b in builds if b.installed and (kernel is None or b.kernel == kernel)] or builds
    versions = {b.version for b in mine if b.version}
    return versions.pop() if len(versions) == 1 else None


def _candidates(ctx: Ctx, release: str | None, module: str | None) -> list[str]:
    """The GDRCopy releases the node's gdrdrv can be: the DKMS build's, or every release whose module reports this
    major.minor (/sys/module/gdrdrv/version does not carry the patch level)."""
    if release:
        return [release]
    rows = ctx.matrix.rows("gdrcopy_releases")
    return [r["release"] for r in rows if module and r["gdrdrv_version"] == module]


def _affected(issue: dict[str, Any], release: str) -> bool:
    v = numeric_tuple(release)
    low = issue.get("affected_from")
    return v < numeric_tuple(issue["fixed_in"]) and (low is None or v >= numeric_tuple(low))


@rule(DEFECT, requires=(facts.GDRDRV,), reads=(facts.GPU_DRIVER, facts.DKMS))
def known_defect(ctx: Ctx) -> Iterator[Outcome]:
    gpu = ctx.node.gpu
    if not gpu.gdrdrv_loaded:
        return
    release, module = _dkms_release(ctx), gpu.gdrdrv_version
    candidates = _candidates(ctx, release, module)
    if not candidates:
        yield unknown(
            DEFECT,
            "which GDRCopy release the loaded gdrdrv is: /sys/module/gdrdrv/version "
            f"({module or 'not read'}) names no release, and no gdrdrv DKMS build is seen",
            (facts.DKMS.name,),
        )
        return
    branch = _branch(gpu.driver_version)
    hits, unsure = [], []
    for issue in ctx.matrix.rows("gdrcopy_known_issues"):
        if issue["stage"] != "runtime":
            continue
        need = issue.get("driver_branch_min")
        if need is not None and branch is None:
            continue  # the engine asks the driver (GPU_DRIVER is read)
        if need is not None and branch is not None and branch < need:
            continue
        hit = [c for c in candidates if _affected(issue, c)]
        if hit and len(hit) == len(candidates):
            hits.append(issue)
        elif hit:
            unsure.append(issue)
    if hits:
        issue = hits[0]
        yield finding(
            ctx.matrix,
            DEFECT,
            [
                ctx.node_ev("gpu.gdrdrv_version", module),
                ctx.node_ev("dkms", f"gdrdrv {release}" if release else None),
                ctx.node_ev("gpu.driver_version", gpu.driver_version),
            ],
            node=ctx.node.name,
            release=release or f"{module} ({', '.join(candidates)})",
            issue=issue["issue"],
            symptom=issue["symptom"],
            fixed_in=issue["fixed_in"],
            others=", ".join(i["issue"] for i in hits[1:]) or "none",
        )
    elif unsure:
        yield unknown(
            DEFECT,
            f"gdrdrv reports {module}, which is any of GDRCopy {', '.join(candidates)}; "
            f"{unsure[0]['issue']} is fixed in {unsure[0]['fixed_in']}: which release is it (the gdrdrv DKMS build "
            "under /var/lib/dkms/gdrdrv, or the gdrdrv-dkms / gdrcopy-kmod package version)?",
            (facts.DKMS.name,),
        )
    elif branch is not None:
        yield decided(DEFECT, f"no runtime defect GDRCopy's changelog names applies to gdrdrv {release or module}")


@rule(NO_GDR, requires=(facts.GDRDRV,), reads=(facts.GPU_DRIVER,))
def gpu_without_gdr(ctx: Ctx) -> Iterator[Outcome]:
    listed = ctx.node.gpu.gpus
    if not ctx.node.gpu.gdrdrv_loaded:
        return
    if not listed:
        if ctx.node.gpu.driver_version:
            yield unknown(NO_GDR, "which GPUs the node has (their names or gpu_class)", ("node.gpu.gpus",))
        return
    unsure = []
    for gpu in listed:
        without = gpus_k.without_gpudirect_rdma(gpu, ctx.matrix)
        if without:
            klass, _ = gpus_k.class_of(gpu, ctx.matrix)
            yield finding(
                ctx.matrix,
                NO_GDR,
                [
                    ctx.node_ev("gpu.gdrdrv_loaded", True),
                    ctx.node_ev("gpu.gpus.name", gpu.name),
                    ctx.node_ev("gpu.gpus.gpu_class", klass),
                ],
                gpu=gpu.name,
                gpu_class=klass,
            )
            return
        if without is None:
            unsure.append(gpu.name or f"GPU {gpu.index}")
    if unsure:
        yield unknown(
            NO_GDR, f"whether {', '.join(unsure)} support GPUDirect RDMA (state gpu_class)", ("node.gpu.gpus",)
        )
        return
    yield decided(NO_GDR, "no GPU of the node is of a class without GPUDirect RDMA")


RULES, NEEDS, REQUIRES, READS, check = family(no_device_node, known_defect, gpu_without_gdr)
