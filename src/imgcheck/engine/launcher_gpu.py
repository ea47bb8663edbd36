"""GPU injection by launchers other than the toolkit's runtime hook: a CDI device request (Podman, Apptainer 1.5+,
Docker with CDI) and Apptainer's --nvccli, checked against what the node has (catalog container_launchers).

A CDI request injects only what a CDI spec for nvidia.com/gpu lists; with no spec on the node the launcher refuses it
("unresolvable CDI devices"). Apptainer's --nvccli runs the host's nvidia-container-cli; without it the launch fails,
and under --contain it sets up no GPU unless NVIDIA_VISIBLE_DEVICES is set (apptainer launcher_linux.go).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..job.apptainer import CDI_GPU, INJECT_CDI, INJECT_NVCCLI
from ..job.model import JobFacts
from ..model.location import Location
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown

CDI_NO_SPEC = "LAUNCH-CDI-NO-SPEC"
NVCCLI = "LAUNCH-APPTAINER-NVCCLI"
DEVICES = "NVIDIA_VISIBLE_DEVICES"


def applies(ctx: Ctx) -> bool:
    return ctx.job is not None and _mode(ctx.job) is not None


def _cdi_request(job: JobFacts) -> str | None:
    if job.gpu_injection == INJECT_CDI:
        return job.gpus_setting or "--device nvidia.com/gpu"
    return next((f"--device {d}" for d in job.devices or () if d.startswith(CDI_GPU)), None)


def _mode(job: JobFacts) -> str | None:
    return INJECT_CDI if _cdi_request(job) else job.gpu_injection


def _row(ctx: Ctx, mode: str) -> dict[str, object]:
    return next(r for r in ctx.matrix.rows("container_launchers") if r["mode"] == mode)


@rule(CDI_NO_SPEC, reads=(facts.CTK_CDI_SPECS,), needs={"container_launchers": {INJECT_CDI}})
def cdi_no_spec(ctx: Ctx) -> Iterator[Outcome]:
    job = ctx.job
    if job is None:
        return  # a launch rule: without a spec there is no launch to judge (no fact is missing)
    request = _cdi_request(job)
    if request is None:
        yield decided(CDI_NO_SPEC, f"{job.where} makes no CDI device request")
        return
    specs = ctx.node.container_toolkit.cdi_specs
    if specs is None:
        yield unknown(
            CDI_NO_SPEC,
            f"{job.where} requests {request} through CDI: does the node have a CDI spec for nvidia.com/gpu "
            "(/etc/cdi, /var/run/cdi; node.container_toolkit.cdi_specs)?",
            (facts.CTK_CDI_SPECS.name,),
        )
        return
    if specs:
        yield decided(CDI_NO_SPEC, f"the node has CDI specs for nvidia.com/gpu ({', '.join(specs)})")
        return
    row = _row(ctx, INJECT_CDI)
    ev = [
        Evidence("job.gpus_setting", request, Location.file(job.path)),
        ctx.node_ev("container_toolkit.cdi_specs", "none in /etc/cdi, /var/run/cdi"),
    ]
    yield finding(ctx.matrix, CDI_NO_SPEC, ev, where=job.where, request=request, needs=str(row["needs"]))


@rule(NVCCLI, reads=(facts.CONTAINER_CLI, facts.setting(DEVICES)), needs={"container_launchers": {INJECT_NVCCLI}})
def nvccli(ctx: Ctx) -> Iterator[Outcome]:
    job = ctx.job
    if job is None:
        return  # a launch rule: without a spec there is no launch to judge (no fact is missing)
    if job.gpu_injection != INJECT_NVCCLI:
        yield decided(NVCCLI, f"{job.where} does not use apptainer --nvccli")
        return
    row = _row(ctx, INJECT_NVCCLI)
    cli = ctx.node.gpu.container_cli
    ev = [Evidence("job.gpus_setting", "--nvccli", Location.file(job.path))]
    if cli is False:
        ev.append(ctx.node_ev("gpu.container_cli", False))
        yield finding(ctx.matrix, NVCCLI, ev, where=job.where, needs=str(row["needs"]))
        return
    if cli is None:
        yield unknown(NVCCLI, f"{job.where} runs the host's nvidia-container-cli: is it installed on the node?")
        return
    if job.devices is None:  # --contain: a minimal /dev, and no GPU unless NVIDIA_VISIBLE_DEVICES is set
        var = job.env_value(DEVICES)
        if var is None and not job.env_incomplete:
            yield finding(ctx.matrix, NVCCLI, ev, variant="contain", where=job.where, needs=str(row["needs"]))
            return
        if var is None:
            yield unknown(NVCCLI, f"{job.where}: under --contain, --nvccli sets up GPUs only if {DEVICES} reaches it")
            return
    yield decided(NVCCLI, "nvidia-container-cli is on the node")


RULES, NEEDS, REQUIRES, READS, check = family(cdi_no_spec, nvccli)
