"""GPUDirect RDMA over AWS EFA, decided from the node's kernel, NVIDIA module flavour and release, and EFA driver
release (EFA-GDR-NVIDIA-P2P), not only from peer-memory prerequisites.

EFA's kernel driver takes nvidia_p2p_* with symbol_get() (amzn-drivers kernel/linux/efa/src/efa_nvmem_impl.h). Two
things break it, each decided from the node's kernel, NVIDIA module flavour and release, and EFA driver release:
a kernel whose symbol_get() resolves only EXPORT_SYMBOL_GPL symbols (efa_gdr_support kernel rows) when the NVIDIA
module exports them plainly (nvidia_p2p_abi) and no efa_nv_peermem helper (EFA driver >= its row, open flavour only)
bridges them; and an NVIDIA module returning v2 page tables (580 on) to an EFA driver that knows only v1.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..knowledge import providers
from ..versions import ranges
from ..versions.ecosystems import numeric_tuple
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown
from .node_only import node_only

GDR_P2P = "EFA-GDR-NVIDIA-P2P"


def _abi(ctx: Ctx, driver: str) -> dict[str, Any] | None:
    """The nvidia_p2p_abi row of a release: the last range starting at or below it, None past the newest read."""
    rows = ctx.matrix.rows("nvidia_p2p_abi")
    if not rows or ranges.at_least(rows[-1]["last_release"], driver) is not True:
        return None
    before = [r for r in rows if ranges.at_least(driver, r["first_release"])]
    return before[-1] if before else None


def _gpl_only_kernel(ctx: Ctx, release: str) -> tuple[bool | None, str]:
    """Whether the kernel's symbol_get() resolves only GPL exports, and why (or what is open)."""
    mine = numeric_tuple(release)
    if len(mine) < 2:
        return None, f"kernel release {release} is not in MAJOR.MINOR.PATCH form"
    rows = [r for r in ctx.matrix.rows("efa_gdr_support") if r["kind"] == "kernel_symbol_get_gpl"]
    # a row whose first release is its series itself (6.6) is the mainline change: every later kernel has it
    mainline = [
        numeric_tuple(r["series"]) for r in rows if numeric_tuple(r["first_release"]) == numeric_tuple(r["series"])
    ]
    if mainline and mine[:2] >= min(mainline):
        return True, f"kernel {release} carries the change (mainline from {'.'.join(map(str, min(mainline)))} on)"
    row = next((r for r in rows if numeric_tuple(r["series"]) == mine[:2]), None)
    if row is None:
        return None, f"no source read says whether the {mine[0]}.{mine[1]} kernels carry the symbol_get change"
    if (mine[2] if len(mine) > 2 else 0) == 0 and "-" in release:
        # distribution numbering (Ubuntu 5.15.0-91, RHEL 5.14.0-...): the stable patch level is not in the name
        return None, f"kernel {release} is numbered the distribution's way; the change came in {row['first_release']}"
    if mine >= numeric_tuple(row["first_release"]):
        return (
            True,
            f"kernel {release} is at or after {row['first_release']}, the first {row['series']} release with it",
        )
    return False, f"kernel {release} is before {row['first_release']}"


def _abi_v2(
    efa: str | None, efa_why: str, driver: str, abi: dict[str, Any] | None, v2: dict[str, Any]
) -> tuple[bool | None, str]:
    """Whether the EFA driver rejects the NVIDIA module's page tables (ABI v2 from 580 on)."""
    if abi is None or abi["page_table_major"] < 2:
        return False, ""
    if efa is None:
        return None, (
            f"driver {driver} hands out P2P page tables of ABI v{abi['page_table_major']}, which EFA drivers before "
            f"{v2['first_release']} reject; {efa_why}"
        )
    return bool(ranges.below(efa, v2["first_release"])), ""


