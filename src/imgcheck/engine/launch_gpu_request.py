"""How GPUs reach a container and its ranks, launcher by launcher: a launch that asks for none, Slurm host indices
outside the step's allocation, and an operator's own component that is no job at all.

Docker: the host's GPUs and driver libraries reach a container only through the NVIDIA Container Toolkit. `--gpus`
(compose: deploy.resources.reservations.devices with driver nvidia or capability gpu) makes Docker call the toolkit's
hook for the devices it names. Without it, only the `nvidia` OCI runtime (`--runtime nvidia`, or the daemon's
default-runtime in /etc/docker/daemon.json; Docker's own default is runc) injects anything, and it reads the devices
from the container's NVIDIA_VISIBLE_DEVICES: unset, empty or `void` gives nothing, unless the image is a "legacy"
CUDA image (CUDA_VERSION set, NVIDIA_REQUIRE_CUDA not), for which unset means all
(NVIDIA/nvidia-container-toolkit internal/config/image/cuda_image.go devicesFromEnvvars, IsLegacy). CUDA base images
set NVIDIA_VISIBLE_DEVICES=all in their Env; a plain image does not.

Slurm: enroot's NVIDIA hook passes NVIDIA_VISIBLE_DEVICES to nvidia-container-cli as --device, which resolves an
index against the GPUs NVML enumerates in the step (libnvidia-container src/cli/common.c select_gpu_device: an index
must be below that count, else "unknown device"). With the step's devices constrained by Slurm's cgroup
(ConstrainDevices), those are the allocation's GPUs numbered from 0, so host indices of the allocation (0,1,4,5 of
four GPUs) name devices that do not exist there (NVIDIA/enroot#207: set it to all and let the gres restrict).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..job.model import COMPLETE, RUNTIME_DOCKER, JobFacts
from ..knowledge import cluster_workloads, visible_devices
from ..model.location import Location
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, assuming, decided, finding, unknown

NO_REQUEST = "JOB-NO-GPU-REQUEST"
ALLOCATION = "JOB-NVIDIA-VISIBLE-DEVICES-ALLOCATION"
COMPONENT = "JOB-CLUSTER-COMPONENT"
DEVICES = "NVIDIA_VISIBLE_DEVICES"
_NOTHING = ("", "void")  # the toolkit's values (after trimming) that inject nothing
_DEFAULT_RUNTIME = (
    "the Docker daemon's default runtime is runc (Docker's default), not nvidia (/etc/docker/daemon.json "
    "default-runtime)"
)
_RUNTIME_FACT = "node.docker.default_runtime"


def applies(ctx: Ctx) -> bool:
    return ctx.job is not None or cluster_workloads.infrastructure(ctx.matrix, ctx.image.reference, None) is not None


def _value(ctx: Ctx, job: JobFacts, name: str) -> tuple[str | None, Evidence | None, str | None]:
    """(value, evidence, why unknown) of `name` in the container's environment: the launch's -e wins over the
    image's Env (Docker). Unset: (None, None, None)."""
    var = job.env_value(name)
    if var is not None:
        if var.value is None:
            return None, None, f"{job.where} passes {name} from the caller, with a value the spec does not show"
        return var.value, Evidence(f"job.env.{name}", var.value, Location.file(job.path)), None
    if job.env_incomplete:
        return None, None, f"{job.where} adds variables the spec does not show; one may be {name}"
    value = ctx.image_env(name)  # read, or inferred from the NVIDIA image its reference names (nvidia/cuda, NGC)
    if value is not None:
        return (*value, None)
    unread = ctx.image.unknown_reason("env")
    return None, None, (f"whether the image's Env sets {name} ({unread})" if unread else None)


