"""NVSwitch systems: CUDA starts only after Fabric Manager (and on NVLink 5, NVLSM) has configured the NVLink fabric.

On an HGX/DGX baseboard whose GPUs reach each other through NVSwitch, each GPU must register with the fabric that
Fabric Manager sets up before cuInit succeeds; until then every CUDA program on the node gets 802
(CUDA_ERROR_SYSTEM_NOT_READY, "system not yet initialized"), although nvidia-smi lists the GPUs. Fabric Manager
starts only with exactly the loaded driver's version, and NVLink 5 baseboards also need NVLSM and ib_umad (NVIDIA
Fabric Manager user guide; compat_matrix nvswitch_systems). These are node facts; they matter to any image that
uses the GPU.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..knowledge.fabric import FabricNeed, fabric_need
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Decided, Outcome, decided, finding, unknown
from .node_only import node_only

MISSING = "NODE-FABRIC-MANAGER-MISSING"
NOT_RUNNING = "NODE-FABRIC-MANAGER-NOT-RUNNING"
MISMATCH = "NODE-FABRIC-MANAGER-VERSION-MISMATCH"
NVLSM_MISSING = "NODE-NVLSM-MISSING"
# Fabric Manager gates CUDA itself (cuInit returns 802 until the fabric is up), so the image question is whether it
# runs GPU code at all, not whether it ships NCCL: a plain CUDA program fails the same way.
_IMAGE = (facts.GPU_WORKLOAD,)
_SYSTEM = (facts.NVSWITCH,)  # and the GPU models: fabric_need asks for them itself
COMPLETED = "Completed"
_ASK = (
    "is it installed and running (systemctl is-active nvidia-fabricmanager; nvidia-smi -q shows Fabric State "
    "Completed; node.fabric.fm_installed / fm_running)?"
)


def _need(ctx: Ctx, rule_id: str) -> Iterator[Outcome | FabricNeed]:
    """The node's need for Fabric Manager when it has one; else what to say. The node is decided before the image:
    a node without NVSwitch is fine whatever the image."""
    need = fabric_need(ctx.node, ctx.matrix)
    if need.fabric_manager is False:
        yield decided(rule_id, need.why)
    elif need.fabric_manager is None:
        if rule_id != MISSING:  # one question for the family: the others follow from its answer
            yield decided(rule_id, f"whether the node needs Fabric Manager at all is asked by {MISSING}")
        else:
            yield unknown(
                rule_id,
                f"whether the node is an NVSwitch system that needs Fabric Manager: {need.why}",
                (facts.NVSWITCH.name,),
            )
    else:
        yield need


def _uses_gpu(ctx: Ctx, rule_id: str, said: list[Outcome]) -> bool:
    """Whether the image uses the GPU; when it does not or that is unknown, `said` gets what to say (nothing when
    unknown: the engine asks whether the image ships CUDA or NCCL)."""
    if node_only(ctx) or ctx.gpu_image:
        return True
    if not (ctx.image.unknown_reason("nccl") or ctx.image.unknown_reason("cuda")):
        said.append(decided(rule_id, "the image does not use the GPU"))
    return False


def _for_need(ctx: Ctx, rule_id: str, body: Callable[[Ctx, FabricNeed], Iterator[Outcome]]) -> Iterator[Outcome]:
    """What _need says (decided or asked) for a node that does not need Fabric Manager or may not; else the body's
    outcomes for the need, all gated on the image's GPU use (_gated)."""

    def outcomes() -> Iterator[Outcome]:
        for item in _need(ctx, rule_id):
            if isinstance(item, FabricNeed):
                yield from body(ctx, item)
            else:
                yield item

    return _gated(ctx, rule_id, outcomes())


def _gated(ctx: Ctx, rule_id: str, outcomes: Iterator[Outcome]) -> Iterator[Outcome]:
    """The rule's outcomes; a finding or question about the node only for an image that uses the GPU (a decision
    that the node is fine stands whatever the image)."""
    said: list[Outcome] = []
    spoke = False
    for outcome in outcomes:
        spoke = True
        if isinstance(outcome, Decided) or _uses_gpu(ctx, rule_id, []):
            yield outcome
        elif not said:
            _uses_gpu(ctx, rule_id, said)  # "the image does not use the GPU", or nothing: the engine asks
            yield from said
    if not spoke and not _uses_gpu(ctx, rule_id, said):  # the body left a node question to the engine
        yield from said


