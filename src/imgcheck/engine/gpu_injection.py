"""Whether the launcher gives the container the GPU driver at all: the runtime-injection trigger outside Docker.

The host's driver user space (libcuda.so.1, libnvidia-ml.so.1, nvidia-smi) reaches a container only through the
launcher's GPU hook. Docker's --gpus and the Kubernetes device plugin set NVIDIA_VISIBLE_DEVICES themselves, and the
NVIDIA Container Toolkit defaults NVIDIA_DRIVER_CAPABILITIES to utility,compute. enroot (and Pyxis, which starts
containers through it) does neither: its pre-start hook conf/hooks/98-nvidia.sh (catalog enroot_nvidia_hook, read
from every release) reads NVIDIA_* from enroot's environment first and the container's (the image's Env) second,
injects nothing when NVIDIA_VISIBLE_DEVICES is unset or void, and without NVIDIA_DRIVER_CAPABILITIES mounts only the
utility libraries, not libcuda (catalog container_runtime_injects: libcuda.so is a compute library). An image built
FROM nvidia/cuda sets both; a plain Python image with pip's CUDA wheels sets neither. With the image's Env not read,
a reference naming nvidia/cuda or an NGC image gives what that family sets (catalogs nvidia_image_env, ngc_image_env:
knowledge/image_env.py), as inferred evidence.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..job.model import RUNTIME_ENROOT, JobFacts
from ..model.location import Location
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .emit import Outcome, decided, finding, unknown

RULE = "JOB-ENROOT-NO-GPU-DRIVER"
DEVICES = "NVIDIA_VISIBLE_DEVICES"
CAPABILITIES = "NVIDIA_DRIVER_CAPABILITIES"
RULES = (RULE,)
NEEDS = {"container_runtime_injects": {"legacy:libcuda.so"}}
REQUIRES = {RULE: ()}  # about the launcher: the image's GPU use is read below (CUDA, NCCL or torch)
READS = {RULE: (facts.CUDA, facts.NCCL, facts.PACKAGES, *facts.each_setting(DEVICES, CAPABILITIES))}
# node facts gpu.container_cli: False decides the no-cli variant; None (not probed) leaves the hook's other checks


def applies(ctx: Ctx) -> bool:
    """Only an enroot / Pyxis launch runs enroot's hook."""
    return ctx.job is not None and ctx.job.runtime == RUNTIME_ENROOT


def _hook_value(ctx: Ctx, job: JobFacts, name: str) -> tuple[str | None, Evidence | None, str | None]:
    """(value, evidence, why unknown) of `name` as the hook reads it: enroot's environment (the job's exported
    variables) first, then the image's Env. Unset: (None, None, None)."""
    var = job.env_value(name)
    if var is not None:
        if var.value is None:
            return None, None, f"{job.where} passes {name} from the host, with a value the spec does not show"
        return var.value, Evidence(f"job.env.{name}", var.value, Location.file(job.path)), None
    image_value = ctx.image_env(name)  # read, or inferred from the NVIDIA image its reference names
    if image_value is not None:
        return (*image_value, None)
    unread = ctx.image.unknown_reason("env")
    if unread:
        # the deciding fact, with what decides it: every nvidia/cuda image (so every NGC image) sets both variables
        return (
            None,
            None,
            (
                f"whether the image's Env sets {name} ({unread}; an image built FROM nvidia/cuda or an NGC image sets it, "
                "catalog nvidia_image_env; a plain base with CUDA from pip wheels does not)"
            ),
        )
    if job.env_incomplete:
        return None, None, f"{job.where} adds variables the spec does not show; one may be {name}"
    return None, None, None


def _hook_row(ctx: Ctx) -> dict[str, object]:
    rows = list(ctx.matrix.rows("enroot_nvidia_hook"))
    return rows[-1]  # every release read injects under the same conditions (one row); a new one is a new row


def check(ctx: Ctx) -> Iterator[Outcome]:
    job = ctx.job
    if job is None or job.runtime != RUNTIME_ENROOT:
        return
    if job.gpus == 0:
        yield decided(RULE, f"{job.where} asks for no GPU")
        return
    if not ctx.gpu_image:
        return  # no CUDA, NCCL or torch the facts show; unread ones: the engine asks
    row = _hook_row(ctx)
    hook = f"enroot's NVIDIA hook ({row['source']})"
    devices, devices_ev, why = _hook_value(ctx, job, DEVICES)
    if why:
        yield unknown(RULE, f"{job.where}: {hook} injects the driver only when {DEVICES} is set; {why}")
        return
    skip = str(row["skip_values"] or "").split(",")
    common = {"where": job.where, "who": job.who, "hook": str(row["source"])}
    if devices is None or devices.strip() in skip:
        state = "not set" if devices is None else f"{devices}"
        evidence = [Evidence("job.runtime", job.runtime, Location.file(job.path))]
        if devices_ev is not None:
            evidence.append(devices_ev)
        yield finding(ctx.matrix, RULE, evidence, state=state, **common)
        return
    if devices.strip() == row["no_devices_value"]:
        yield unknown(
            RULE,
            f"{job.where}: {DEVICES}={devices}: {hook} injects the driver's libraries but no GPU; whether the "
            "container still sees /dev/nvidia* depends on enroot's /dev mounts (ENROOT_RESTRICT_DEV)",
        )
        return
    if ctx.node.gpu.container_cli is False:
        evidence = [e for e in (devices_ev,) if e is not None]
        evidence.append(ctx.node_ev("gpu.container_cli", False))
        yield finding(
            ctx.matrix,
            RULE,
            evidence,
            variant="no-cli",
            devices=devices,
            message=str(row["missing_cli_message"]),
            **common,
        )
        return
    caps, caps_ev, why = _hook_value(ctx, job, CAPABILITIES)
    if why:
        yield unknown(RULE, f"{job.where}: {hook} mounts libcuda only for the compute capability; {why}")
        return
    words = [w.strip() for w in (caps or "").split(",") if w.strip()] or str(row["default_capabilities"]).split(",")
    known = str(row["capabilities"]).split(",")
    bad = [w for w in words if w not in known]
    evidence = [e for e in (devices_ev, caps_ev) if e is not None]
    if bad and "all" not in words[: words.index(bad[0])]:  # the hook stops reading at "all"
        yield finding(
            ctx.matrix,
            RULE,
            evidence,
            variant="bad-capability",
            capability=bad[0],
            message=f"{row['unknown_capability_message']}{bad[0]}",
            **common,
        )
        return
    compute = {str(r["capability"]) for r in ctx.matrix.rows("container_runtime_injects") if r["name"] == "libcuda.so"}
    if "all" in words or compute & set(words):
        yield decided(RULE, f"{DEVICES}={devices} and capabilities {','.join(words)}: the hook mounts libcuda")
        return
    yield finding(
        ctx.matrix,
        RULE,
        evidence,
        variant="no-compute",
        capabilities=caps if caps is not None else f"not set, so {row['default_capabilities']}",
        **common,
    )
