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

from ..job.model import RUNTIME_DOCKER, RUNTIME_ENROOT, RUNTIME_HOST, RUNTIME_KUBERNETES
from ..knowledge import gpus as gpus_k
from ..model.report import Evidence
from ..versions.ecosystems import numeric_tuple
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown
from .node_only import node_only

NO_NODE = "GDRCOPY-NO-DEVICE-NODE"
DEFECT = "GDRCOPY-GDRDRV-KNOWN-DEFECT"
NO_GDR = "GDRCOPY-GPU-NO-GDR"
ABI = "GDRCOPY-ABI-MISMATCH"
NOT_PASSED = "GDRCOPY-DEVICE-NOT-PASSED"
DEVICE = "/dev/gdrdrv"
_WORLD_RW = 0o006  # insmod.sh: chmod a+w+r /dev/gdrdrv; a job that is not root needs the others' bits


def _applies(ctx: Ctx) -> bool:
    """gdrdrv is loaded and something uses it: a node check (the node alone), or an image that ships libgdrapi (NCCL,
    UCX's gdr_copy and NVSHMEM dlopen it; without it nothing in the image opens /dev/gdrdrv). An image whose
    libgdrapi is not known makes the rule silent here, and the engine asks, or decides under "present"."""
    if not ctx.node.gpu.gdrdrv_loaded:
        return False  # not loaded: the rule does not apply; not known: the engine asks GDRDRV's question
    return node_only(ctx) or ctx.image.gdrcopy is not None


@rule(NO_NODE, requires=(facts.GDRDRV, facts.GDRCOPY), reads=(facts.GDRDRV_DEVICE,))
def no_device_node(ctx: Ctx) -> Iterator[Outcome]:
    gpu = ctx.node.gpu
    if not _applies(ctx):
        return
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


@rule(DEFECT, requires=(facts.GDRDRV, facts.GDRCOPY), reads=(facts.GPU_DRIVER, facts.DKMS))
def known_defect(ctx: Ctx) -> Iterator[Outcome]:
    gpu = ctx.node.gpu
    if not _applies(ctx):
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
        if need is None:
            continue  # a latent defect with no trigger the facts show: naming it on every node would be noise
        if branch is None or branch < need:
            continue  # driver unknown: the engine asks it (GPU_DRIVER is read); older branch: not triggered
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
        yield decided(
            DEFECT,
            f"no gdrdrv defect with a driver-branch trigger applies to gdrdrv {release or module} on this driver",
        )


@rule(NO_GDR, requires=(facts.GDRCOPY,), reads=(facts.GPU_DRIVER, facts.GDRDRV))
def gpu_without_gdr(ctx: Ctx) -> Iterator[Outcome]:
    """Whether or not gdrdrv is loaded: an image that ships libgdrapi cannot pin GPU memory on such a GPU (gdrdrv's
    nvidia_p2p_get_pages is refused); a node check speaks where gdrdrv is loaded."""
    listed = ctx.node.gpu.gpus
    if ctx.image.gdrcopy is None and not (node_only(ctx) and ctx.node.gpu.gdrdrv_loaded):
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
                    ctx.node_ev("gpu.gdrdrv_loaded", ctx.node.gpu.gdrdrv_loaded),
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


def _release_of(ctx: Ctx, column: str, version: str) -> dict[str, Any] | None:
    """The first GDRCopy release whose gdrdrv (or libgdrapi) has this major.minor."""
    return next((r for r in ctx.matrix.rows("gdrcopy_releases") if r[column] == version), None)