def _evidence(ctx: Ctx, need: FabricNeed) -> list[Evidence]:
    fabric = ctx.node.fabric
    gpus = [g.name for g in ctx.node.gpu.gpus if g.name]
    ev = [ctx.node_ev("gpu.gpus", f"{len(gpus)} x {gpus[0]}" if gpus else None)]
    if fabric.nvswitch_pci is not None:
        ev.append(ctx.node_ev("fabric.nvswitch_pci", len(fabric.nvswitch_pci)))
    return ev


@rule(MISSING, reads=(*_IMAGE, *_SYSTEM, facts.FM_INSTALLED, facts.FM_RUNNING))
def fabric_manager_missing(ctx: Ctx) -> Iterator[Outcome]:
    yield from _for_need(ctx, MISSING, _fabric_manager_missing)


def _fabric_manager_missing(ctx: Ctx, need: FabricNeed) -> Iterator[Outcome]:
    fabric = ctx.node.fabric
    if fabric.fm_installed or fabric.fm_running:
        yield decided(MISSING, "Fabric Manager is installed or running")
    elif fabric.fm_installed is False and fabric.fm_running is False:
        ev = [*_evidence(ctx, need), ctx.node_ev("fabric.fm_installed", False), ctx.node_ev("fabric.fm_running", False)]
        yield finding(ctx.matrix, MISSING, ev, node=ctx.node.name, system=need.system, why=need.why)
    elif fabric.fm_installed is False:
        yield unknown(
            MISSING,
            f"{need.why}, and no Fabric Manager package on the host: is nv-fabricmanager run by a driver container "
            "(GPU Operator) instead (node.fabric.fm_running is unknown)?",
            (facts.FM_RUNNING.name,),
        )
    elif fabric.fm_running is None:
        yield unknown(
            MISSING,
            f"{need.why}: CUDA needs Fabric Manager there; {_ASK}",
            (facts.FM_INSTALLED.name, facts.FM_RUNNING.name),
        )


@rule(NOT_RUNNING, reads=(*_IMAGE, *_SYSTEM, facts.FM_INSTALLED, facts.FM_RUNNING))
def fabric_manager_not_running(ctx: Ctx) -> Iterator[Outcome]:
    yield from _for_need(ctx, NOT_RUNNING, _fabric_manager_not_running)


def _fabric_manager_not_running(ctx: Ctx, need: FabricNeed) -> Iterator[Outcome]:
    fabric = ctx.node.fabric
    state = fabric.gpu_fabric_state
    if state is not None and state.strip().lower() != COMPLETED.lower():
        ev = [*_evidence(ctx, need), ctx.node_ev("fabric.gpu_fabric_state", state)]
        if fabric.gpu_fabric_status:
            ev.append(ctx.node_ev("fabric.gpu_fabric_status", fabric.gpu_fabric_status))
        yield finding(ctx.matrix, NOT_RUNNING, ev, variant="fabric-state", node=ctx.node.name, state=state)
    elif fabric.fm_running is False and fabric.fm_installed is not False:
        ev = [*_evidence(ctx, need), ctx.node_ev("fabric.fm_running", False)]
        if fabric.fm_enabled is not None:
            ev.append(ctx.node_ev("fabric.fm_enabled", fabric.fm_enabled))
        yield finding(ctx.matrix, NOT_RUNNING, ev, node=ctx.node.name, system=need.system)
    elif fabric.fm_running or state is not None:
        yield decided(NOT_RUNNING, "nv-fabricmanager runs" if fabric.fm_running else f"GPU fabric state {state}")
    elif fabric.fm_installed is False:
        yield decided(NOT_RUNNING, f"not installed: {MISSING} decides it")
    elif fabric.fm_installed is None:  # installed and running both unknown: the same question MISSING asks
        yield decided(NOT_RUNNING, f"whether Fabric Manager is installed and running is asked by {MISSING}")
    else:
        yield unknown(
            NOT_RUNNING, f"{need.why}: CUDA starts only once Fabric Manager runs; {_ASK}", (facts.FM_RUNNING.name,)
        )


