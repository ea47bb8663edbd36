"""CUDA_VISIBLE_DEVICES read the way the CUDA driver reads it (knowledge/visible_devices.py): a value that leaves
the process no GPU, and ordinals past the GPUs the process can see (a container's GPUs are renumbered from 0)."""

from __future__ import annotations

from collections.abc import Iterator

from ..job.model import RUNTIME_DOCKER, RUNTIME_ENROOT, RUNTIME_KUBERNETES
from ..knowledge import visible_devices
from ..model.location import Location
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, finding, unknown

NONE = "ENV-CUDA-VISIBLE-DEVICES-NONE"
ORDINAL = "ENV-CUDA-VISIBLE-DEVICES-ORDINAL"
VAR = "CUDA_VISIBLE_DEVICES"
_SETTING = facts.setting(VAR)
_CONTAINERS = (RUNTIME_DOCKER, RUNTIME_KUBERNETES, RUNTIME_ENROOT)


def gpu_job(ctx: Ctx) -> bool:
    """Whether the launch means to use GPUs: a launch that gives its container no GPU runs none."""
    return ctx.job is None or ctx.job.gpus != 0


def process_gpus(ctx: Ctx) -> tuple[int | None, str, Evidence | None]:
    """How many GPUs the process can see before CUDA_VISIBLE_DEVICES filters them, and how that is known: the
    container's GPUs (renumbered from 0), or the node's when the job runs on the host or gets all of them."""
    job = ctx.job
    if job is not None and job.runtime == RUNTIME_ENROOT:
        # Slurm exports the step's host GPU indices and enroot's nvidia hook maps them: how the container numbers
        # them was not read from enroot's hook, so no count is claimed
        return None, "under enroot the numbering of the step's GPUs inside the container was not read", None
    from_list = job is not None and VAR in (job.gpus_setting or "")  # a count stated by the same list: no limit
    if job is not None and job.gpus and job.gpus > 0 and not from_list:
        how = f"the container gets {job.gpus} GPUs ({job.gpus_setting or 'the spec'}), numbered from 0"
        return job.gpus, how, Evidence("job.gpus", how, Location.file(job.path))
    on_host = job is not None and (job.gpus == -1 or job.runtime not in _CONTAINERS or from_list)
    if on_host and ctx.node.gpu.gpus:
        n = len(ctx.node.gpu.gpus)
        how = f"the node has {n} GPUs" + (" and the job gets all of them" if job and job.gpus == -1 else "")
        return n, how, ctx.node_ev("gpu.gpus", how)
    if on_host:
        return None, ctx.unknown_why("gpu.gpus"), None
    if job is None:
        return None, "without a launch spec the GPUs the container gets are not known", None
    return None, f"{job.where} does not say how many GPUs its container gets", None


@rule(NONE, requires=(_SETTING,), reads=())
def no_device(ctx: Ctx) -> Iterator[Outcome]:
    s = ctx.setting(VAR)
    if s is None or not gpu_job(ctx):
        return
    parsed = visible_devices.parse(s.value)
    if not parsed.none:
        return
    if not s.value.strip():
        variant = "empty"
    elif parsed.duplicate is not None:
        variant = "duplicate"
    else:
        variant = "hidden"
    yield finding(
        ctx.matrix,
        NONE,
        [s.evidence],
        variant=None if variant == "empty" else variant,
        setting=s.label,
        entry=parsed.stopped_at if parsed.stopped_at is not None else "",
        duplicate=parsed.duplicate,
    )


@rule(ORDINAL, requires=(_SETTING,), reads=())
def ordinal_out_of_range(ctx: Ctx) -> Iterator[Outcome]:
    s = ctx.setting(VAR)
    if s is None or not gpu_job(ctx):
        return
    parsed = visible_devices.parse(s.value)
    if parsed.none:
        return  # no device at all is the other rule's
    if not parsed.ordinals:
        yield from _uuids(ctx, s.label, s.evidence, parsed)
        return
    gpus, how, gpus_ev = process_gpus(ctx)
    if gpus is None or gpus_ev is None:
        yield unknown(ORDINAL, f"{s.label} names ordinals up to {max(parsed.ordinals)}; {how}")
        return
    bad = parsed.first_out_of_range(gpus)
    if bad is None:
        return  # every ordinal is one of the GPUs the process sees (both known): decided, nothing wrong
    kept = parsed.visible_with(gpus)
    yield finding(
        ctx.matrix,
        ORDINAL,
        [s.evidence, gpus_ev],
        variant="none" if not kept else None,
        setting=s.label,
        ordinal=bad,
        gpus=gpus,
        how=how,
        kept=",".join(str(o) for o in kept) or "none",
        last=gpus - 1,
    )


def _uuids(ctx: Ctx, label: str, evidence: Evidence, parsed: visible_devices.Visible) -> Iterator[Outcome]:
    """UUID entries name GPUs by (a prefix of) their UUID, the same inside a container: an entry that matches none of
    the node's GPUs matches none of the container's either, and ends the list like an invalid ordinal."""
    uuids = [g.uuid for g in ctx.node.gpu.gpus]
    if not uuids or any(u is None for u in uuids):
        yield unknown(ORDINAL, f"{label} names GPUs by UUID; the node's GPU UUIDs are unknown (gpu.gpus[].uuid)")
        return
    known = [u.lower() for u in uuids if u]
    for i, entry in enumerate(parsed.uuids):
        if entry.upper().startswith("MIG-"):
            return  # MIG device UUIDs are not among the node facts: nothing is claimed about them
        if not any(u.startswith(entry.lower()) for u in known):
            yield finding(
                ctx.matrix,
                ORDINAL,
                [evidence, ctx.node_ev("gpu.gpus", ", ".join(known))],
                variant="uuid-none" if i == 0 else "uuid",
                setting=label,
                entry=entry,
                kept=",".join(parsed.uuids[:i]) or "none",
                uuids=", ".join(known),
            )
            return


RULES, NEEDS, REQUIRES, READS, check = family(no_device, ordinal_out_of_range)