@rule(ABI, requires=(facts.GDRCOPY, facts.GDRDRV))
def abi_mismatch(ctx: Ctx) -> Iterator[Outcome]:
    """libgdrapi (2.0 and later) asks gdrdrv its version in gdr_open and refuses a module older than its minimum or
    one that needs a newer library; the minima of each release are gdrcopy_releases rows."""
    lib, module = ctx.image.gdrcopy, ctx.node.gpu.gdrdrv_version
    if lib is None or not ctx.node.gpu.gdrdrv_loaded:
        return
    if lib.version is None:
        yield unknown(
            ABI, "which libgdrapi version the image ships (libgdrapi.so.<major>.<minor>)", (facts.GDRCOPY.name,)
        )
        return
    if module is None:
        yield unknown(ABI, f"which gdrdrv version the node runs ({ctx.unknown_why('gpu.gdrdrv_version')})")
        return
    lib_row, drv_row = _release_of(ctx, "gdr_api_version", lib.version), _release_of(ctx, "gdrdrv_version", module)
    if lib_row is None or drv_row is None:
        missing = f"libgdrapi {lib.version}" if lib_row is None else f"gdrdrv {module}"
        yield unknown(ABI, f"{missing} is no GDRCopy release of gdrcopy_releases (a newer release?)")
        return
    evidence = [
        Evidence("image.gdrcopy.version", lib.version, lib.location),
        ctx.node_ev("gpu.gdrdrv_version", module),
    ]
    need_drv, need_lib = lib_row["min_gdrdrv_version"], drv_row["min_gdr_api_version"]
    if need_lib is not None and numeric_tuple(lib.version) < numeric_tuple(need_lib):
        yield finding(
            ctx.matrix,
            ABI,
            evidence,
            variant="old-library",
            library=lib.version,
            module=module,
            need=need_lib,
            node=ctx.node.name,
        )
    elif need_drv is not None and numeric_tuple(module) < numeric_tuple(need_drv):
        yield finding(ctx.matrix, ABI, evidence, library=lib.version, module=module, need=need_drv, node=ctx.node.name)
    else:
        yield decided(ABI, f"libgdrapi {lib.version} and gdrdrv {module} accept each other (gdrcopy_releases minima)")


@rule(NOT_PASSED, requires=(facts.GDRCOPY, facts.GDRDRV))
def device_not_passed(ctx: Ctx) -> Iterator[Outcome]:
    """A container gets host devices only as its launch spec names them; the NVIDIA container toolkit injects the GPU
    device nodes, never /dev/gdrdrv, so an image whose libraries use GDRCopy needs it passed by the spec."""
    job, gpu = ctx.job, ctx.node.gpu
    if ctx.image.gdrcopy is None or not gpu.gdrdrv_loaded:
        return  # no consumer (the rule does not apply), or the module's state is asked (GDRDRV)
    if job is None:
        yield decided(NOT_PASSED, "no launch spec: how the container gets its devices is not in question")
        return
    if gpu.gdrdrv_device is False:
        yield decided(NOT_PASSED, "the node has no /dev/gdrdrv to pass (GDRCOPY-NO-DEVICE-NODE)")
        return
    if job.runtime == RUNTIME_HOST:
        yield decided(NOT_PASSED, "the job runs on the host, where /dev/gdrdrv is")
        return
    if job.privileged:
        yield decided(NOT_PASSED, "a privileged container sees the host's /dev")
        return
    if any(d == DEVICE or d == "/dev" for d in job.devices or ()):
        yield decided(NOT_PASSED, "the launch spec passes /dev/gdrdrv")
        return
    if job.runtime == RUNTIME_ENROOT:
        # enroot's NVIDIA hook bind-mounts /dev/gdrdrv whenever the compute capability is asked (conf/hooks/98-nvidia.sh)
        yield decided(NOT_PASSED, "enroot's NVIDIA hook mounts /dev/gdrdrv into compute containers")
        return
    if job.runtime == RUNTIME_KUBERNETES:
        yield unknown(
            NOT_PASSED,
            "whether the NVIDIA device plugin passes /dev/gdrdrv with the GPUs (its gdrcopyEnabled / GDRCOPY_ENABLED "
            "setting; the GPU Operator's gdrcopy.enabled); the pod spec does not mount it",
        )
        return
    if job.devices is None or job.runtime != RUNTIME_DOCKER:
        yield unknown(
            NOT_PASSED, "whether the launch passes /dev/gdrdrv into the container (its devices are not shown)"
        )
        return
    yield finding(
        ctx.matrix,
        NOT_PASSED,
        [
            Evidence("image.gdrcopy.path", ctx.image.gdrcopy.path, ctx.image.gdrcopy.location),
            ctx.node_ev("gpu.gdrdrv_loaded", True),
            Evidence("job.devices", ", ".join(job.devices) or "none"),
        ],
        library=ctx.image.gdrcopy.path,
        runtime=job.runtime or "the container runtime",
    )


RULES, NEEDS, REQUIRES, READS, check = family(
    no_device_node, known_defect, gpu_without_gdr, abi_mismatch, device_not_passed
)
