"""A launch that shows one CUDA process several MIG devices: CUDA enumerates a single MIG device per process (NVIDIA
MIG user guide, "CUDA Device Enumeration"), so the second one does not exist for it. Read from the launch's (or the
image's) CUDA_VISIBLE_DEVICES and, on a node whose GPUs MIG splits, the GPUs the launch gives one container."""

from __future__ import annotations

from collections.abc import Iterator

from ..knowledge import visible_devices
from ..model.location import Location
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding
from .mig import capable as _capable

PER_PROCESS = "JOB-MIG-SEVERAL-PER-PROCESS"
VISIBLE = "CUDA_VISIBLE_DEVICES"


def applies(ctx: Ctx) -> bool:
    """Only with a launch: which devices a process sees is the launch's."""
    return ctx.job is not None


@rule(PER_PROCESS, reads=(facts.setting(VISIBLE), facts.MIG_INSTANCES), needs={"mig_gpus": set()})
def several_per_process(ctx: Ctx) -> Iterator[Outcome]:
    """A CUDA process enumerates a single MIG device (MIG user guide, "CUDA Device Enumeration"): a process shown two
    MIG devices sees only the first, and device 1 does not exist for it."""
    setting = ctx.setting(VISIBLE)
    if setting is not None:
        migs = [u for u in visible_devices.parse(setting.value).uuids if u.upper().startswith("MIG-")]
        if len(migs) >= 2:
            yield finding(ctx.matrix, PER_PROCESS, [setting.evidence], setting=VISIBLE, count=len(migs), first=migs[0])
        else:
            yield decided(PER_PROCESS, f"{VISIBLE} names at most one MIG device")
        return
    instances = ctx.node.mig.gpu_instances
    if instances == {}:
        yield decided(PER_PROCESS, "no GPU instance exists on the node: its GPUs are whole GPUs")
        return
    if instances is None and _capable(ctx) == []:
        yield decided(PER_PROCESS, "none of the node's GPUs supports MIG (catalog mig_gpus)")
        return
    if facts.setting(VISIBLE).state(ctx) is facts.State.UNKNOWN:
        return  # MIG may split the GPUs and the process's CUDA_VISIBLE_DEVICES is not known: the engine asks
    job = ctx.job
    gpus = job.gpus if job is not None else None
    if gpus is None or 0 <= gpus < 2:
        yield decided(PER_PROCESS, "the launch gives the container at most one GPU (or does not say)")
        return
    if instances is None:
        return  # the engine asks whether MIG splits the node's GPUs
    assert job is not None  # gpus came from it
    ev = [
        ctx.node_ev("mig.gpu_instances", ", ".join(f"{g}: {n}" for g, n in sorted(instances.items()))),
        Evidence("job.gpus", gpus, Location.file(job.path)),
    ]
    yield finding(ctx.matrix, PER_PROCESS, ev, variant="node", where=job.where, gpus="all" if gpus < 0 else gpus)


RULES, NEEDS, REQUIRES, READS, check = family(several_per_process)