@rule(MISMATCH, reads=(*_IMAGE, *_SYSTEM, facts.FM_INSTALLED, facts.FM_VERSION, facts.GPU_DRIVER))
def fabric_manager_version_mismatch(ctx: Ctx) -> Iterator[Outcome]:
    yield from _for_need(ctx, MISMATCH, _fabric_manager_version_mismatch)


def _fabric_manager_version_mismatch(ctx: Ctx, need: FabricNeed) -> Iterator[Outcome]:
    fabric, driver = ctx.node.fabric, ctx.node.gpu.driver_version
    if fabric.fm_installed is False:
        yield decided(MISMATCH, f"no Fabric Manager on the host: {MISSING} decides it")
    elif fabric.fm_version and driver:
        if fabric.fm_version == driver:
            yield decided(MISMATCH, f"Fabric Manager {fabric.fm_version} is the driver's version")
        else:
            ev = [
                *_evidence(ctx, need),
                ctx.node_ev("fabric.fm_version", fabric.fm_version),
                ctx.node_ev("gpu.driver_version", driver),
            ]
            if fabric.fm_package:
                ev.append(ctx.node_ev("fabric.fm_package", fabric.fm_package))
            yield finding(
                ctx.matrix,
                MISMATCH,
                ev,
                node=ctx.node.name,
                fm_version=fabric.fm_version,
                driver=driver,
                branch=driver.split(".")[0],
            )
    else:
        yield unknown(
            MISMATCH,
            f"{need.why}: Fabric Manager starts only with the driver's exact version; which Fabric Manager version "
            "does the node have (dpkg -l 'nvidia-fabricmanager*', node.fabric.fm_version) and which driver "
            "(node.gpu.driver_version)?",
            (facts.FM_VERSION.name, facts.GPU_DRIVER.name),
        )


@rule(NVLSM_MISSING, reads=(*_IMAGE, *_SYSTEM, facts.NVLSM, facts.IB_UMAD))
def nvlsm_missing(ctx: Ctx) -> Iterator[Outcome]:
    yield from _for_need(ctx, NVLSM_MISSING, _nvlsm_missing)


def _nvlsm_missing(ctx: Ctx, need: FabricNeed) -> Iterator[Outcome]:
    if need.nvlsm is False:
        yield decided(NVLSM_MISSING, f"{need.system}: its NVSwitches do not need NVLSM")
        return
    if need.nvlsm is None:
        yield unknown(
            NVLSM_MISSING, "which NVSwitch generation the node has: its GPU models are not known", ("node.gpu.gpus",)
        )
        return
    fabric = ctx.node.fabric
    if fabric.ib_umad_loaded is False:
        ev = [*_evidence(ctx, need), ctx.node_ev("fabric.ib_umad_loaded", False)]
        yield finding(ctx.matrix, NVLSM_MISSING, ev, variant="no-umad", node=ctx.node.name, system=need.system)
    elif fabric.nvlsm_installed is False:
        ev = [*_evidence(ctx, need), ctx.node_ev("fabric.nvlsm_installed", False)]
        yield finding(ctx.matrix, NVLSM_MISSING, ev, node=ctx.node.name, system=need.system)
    elif fabric.ib_umad_loaded and fabric.nvlsm_installed:
        yield decided(NVLSM_MISSING, "nvlsm is installed and ib_umad loaded")
    else:
        yield unknown(
            NVLSM_MISSING,
            f"{need.why}: Fabric Manager needs NVLSM and ib_umad there; are they installed and loaded "
            "(node.fabric.nvlsm_installed, node.fabric.ib_umad_loaded)?",
            (facts.NVLSM.name, facts.IB_UMAD.name),
        )


RULES, NEEDS, REQUIRES, READS, check = family(
    fabric_manager_missing, fabric_manager_not_running, fabric_manager_version_mismatch, nvlsm_missing
)