def _symbol_get(
    ctx: Ctx, release: str, flavour: str | None, driver: str, abi: dict[str, Any] | None, efa: str | None, efa_why: str
) -> tuple[bool | None, str, str]:
    """(EFA cannot reach the NVIDIA P2P API on this kernel, why, the question when not known)."""
    gpl_only, why = _gpl_only_kernel(ctx, release)
    if gpl_only is False:
        return False, why, ""
    if flavour == "open":
        if abi is not None and abi["export"] == "gpl":
            return False, f"the open module {driver} exports nvidia_p2p_* GPL-only", ""
        fallback = ctx.matrix.need("efa_gdr_support", key="efa:nv_peermem_fallback")
        if efa is None:
            return None, why, f"{why}; {efa_why} (efa_nv_peermem bridges it from {fallback['first_release']} on)"
        if ranges.at_least(efa, fallback["first_release"]):
            return False, f"EFA driver {efa} reaches the open module through efa_nv_peermem", ""
    elif flavour == "proprietary":
        if abi is not None and abi["export"] == "gpl":
            return (
                None,
                why,
                (
                    f"{why}; the open module {driver} exports nvidia_p2p_* GPL-only, the proprietary module's source is not "
                    "public, and efa_nv_peermem serves only the open module"
                ),
            )
    else:
        return None, why, f"{why}; whether the node's NVIDIA kernel module is open or proprietary"
    if gpl_only is None:
        return None, why, why
    return True, why, ""


@rule(
    GDR_P2P,
    requires=(facts.NODE_RDMA, facts.GPU_WORKLOAD),
    reads=(facts.GPU_DRIVER, facts.GPU_MODULE, facts.KERNEL),
    needs={"efa_gdr_support": {"efa:nv_peermem_fallback", "efa:p2p_v2"}},
)
def gdr_nvidia_p2p(ctx: Ctx) -> Iterator[Outcome]:
    devices = [d.name or "efa" for d in ctx.node.rdma.devices if providers.provider_of(d) == "efa" or d.driver == "efa"]
    if not devices or not (node_only(ctx) or ctx.gpu_image):
        return  # no EFA device on the node, or a container that never touches the GPU: nothing over EFA to decide
    device_ev = ctx.node_ev("rdma.devices.driver", f"efa ({', '.join(devices)})")
    gpu = ctx.node.gpu
    driver, flavour, release = gpu.driver_version, gpu.kernel_module, ctx.node.kernel.release
    if not driver or not release:
        return  # settled as unknown through GPU_DRIVER / KERNEL (READS)
    efa_module = ctx.node.rdma.modules.get("efa")
    efa = efa_module.version if efa_module is not None else None
    efa_why = (
        "the node's EFA kernel driver release (/sys/module/efa/version) is not known"
        if efa_module is None
        else "the loaded efa module declares no version (the kernel's in-tree driver, which has no NVIDIA P2P support)"
    )
    abi = _abi(ctx, driver)
    v2 = ctx.matrix.need("efa_gdr_support", key="efa:p2p_v2")
    fallback = ctx.matrix.need("efa_gdr_support", key="efa:nv_peermem_fallback")
    evidence = [
        device_ev,
        ctx.node_ev("gpu.driver_version", driver),
        ctx.node_ev("gpu.kernel_module", flavour),
        ctx.node_ev("rdma.modules.efa.version", efa),
    ]
    rejects, v2_question = _abi_v2(efa, efa_why, driver, abi, v2)
    if rejects:
        yield finding(
            ctx.matrix, GDR_P2P, evidence, variant="abi-v2", driver=driver, efa=efa, efa_min=v2["first_release"]
        )
        return
    blocked, why, question = _symbol_get(ctx, release, flavour, driver, abi, efa, efa_why)
    if blocked:
        yield finding(
            ctx.matrix,
            GDR_P2P,
            [*evidence, ctx.node_ev("kernel.release", release)],
            variant="open-old-efa" if flavour == "open" else None,
            driver=driver,
            flavour=flavour,
            kernel=release,
            kernel_why=why,
            efa=efa or "unknown",
            efa_min=fallback["first_release"],
        )
        return
    questions = [q for q in (v2_question, question) if q]
    if questions:
        yield unknown(GDR_P2P, f"GPUDirect RDMA over EFA with NVIDIA module {driver}: " + "; ".join(questions))
        return
    yield decided(GDR_P2P, f"EFA reaches driver {driver}'s P2P API: {why}")


RULES, NEEDS, REQUIRES, READS, check = family(gdr_nvidia_p2p)
