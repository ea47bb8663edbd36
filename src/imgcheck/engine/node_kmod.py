"""The NVIDIA kernel-module flavour (open / proprietary) and driver branch against each GPU's architecture.

The open modules run the driver on the GPU System Processor, which GPUs before Turing lack: the open nvidia.ko
refuses them at probe. Blackwell and Grace Hopper are driven only by the open modules: the proprietary one refuses
them. A driver branch after an architecture's last (470 for Kepler, 580 for Maxwell/Pascal/Volta) refuses it too.
Either way no GPU is initialised and every CUDA call in every container fails (nvidia-smi: "No devices were found").
The architecture comes from the GPU's PCI device id (nvidia_gpu_chips, generated from pci.ids and the open module
source), the support from nvidia_kmod_support; both are node facts, so the rule runs in `imgcheck node check` and,
for an image that uses the GPU, in `imgcheck check`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..knowledge import gpus as gpus_k
from ..model.node import Gpu
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


RULES, NEEDS, REQUIRES, READS, check = family(flavour_unsupported_gpu)
