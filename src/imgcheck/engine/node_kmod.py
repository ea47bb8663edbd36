"""The NVIDIA kernel-module flavour (open / proprietary) and driver branch against each GPU's architecture.

The open modules run the driver on the GPU System Processor, which GPUs before Turing lack: the open nvidia.ko
refuses them at probe. Blackwell and Grace Hopper are driven only by the open modules: the proprietary one refuses
them. A driver branch after an architecture's last (470 for Kepler, 580 for Maxwell/Pascal/Volta) refuses it too.
Either way no GPU is initialised and every CUDA call in every container fails (nvidia-smi: "No devices were found").
The architecture comes from the GPU's PCI device id (nvidia_gpu_chips, generated from pci.ids and the open module
source), the support from nvidia_kmod_support; both are node facts, so the rule runs in `imgcheck node check` and,
for an image that uses the GPU, in `imgcheck check`.

NODE-KMOD-NOT-FOR-RUNNING-KERNEL: the node's DKMS builds (/var/lib/dkms/<module>/<version>/<kernel>/<arch>) of the GPU
and RDMA stack against the running kernel: built for other kernels only, with no module for this one loaded or on disk
(modules.dep), the module cannot load after a kernel upgrade; an NVIDIA build for this kernel newer than the loaded
module means the node was not rebooted after a driver upgrade.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..knowledge import gpus as gpus_k
from ..model.node import NO_DRIVER_REASON, PROBED_MODULES, RDMA_MODULES, DkmsModule, Gpu
from ..model.report import Finding
from ..versions import ranges
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown
from .node_only import node_only

RULE = "NODE-KMOD-FLAVOUR-UNSUPPORTED-GPU"
_FLAVOUR_WORDS = {
    "open": "open (NVIDIA UNIX Open Kernel Module)",
    "proprietary": "proprietary (NVIDIA UNIX Kernel Module)",
}


def _gpu_label(gpu: Gpu) -> str:
    return gpu.name or gpu.pci_bus_id or f"GPU {gpu.index if gpu.index is not None else '?'}"


def _evidence(ctx: Ctx, gpu: Gpu, module: str | None) -> list[Any]:
    ev = [ctx.node_ev("gpu.gpus.name", gpu.name), ctx.node_ev("gpu.gpus.pci_device_id", gpu.pci_device_id)]
    if module is not None:
        ev.append(ctx.node_ev("gpu.kernel_module", module))
    if ctx.node.gpu.driver_version:
        ev.append(ctx.node_ev("gpu.driver_version", ctx.node.gpu.driver_version))
    return ev


def _branch_dropped(ctx: Ctx, row: dict[str, Any]) -> bool | None:
    last = row.get("driver_last_branch")
    branch = ctx.driver_branch()
    if not last:
        return False
    if branch is None:
        return None
    after = ranges.at_least(branch, last)
    return None if after is None else bool(after and not ranges.at_least(last, branch))


def _judge_gpu(ctx: Ctx, gpu: Gpu, module: str | None) -> Iterator[Outcome]:
    if gpus_k.class_of(gpu, ctx.matrix)[0] == "embedded":
        return  # a Tegra/Jetson integrated GPU is no PCI device of nvidia.ko's discrete probe
    row, how = gpus_k.kmod_support(gpu, ctx.matrix)
    label = _gpu_label(gpu)
    if row is None:
        yield unknown(
            RULE,
            f"the architecture of {label} is not known ({how}); the open modules drive only Turing and later, "
            "the proprietary one neither Blackwell nor Grace Hopper",
            facts=("node.gpu.gpus.pci_device_id",),
        )
        return
    params = dict(
        gpu=label,
        device_id=gpus_k.device_id(gpu) or "unknown",
        architecture=row["architecture"],
        how=how,
        driver_version=ctx.node.gpu.driver_version or "unknown",
        last_branch=row.get("driver_last_branch") or "none",
    )
    dropped = _branch_dropped(ctx, row)
    if dropped:
        yield finding(ctx.matrix, RULE, _evidence(ctx, gpu, module), variant="branch", flavour=module, **params)
        return
    if module is None:
        if row["open"] != row["proprietary"]:
            needed = "open" if row["open"] == "supported" else "proprietary"
            yield unknown(
                RULE,
                f"{label} ({how}) is driven only by the {needed} kernel modules; whether the node's are open or "
                f"proprietary is unknown ({ctx.unknown_why('gpu.kernel_module')})",
                facts=("node.gpu.kernel_module",),
            )
        return
    if row[module] == "unsupported":
        yield finding(
            ctx.matrix, RULE, _evidence(ctx, gpu, module), variant=module, flavour=_FLAVOUR_WORDS[module], **params
        )
        return
    only_dc = row.get("open_datacenter_only_last_branch")
    branch = ctx.driver_branch()
    if module == "open" and only_dc and branch and ranges.at_least(only_dc, branch):
        klass, _ = gpus_k.class_of(gpu, ctx.matrix)
        if klass != "datacenter":
            yield unknown(
                RULE,
                f"the open module of driver branch {branch} refuses GPUs that are not data-center branded unless "
                f"NVreg_OpenRmEnableUnsupportedGpus=1 ('Open nvidia.ko is only ready for use on Data Center GPUs', "
                f"through branch {only_dc}); {label} is {klass or 'of unknown class'} and the module parameter "
                "(/proc/driver/nvidia/params) is not in the node facts",
                facts=("node.gpu.gpus.gpu_class",),
            )


@rule(RULE, requires=(facts.CUDA,), reads=(facts.CUDA, facts.GPU_DRIVER, facts.GPU_MODULE))
def flavour_unsupported_gpu(ctx: Ctx) -> Iterator[Outcome]:
    if not (node_only(ctx) or ctx.gpu_image):
        return  # a CPU-only container never opens the driver
    gpu = ctx.node.gpu
    if not gpu.gpus:
        if gpu.driver_version or gpu.kernel_module:
            yield unknown(
                RULE,
                "the node's GPUs are not in its facts ("
                + (ctx.node.unknown.get("gpu.gpus") or "/proc/driver/nvidia/gpus lists none")
                + "), so their architecture cannot be held against the kernel-module flavour",
                facts=("node.gpu.gpus",),
            )
        return
    outcomes = [o for g in gpu.gpus for o in _judge_gpu(ctx, g, gpu.kernel_module)]
    findings = [o for o in outcomes if isinstance(o, Finding)]
    if findings:
        yield findings[0]  # one answer per node: the first GPU the module refuses
        return
    if outcomes:
        yield outcomes[0]
        return
    yield decided(RULE, f"the {gpu.kernel_module} kernel modules drive every GPU of the node")


# ---------- DKMS modules against the running kernel ----------
KERNEL_RULE = "NODE-KMOD-NOT-FOR-RUNNING-KERNEL"
# modules the kernel tree has too: a file of that name under /lib/modules/<release>/kernel is the in-tree one, not the
# DKMS build (MLNX_OFED's mlx5_core, ib_core, ...); any other name counts wherever depmod found it (Ubuntu's
# precompiled linux-modules-nvidia put nvidia.ko under kernel/nvidia-<branch>/)
_IN_TREE_NAMES = frozenset(RDMA_MODULES) | {"mlx_compat", "rdma_ucm", "rdma_cm", "ib_umad", "ib_ipoib", "mlxfw"}
_GPU_DRIVER_MODULES = ("nvidia",)


def _loaded_version(ctx: Ctx, module: str) -> tuple[bool | None, str | None]:
    """(whether the module is loaded, its version) from the node facts."""
    if module == "nvidia":
        if ctx.node.gpu.driver_version:
            return True, ctx.node.gpu.driver_version
        why = ctx.node.unknown.get("gpu.driver_version", "")
        return (False if why.startswith(NO_DRIVER_REASON) else None), None
    loaded = ctx.node.rdma.modules.get(module)
    if loaded is not None:
        return (True if module not in _IN_TREE_NAMES or loaded.out_of_tree else None), loaded.version
    return (False if "rdma.modules" not in ctx.node.unknown and module in PROBED_MODULES else None), None


def _file_for_running(ctx: Ctx, module: str) -> bool | None:
    files = ctx.node.kernel.module_files
    if files is None:
        return None
    path = files.get(module)
    if path is None:
        return False
    return not (module in _IN_TREE_NAMES and "/kernel/" in path)


# modules of the GPU / RDMA data path beyond the probed ones (GPUDirect Storage, Open MPI's intra-node copies)
_DATA_PATH_MODULES = frozenset({"nvidia_fs", "knem", "xpmem"})


def _relevant(build: DkmsModule) -> bool:
    """A DKMS build of the GPU / RDMA stack (nvidia*, peer memory, the OFED, EFA, ...); another module (zfs, a
    webcam driver) built for an old kernel only is no concern of a GPU job."""
    names = set(build.modules or ()) | {(build.name or "").replace("-", "_")}
    return any(
        n.startswith("nvidia")
        or n in PROBED_MODULES
        or n in _IN_TREE_NAMES
        or n in _DATA_PATH_MODULES
        or n.startswith(("mlnx", "mlx"))
        for n in names
    )


def _builds(ctx: Ctx) -> dict[str, list[DkmsModule]]:
    groups: dict[str, list[DkmsModule]] = {}
    for build in ctx.node.dkms or ():
        if build.name and _relevant(build):
            groups.setdefault(build.name, []).append(build)
    return groups


def _kind(modules: tuple[str, ...]) -> str:
    if any(m in _GPU_DRIVER_MODULES for m in modules):
        return "gpu_driver"
    if any(m in _IN_TREE_NAMES for m in modules):
        return "rdma_stack"
    return "module"


def _judge_name(ctx: Ctx, name: str, builds: list[DkmsModule], release: str) -> Iterator[Outcome]:
    here = [b for b in builds if b.kernel == release]
    modules = tuple(sorted({m for b in builds for m in (b.modules or ())})) or (name.replace("-", "_"),)
    main = next((m for m in modules if m in _GPU_DRIVER_MODULES), modules[0])
    loaded, loaded_version = _loaded_version(ctx, main)
    evidence = [ctx.node_ev("kernel.release", release)]
    evidence += [ctx.node_ev(f"dkms.{b.name}", f"{b.version} for {b.kernel}") for b in builds]
    if not here:
        if loaded:
            return  # a module for this kernel came from elsewhere and runs
        on_disk = _file_for_running(ctx, main)
        if on_disk:
            return  # a module file for this kernel exists (a precompiled package); loading it is another rule's
        kernels = ", ".join(sorted({b.kernel for b in builds if b.kernel}))
        evidence.append(ctx.node_ev(f"kernel.module_files.{main}", "absent" if on_disk is False else None))
        yield finding(
            ctx.matrix,
            KERNEL_RULE,
            evidence,
            variant=None if _kind(modules) == "module" else _kind(modules),
            name=name,
            version=", ".join(sorted({b.version for b in builds if b.version})),
            module=main,
            kernels=kernels,
            release=release,
            loaded_words=_loaded_words(loaded),
            file_words=_file_words(on_disk, main, release),
        )
        return
    built = sorted({b.version for b in here if b.version})
    if main in _GPU_DRIVER_MODULES and loaded and loaded_version and built and loaded_version not in built:
        evidence.append(ctx.node_ev(_loaded_fact(main), loaded_version))
        yield finding(
            ctx.matrix,
            KERNEL_RULE,
            evidence,
            variant="stale_loaded",
            name=name,
            version=", ".join(built),
            module=main,
            kernels=release,
            release=release,
            loaded_version=loaded_version,
        )


def _loaded_fact(module: str) -> str:
    return "gpu.driver_version" if module == "nvidia" else f"rdma.modules.{module}.version"


def _loaded_words(loaded: bool | None) -> str:
    if loaded is False:
        return "The module is not loaded."
    return "Whether the module is loaded is not in the facts; nothing shows a module for this kernel from elsewhere."


def _file_words(on_disk: bool | None, module: str, release: str) -> str:
    if on_disk is False:
        return f"/lib/modules/{release}/modules.dep lists no {module} module."
    return f"Whether /lib/modules/{release} holds a {module} module from another package was not read."


@rule(KERNEL_RULE, requires=(), reads=(facts.KERNEL, facts.DKMS, facts.GPU_DRIVER, facts.NODE_RDMA))
def not_for_running_kernel(ctx: Ctx) -> Iterator[Outcome]:
    release = ctx.node.kernel.release
    if not release or ctx.node.dkms is None:
        if _loaded_version(ctx, "nvidia")[0]:
            # the driver runs, so its module was built for this kernel; a stale load shows as a user-space mismatch
            yield decided(KERNEL_RULE, "the NVIDIA driver is loaded: a module exists for the running kernel")
            return
        missing = [] if release else ["the running kernel (kernel.release)"]
        if ctx.node.dkms is None:
            missing.append(f"the DKMS builds ({ctx.node.unknown.get('dkms') or 'not in the facts'})")
        yield unknown(
            KERNEL_RULE,
            "the NVIDIA driver is not known to be loaded, and "
            + " and ".join(missing)
            + " are not known, so whether its DKMS modules (nvidia, nvidia-peermem, MLNX_OFED) were built for the "
            "running kernel cannot be told",
            facts=tuple(
                f for f, gone in (("node.kernel.release", not release), ("node.dkms", ctx.node.dkms is None)) if gone
            ),
        )
        return
    said: list[Outcome] = []
    for name, builds in sorted(_builds(ctx).items()):
        said += list(_judge_name(ctx, name, builds, release))
    if said:
        yield from said
    else:
        yield decided(KERNEL_RULE, f"every DKMS module is built for the running kernel {release} or loaded")


RULES, NEEDS, REQUIRES, READS, check = family(flavour_unsupported_gpu, not_for_running_kernel)