def _request(job: JobFacts) -> tuple[bool | None, str]:
    """Whether the docker launch asks Docker for GPUs (True), does not (False) or may (None), and the words."""
    if job.gpus not in (None, 0) or job.gpu_injection:
        return True, job.gpus_setting or "--gpus"
    if any(d.startswith("nvidia.com/gpu") for d in job.devices or ()):
        return True, "a CDI device request (--device nvidia.com/gpu=...)"
    if job.gpus == 0:
        return False, job.gpus_setting or "--gpus 0 / no GPU request"
    if job.open_flags:
        return None, f"{', '.join(job.open_flags)} may add --gpus at run time"
    if job.completeness == COMPLETE:
        return False, f"no --gpus ({'compose: no device reservation' if job.kind == 'compose' else job.kind})"
    return None, f"{job.where}: the job facts do not say whether the launch passes --gpus"


@rule(
    NO_REQUEST,
    requires=(facts.GPU_WORKLOAD,),
    reads=(facts.setting(DEVICES),),  # CUDA_VERSION / NVIDIA_REQUIRE_CUDA: read with the Env, asked when not read
)
def no_gpu_request(ctx: Ctx) -> Iterator[Outcome]:
    job = ctx.job
    if job is None:
        return  # a launch rule: without a spec there is no launch to judge (no fact is missing)
    if job.runtime != RUNTIME_DOCKER:
        # about a Docker launch only (enroot: JOB-ENROOT-NO-GPU-DRIVER; CDI / Apptainer: gpu_injection)
        yield decided(NO_REQUEST, f"{job.where} is not a Docker launch")
        return
    asked, how = _request(job)
    if asked:
        yield decided(NO_REQUEST, f"{job.where} requests GPUs ({how}): Docker calls the toolkit's hook for them")
        return
    devices, devices_ev, why = _value(ctx, job, DEVICES)
    legacy = _legacy(ctx, job)
    state = _injects(devices, legacy)
    common = {"where": job.where, "who": job.who, "request": how}
    if asked is None:
        yield unknown(
            NO_REQUEST,
            f"{how}. Without --gpus Docker injects no GPU and no driver library (libcuda.so.1, nvidia-smi): only the "
            f"nvidia runtime (--runtime nvidia or the daemon's default-runtime) does, and only for the devices "
            f"{DEVICES} names ({_words(devices, why, legacy)}). Does the launch pass --gpus?",
        )
        return
    evidence = [Evidence("job.gpus", how, Location.file(job.path))]
    if devices_ev is not None:
        evidence.append(devices_ev)
    if state is False and job.oci_runtime != "nvidia-docker":
        # even the nvidia runtime injects nothing: decided whatever the daemon's default runtime is
        yield finding(
            ctx.matrix, NO_REQUEST, evidence, variant="no-devices", devices=_words(devices, why, legacy), **common
        )
        return
    if job.oci_runtime == "nvidia-docker":
        if state is True:
            yield decided(NO_REQUEST, f"nvidia-docker with {DEVICES}={devices}: either release injects them")
            return
        yield unknown(
            NO_REQUEST,
            f"{job.where} runs nvidia-docker: 1.x injects the driver and the GPUs NV_GPU names (all by default) "
            f"itself; 2.x adds --runtime nvidia, which injects only what {DEVICES} names "
            f"({_words(devices, why, legacy)}). Which nvidia-docker does the host have?",
        )
        return
    if job.oci_runtime == "nvidia":
        if state is True:
            yield decided(NO_REQUEST, f"--runtime nvidia with {DEVICES}={devices}: the legacy hook injects them")
            return
        yield unknown(NO_REQUEST, f"{job.where} runs the nvidia runtime without --gpus; {why or 'the devices'}")
        return
    # the daemon's default runtime decides: runc (Docker's default) injects nothing whatever the Env says
    found = finding(ctx.matrix, NO_REQUEST, evidence, devices=_words(devices, why, legacy), **common)
    yield assuming(found, _DEFAULT_RUNTIME, _RUNTIME_FACT)


def _legacy(ctx: Ctx, job: JobFacts) -> bool | None:
    """A legacy CUDA image (CUDA_VERSION set, NVIDIA_REQUIRE_CUDA not): unset NVIDIA_VISIBLE_DEVICES means all."""
    cuda, _, cuda_why = _value(ctx, job, "CUDA_VERSION")
    require, _, require_why = _value(ctx, job, "NVIDIA_REQUIRE_CUDA")
    if cuda_why or require_why:
        return None
    return bool(cuda) and not require


def _injects(devices: str | None, legacy: bool | None) -> bool | None:
    """Whether the nvidia runtime's hook injects GPUs for this NVIDIA_VISIBLE_DEVICES (None: not known)."""
    if devices is not None:
        entries = [d.strip() for d in devices.split(",") if d.strip()]
        return not (not entries or "void" in entries or devices.strip() in _NOTHING)
    return None if legacy is None else legacy


def _words(devices: str | None, why: str | None, legacy: bool | None) -> str:
    if devices is not None:
        return f"{DEVICES}={devices or '(empty)'}"
    if why:
        return why
    if legacy:
        return f"{DEVICES} unset in a legacy CUDA image (CUDA_VERSION without NVIDIA_REQUIRE_CUDA): all GPUs"
    return f"{DEVICES} is set neither by the launch nor by the image's Env"


@rule(ALLOCATION, reads=(facts.setting(DEVICES),))
def host_indices(ctx: Ctx) -> Iterator[Outcome]:
    job = ctx.job
    if job is None:
        return  # a launch rule: without a spec there is no launch to judge (no fact is missing)
    if not job.slurm:
        # Docker and Kubernetes resolve the variable against the node's own GPUs (ENV rules, triage)
        yield decided(ALLOCATION, f"{job.where} is not a Slurm step")
        return
    var = job.env_value(DEVICES)
    if var is None:
        yield decided(ALLOCATION, f"{job.where} does not set {DEVICES}")
        return
    if var.value is None:
        yield unknown(ALLOCATION, f"{job.where} passes {DEVICES} from the caller with a value the script does not show")
        return
    parsed = visible_devices.parse(var.value)
    if not parsed.ordinals:
        yield decided(ALLOCATION, f"{DEVICES}={var.value} names no GPU by index (all, none, UUIDs)")
        return
    if not job.gpus or job.gpus < 0:
        yield unknown(
            ALLOCATION,
            f"{job.where} sets {DEVICES}={var.value}: indices that nvidia-container-cli resolves among the step's "
            "GPUs (numbered from 0 inside its device cgroup); how many GPUs the step gets per node is not stated",
        )
        return
    bad = [o for o in parsed.ordinals if o >= job.gpus]
    if not bad:
        yield decided(ALLOCATION, f"{DEVICES}={var.value}: every index is below the step's {job.gpus} GPUs")
        return
    evidence = [
        Evidence(f"job.env.{DEVICES}", var.value, Location.file(job.path)),
        Evidence("job.gpus", f"{job.gpus} ({job.gpus_setting or 'the spec'})", Location.file(job.path)),
    ]
    found = finding(
        ctx.matrix,
        ALLOCATION,
        evidence,
        where=job.where,
        who=job.who,
        value=var.value,
        index=bad[0],
        gpus=job.gpus,
        last=job.gpus - 1,
    )
    yield assuming(
        found,
        "Slurm constrains the step's devices to its allocation (cgroup.conf ConstrainDevices=yes)",
        "slurm.cgroup",
    )


@rule(COMPONENT, reads=())
def cluster_component(ctx: Ctx) -> Iterator[Outcome]:
    why = cluster_workloads.infrastructure(ctx.matrix, ctx.image.reference, ctx.job)
    if why is None:
        yield decided(COMPONENT, "the container is not a cluster component the operators' releases name")
        return
    yield finding(ctx.matrix, COMPONENT, [Evidence("image.reference", ctx.image.reference)], why=why)


RULES, NEEDS, REQUIRES, READS, check = family(no_gpu_request, host_indices, cluster_component)
