"""The launch (imgcheck.job): what the job spec gives the container, checked with the image and the node.

Runs only when a spec was given (ctx.job). A fact the spec does not state is the runtime's default when the
matrix has that default with a source (Docker's and containerd's 64 MiB /dev/shm), otherwise unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..job.model import (
    BIND_NONE,
    FORM_AMBIGUOUS,
    RUNTIME_DOCKER,
    RUNTIME_ENROOT,
    RUNTIME_KUBERNETES,
    EnvVar,
    JobFacts,
)
from ..knowledge import librdmacm, rdma_consumers, visible_devices
from ..knowledge.settings import IMAGE_ENV
from ..model.env_redact import keeps as library_setting
from ..model.location import Location
from ..model.report import Evidence, EvidenceValue, Finding
from ..versions import ranges
from . import env_visible_devices, facts
from .context import Ctx
from .emit import Outcome, assuming, decided, finding, unknown

RULES = (
    "JOB-RDMA-DEVICES-NOT-EXPOSED",
    "JOB-MEMLOCK-TOO-LOW",
    "JOB-NO-IPC-LOCK",
    "JOB-SHM-TOO-SMALL",
    "JOB-ENV-OVERRIDES-IMAGE",
    "JOB-ENV-SHADOWED-BY-IMAGE",
    "JOB-RDMA-DEVICES-PARTIAL",
    "JOB-RANKS-EXCEED-GPUS",
    "JOB-PYXIS-IMAGE-NAME",
    "JOB-EFA-DEVICE-LIST-ABORT",
    "JOB-GKE-GPU-NICS-NOT-IN-POD",
    "JOB-PYXIS-CONTAINER-REUSED",
    "JOB-GPU-SUBSET-CUDA-IPC",
)
GPU_SUBSET = "JOB-GPU-SUBSET-CUDA-IPC"
PYXIS_REUSE = "JOB-PYXIS-CONTAINER-REUSED"
IPC_TABLE = "cuda_ipc_consumers"
IPC_ASKS = "ucx"  # a row whose fallback is not read: it makes the rule ask, never decide alone
GKE_NICS = "JOB-GKE-GPU-NICS-NOT-IN-POD"
EFA_ABORT = "JOB-EFA-DEVICE-LIST-ABORT"
NEEDS = {
    "nccl_features": {"duplicate_gpu_check", "multi_rank_gpu_opt_in", "cumem_host_shm"},
    "thresholds": {
        "memlock_reported_failing_kib",
        "docker_default_shm_mib",
        "containerd_default_shm_mib",
        "crio_default_shm_mib",
    },
}
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
# The RDMA rules are about whichever library of the image opens the devices (NCCL, UCX, libfabric, Open MPI, ...:
# rdma_consumers), so none of them alone is required: the node's RDMA is, and the consumers are read.
_CONSUMERS = (facts.NCCL, facts.LIBIBVERBS, facts.UCX, facts.PACKAGES, facts.NODE_RDMA)
REQUIRES = {
    "JOB-RDMA-DEVICES-NOT-EXPOSED": (facts.NODE_RDMA,),
    "JOB-MEMLOCK-TOO-LOW": (facts.NODE_RDMA,),
    "JOB-NO-IPC-LOCK": (facts.NODE_RDMA,),
    "JOB-SHM-TOO-SMALL": (facts.NCCL,),
    "JOB-ENV-OVERRIDES-IMAGE": (),
    "JOB-ENV-SHADOWED-BY-IMAGE": (),
    "JOB-RDMA-DEVICES-PARTIAL": (facts.NODE_RDMA,),
    "JOB-RANKS-EXCEED-GPUS": (),  # ranks past the GPUs fail in the framework before NCCL: NCCL only words it
    "JOB-PYXIS-IMAGE-NAME": (),
    EFA_ABORT: (facts.NODE_RDMA,),
    GKE_NICS: (),
    PYXIS_REUSE: (),
    GPU_SUBSET: (),  # any CUDA IPC user of the image (cuda_ipc_consumers), read below
}
READS = {
    "JOB-RDMA-DEVICES-NOT-EXPOSED": _CONSUMERS,
    "JOB-MEMLOCK-TOO-LOW": _CONSUMERS,
    "JOB-NO-IPC-LOCK": _CONSUMERS,
    "JOB-SHM-TOO-SMALL": (facts.NCCL,),
    "JOB-ENV-OVERRIDES-IMAGE": (facts.ANY_SETTING,),
    "JOB-ENV-SHADOWED-BY-IMAGE": (facts.ANY_SETTING,),
    "JOB-RDMA-DEVICES-PARTIAL": _CONSUMERS,
    "JOB-RANKS-EXCEED-GPUS": (facts.NCCL, facts.setting("CUDA_VISIBLE_DEVICES")),
    "JOB-PYXIS-IMAGE-NAME": (),
    EFA_ABORT: (facts.NODE_RDMA,),
    GKE_NICS: (),  # the node's machine type (its labels) and the pod spec only
    PYXIS_REUSE: (),  # the script's steps only
    # the image's CUDA IPC users (cuda_ipc_consumers: NCCL, HPC-X, CUDA-aware Open MPI, UCX), none required alone
    GPU_SUBSET: (
        facts.NCCL,
        facts.UCX,
        facts.PACKAGES,
        facts.setting("NCCL_P2P_DISABLE"),
        facts.setting("CUDA_VISIBLE_DEVICES"),
    ),
}

# Extended resources whose device plugins hand the container RDMA devices: rdma/* (Mellanox
# k8s-rdma-shared-dev-plugin), SR-IOV VFs (sriov-network-device-plugin pools, named by the operator: "sriov" by
# convention), nvidia.com/hostdev (network-operator host-device), vpc.amazonaws.com/efa (aws-efa-k8s-device-plugin:
# EFA's /dev/infiniband/uverbsN), and a DRA claim whose device class selects RDMA (job/parse.py marks it "rdma").
# Any other non-GPU resource might add devices too, so it makes exposure unknown.
_RDMA_RESOURCE_WORDS = ("rdma", "sriov", "hostdev", "efa", "infiniband", "roce")
_GPU_RESOURCES = ("nvidia.com/gpu",)
# These tables are keyed by JobFacts.runtime, which is None when the spec does not say (.get falls back).
_DEFAULT_SHM: dict[str | None, str] = {
    RUNTIME_DOCKER: "docker_default_shm_mib",
    RUNTIME_KUBERNETES: "containerd_default_shm_mib",
}
_DEFAULT_SHM_WORDS: dict[str | None, str] = {
    RUNTIME_DOCKER: "Docker's default; the spec sets no --shm-size / shm_size",
    RUNTIME_KUBERNETES: "containerd's and CRI-O's pod default; no Memory emptyDir is mounted on /dev/shm",
}


# enroot's default mount table (NVIDIA/enroot conf/mounts/10-system.fstab, the same in every release from 1.0.0
# to 4.1.2) rbinds the host's /dev and binds the host's /dev/shm into every container, Pyxis's included: the RDMA
# devices are there and /dev/shm is the host's, unless a site edits that table.
_ENROOT_DEFAULT_MOUNTS = "enroot's default mounts bind the host's /dev and /dev/shm (conf/mounts/10-system.fstab)"

# enroot binds the host's /dev unless the site sets ENROOT_RESTRICT_DEV (conf/hooks/10-devices.sh: a tmpfs /dev with a
# few nodes), and its Mellanox hook (conf/hooks/99-mellanox.sh) adds the HCAs' uverbs nodes only when
# MELLANOX_VISIBLE_DEVICES is set (not void/none): facts that give an enroot container no /dev/infiniband and no
# MELLANOX_VISIBLE_DEVICES describe that restricted setup
_ENROOT_NO_IB = (
    "the facts give the container no /dev/infiniband: enroot's site configuration restricts /dev "
    "(ENROOT_RESTRICT_DEV) and its Mellanox hook adds the HCAs only with MELLANOX_VISIBLE_DEVICES set"
)

# The first fix a finding shows is the one for the runtime the spec is for.
_DEVICE_FIX: dict[str | None, str] = {
    RUNTIME_DOCKER: "docker: run with --device /dev/infiniband (plus --cap-add IPC_LOCK and --ulimit memlock=-1)",
    RUNTIME_KUBERNETES: "Kubernetes: request an RDMA resource from the RDMA shared device plugin or the SR-IOV device "
    "plugin (e.g. rdma/<pool>: 1), or mount /dev/infiniband as a hostPath volume in a privileged pod",
    RUNTIME_ENROOT: "Slurm/Pyxis: set MELLANOX_VISIBLE_DEVICES=all in enroot's environment (its 99-mellanox hook then "
    "adds the HCAs), or --container-mounts=/dev/infiniband:/dev/infiniband",
}
_SHM_FIX: dict[str | None, str] = {
    RUNTIME_DOCKER: "docker: --shm-size=1g or more (compose: shm_size), or --ipc=host",
    RUNTIME_KUBERNETES: "Kubernetes: mount an emptyDir with medium: Memory (and a sizeLimit of a few GiB) on /dev/shm",
}


def _runs_no_gpu_rank(job: JobFacts) -> bool:
    """A Kubernetes container that requests no GPU gets none from the device plugin (an MPIJob launcher, a
    sidecar): it runs no NCCL rank, so the RDMA and /dev/shm rules do not apply to it."""
    if job.runtime != RUNTIME_KUBERNETES or job.resources is None or job.gpus:
        return False
    return not any(k in _GPU_RESOURCES for k, _ in job.resources)  # "$GPU_PER_NODE" (envsubst): some GPUs


def applies(ctx: Ctx) -> bool:
    """The launch rules run only when a spec was given (the evaluator asks before it settles their unknowns)."""
    return ctx.job is not None


def check(ctx: Ctx) -> Iterator[Outcome]:
    job = ctx.job
    if job is None:
        return  # no launch spec was given: the launch rules do not apply (applies() tells the evaluator)
    if _runs_no_gpu_rank(job):
        yield from _env(ctx)
        return
    exposed = _rdma_exposed(ctx)
    yield from _devices(ctx, exposed)
    yield from _partial_devices(ctx, exposed)
    yield from _ranks_vs_gpus(ctx)
    yield from _gpu_subset(ctx)
    yield from _pyxis_image(ctx)
    yield from _pyxis_reuse(ctx)
    yield from _efa_device_list(ctx)
    yield from _gke_gpu_nics(ctx)
    yield from _memlock(ctx, exposed)
    yield from _shm(ctx)
    yield from _env(ctx)


def _job(ctx: Ctx) -> JobFacts:
    """ctx.job for the helpers below: check() calls them only when a spec was given."""
    job = ctx.job
    assert job is not None
    return job


def _ev(ctx: Ctx, fact: str, value: EvidenceValue) -> Evidence:
    return Evidence(f"job.{fact}", value, Location.file(_job(ctx).path))


def _where_ev(ctx: Ctx) -> Evidence:
    return _ev(ctx, "container", _job(ctx).where)


def _line_ev(ctx: Ctx) -> list[Evidence]:
    """The line of the spec the container is defined on (SARIF points the alert at it)."""
    return [_ev(ctx, "line", _job(ctx).line)] if _job(ctx).line else []


def _env_conflict(ctx: Ctx, rule: str, var: EnvVar, image_value: str) -> Finding:
    """A job env value and the image's Env value for the same setting, where only one of them is in force."""
    job = _job(ctx)
    evidence = [
        _where_ev(ctx),
        *_line_ev(ctx),
        Evidence(f"job.env.{var.name}", var.value, Location.file(job.path)),
        Evidence(f"image.env.{var.name}", image_value, IMAGE_ENV),
    ]
    return finding(
        ctx.matrix,
        rule,
        evidence,
        where=job.where,
        who=job.who,
        name=var.name,
        job_value=var.value,
        image_value=image_value,
    )


def _consumers(ctx: Ctx) -> rdma_consumers.Consumers:
    """The libraries of the image that open RDMA devices (rdma_consumers rows). NCCL counts only with libibverbs in
    the image (it dlopens it); a job that turns NCCL's IB transport off (NCCL_IB_DISABLE, NCCL_NET=Socket) in an
    image with NCCL does not mean RDMA at all."""
    if ctx.ib_disabled_by is not None and ctx.nccl_present:
        # the job turned NCCL's IB off: it does not mean RDMA, whatever else (HPC-X's UCX) the image carries
        return rdma_consumers.Consumers((), ())
    if ctx.lib is None and ctx.lib_unknown is None:
        return rdma_consumers.Consumers((), ())  # no libibverbs in the image: nothing in it can open a verbs device
    found = rdma_consumers.consumers_in(ctx.matrix, ctx.image, ctx.ib_disabled_by is not None)
    if ctx.lib is None:
        kept = tuple(c for c in found.found if c.consumer != rdma_consumers.NCCL)
        found = rdma_consumers.Consumers(kept, found.unread)
    return found


def _uses_verbs(ctx: Ctx) -> bool:
    """A library of the image would open the RDMA devices: NCCL (with libibverbs), UCX, libfabric, Open MPI, ..."""
    return bool(_consumers(ctx).found)


def _passes_rdma(job: JobFacts) -> str | None:
    """The spec's own words that pass RDMA devices on purpose (--device /dev/infiniband, an RDMA resource), which
    say that the job means to use them whichever library of the image does; None: it passes none by name."""
    ib = [d for d in job.devices or () if d == "/dev/infiniband" or d.startswith("/dev/infiniband/uverbs")]
    plugged = [f"{k}: {v}" for k, v in job.resources or () if _rdma_resource(k, v)]
    return ", ".join(ib + plugged) or None


def _consumer_words(ctx: Ctx) -> tuple[str | None, str]:
    """(who pins memory with the devices, what it prints at the limit); (None, ...) when nothing says one will."""
    found = _consumers(ctx)
    generic = "Cannot allocate memory (ENOMEM) from ibv_reg_mr / ibv_create_cq"
    if found.found:
        return found.words(), found.symptom() or generic
    passed = _passes_rdma(_job(ctx))
    if passed and ctx.lib is not None:
        return f"the program that opens the devices the spec passes ({passed}) through the image's libibverbs", generic
    return None, generic


def _rdma_exposed(ctx: Ctx) -> tuple[bool | None, str]:
    """(exposed?, how or why unknown): whether the spec gives the container the host's RDMA devices."""
    job = _job(ctx)
    if job.privileged:
        return True, "privileged"
    privileged = _privileged(job)
    # Only the whole directory or uverbsN nodes let libibverbs open a device (rdma_cm, umad alone do not)
    ib = [d for d in job.devices or () if d == "/dev/infiniband" or d.startswith("/dev/infiniband/uverbs")]
    if job.runtime == RUNTIME_ENROOT:
        mellanox = job.env_value("MELLANOX_VISIBLE_DEVICES")
        if job.devices == () and mellanox is None:
            return False, _ENROOT_NO_IB  # the facts give the container no /dev/infiniband
        return True, _ENROOT_DEFAULT_MOUNTS
    devices = job.devices
    if devices is None and job.runtime == RUNTIME_KUBERNETES and job.resources is not None and job.complete:
        devices = ()  # a whole pod spec that states resources and no hostPath device has none (its default)
    if ib:
        return True, "devices " + ", ".join(ib)
    plugged = [f"{k}: {v}" for k, v in job.resources or () if _rdma_resource(k, v)]
    if plugged:
        return True, "resources " + ", ".join(plugged)
    # Docker has no extended resources (device plugins are Kubernetes'): --device and --privileged decide alone,
    # so a docker spec (or facts file) that does not state resources is not unknown for it
    resources = () if job.resources is None and job.runtime == RUNTIME_DOCKER else job.resources
    if privileged is None or devices is None or resources is None:
        if not job.complete:
            shown = "resources " + ", ".join(f"{k}: {v}" for k, v in job.resources) if job.resources else "part"
            return None, (
                f"the {job.kind} spec shows {shown} of the container, not all of it: whether it also gets RDMA "
                "devices (an RDMA resource, a hostPath /dev/infiniband, privileged) is not shown"
            )
        return None, f"a {job.kind} spec does not say which devices the container gets (the runtime decides)"
    other = [k for k, _ in resources if k not in _GPU_RESOURCES]
    if other:
        return None, f"resources {', '.join(other)} come from device plugins that may add RDMA devices"
    if job.open_flags:
        return None, f"{', '.join(job.open_flags)} may add --device or --privileged at run time"
    return False, "no /dev/infiniband device, no RDMA resource, not privileged"


def _privileged(job: JobFacts) -> bool | None:
    """Whether the container is privileged. Facts that state the devices a Docker or Kubernetes container gets but
    not `privileged` leave it at the runtime's default, false (securityContext.privileged, docker run --privileged
    are opt-in): privileged is a way to get devices, which such facts would have named."""
    if job.privileged is None and job.runtime in (RUNTIME_DOCKER, RUNTIME_KUBERNETES) and job.devices is not None:
        return False
    if job.privileged is None and job.runtime == RUNTIME_KUBERNETES and job.resources is not None and job.complete:
        return False  # a whole pod spec's device channels are resources, hostPath and privileged: it names all
    return job.privileged


def _device_fix(ctx: Ctx) -> str:
    """The first fix for missing RDMA devices: for Kubernetes, the device-plugin resource of the node's fabric
    (rdma_device_resources: EFA nodes need vpc.amazonaws.com/efa, ConnectX nodes an RDMA/SR-IOV resource)."""
    job = _job(ctx)
    if job.runtime != RUNTIME_KUBERNETES:
        return _DEVICE_FIX.get(job.runtime, _DEVICE_FIX[RUNTIME_DOCKER])
    devices = ctx.node.rdma.devices
    fabric = "efa" if devices and all(d.driver == "efa" for d in devices) else "mlx5"
    row = next((r for r in ctx.matrix.rows("rdma_device_resources") if r["fabric"] == fabric), None)
    if row is None:
        return _DEVICE_FIX[RUNTIME_KUBERNETES]
    return f"Kubernetes: {str(row['request']).format(count=len(devices))} ({row['plugin']})"


def _devices(ctx: Ctx, exposed: tuple[bool | None, str]) -> Iterator[Outcome]:
    rule = "JOB-RDMA-DEVICES-NOT-EXPOSED"
    job = _job(ctx)
    if exposed[0] is True:
        yield decided(rule, f"{job.where}: {exposed[1]}")  # whatever the image's NCCL: the devices are there
        return
    if not _uses_verbs(ctx) or ctx.node_has_rdma is not True:
        return  # NCCL or libibverbs absent, IB off, or no RDMA on the node; unknowns: the engine asks
    state, words = exposed
    if state is None:
        yield unknown(rule, f"{job.where}: {words}")
        return
    if state:
        return
    devices = ", ".join(d.name for d in ctx.node.rdma.devices if d.name) or ctx.node.rdma.stack
    net = ctx.setting("NCCL_NET")
    forced = net is not None and net.value.strip().lower() == "ib"  # NCCL matches the name case-insensitively
    evidence = [
        *([net.evidence] if net is not None and forced else []),
        _where_ev(ctx),
        *_line_ev(ctx),
        _ev(
            ctx,
            "privileged",
            job.privileged if job.privileged is not None else "not set (the runtime's default: false)",
        ),
        _ev(ctx, "devices", ", ".join(job.devices or ()) or "none"),
        _ev(ctx, "resources", ", ".join(f"{k}={v}" for k, v in job.resources or ()) or "none"),
        ctx.node_ev("rdma.devices", devices),
        *(ctx.nccl_evidence() if ctx.nccl is not None else []),
        _ev(ctx, "rdma_consumers", _consumers(ctx).words()),
    ]
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        variant="forced" if forced else None,
        where=job.where,
        who=job.who,
        devices=devices,
        runtime=job.runtime,
        setting=net.label if net is not None and forced else None,
        consumers=_consumers(ctx).words(),
        runtime_fix=_device_fix(ctx),
    )


def _efa_device_list(ctx: Ctx) -> Iterator[Outcome]:
    """libfabric's EFA provider constructs every verbs device libibverbs lists, and one it cannot construct ends the
    whole list (efa_device_list; a non-EFA device too before 2.2.0). libibverbs lists a device whose /dev node
    exists (rdma-core try_access_device), so a Kubernetes hostPath of the whole /dev/infiniband on a node with
    non-EFA HCAs lists them, while the pod's device cgroup lets it open only what the EFA device plugin added."""
    rule = EFA_ABORT
    job = _job(ctx)
    devices = ctx.node.rdma.devices
    efa = [d.name for d in devices if d.driver == "efa"]
    if not efa:
        return  # not an EFA node (or its devices are unknown: the engine asks)
    whole = "/dev/infiniband" in (job.devices or ())
    if not whole:
        return  # only the device plugin's uverbs nodes exist in the container: libibverbs lists only those
    other = [d.name or "?" for d in devices if d.driver and d.driver != "efa"]
    unsure = [d.name or "?" for d in devices if not d.driver]
    if not other:
        if unsure:
            yield unknown(rule, f"the node's devices {', '.join(unsure)}: their kernel driver (EFA or not) is unknown")
        else:
            yield decided(rule, "every RDMA device of the node is EFA")
        return
    if job.runtime != RUNTIME_KUBERNETES:
        yield unknown(
            rule,
            f"{job.where}: whether the container may open {', '.join(other)} (--device adds them to its device "
            "cgroup, a -v bind mount does not) is not in the facts",
        )
        return
    fabric = ctx.image.libfabric
    if fabric is None:
        return  # no libfabric in the image: the EFA rules say so; unknown: the engine asks
    rows = list(ctx.matrix.rows("efa_device_list"))
    version = fabric.version
    bounds = [r["first"] for r in rows[1:]] + [None]
    # an unknown release may be any row's: decided only when every row behaves alike here
    hit = [
        r
        for r, nxt in zip(rows, bounds, strict=True)
        if not version or ranges.within(version, r["first"], nxt) is not False
    ]
    newest = rows[-1]["last"] if rows else None
    newer = version is not None and newest is not None and ranges.below(newest, version) is True
    if not hit or newer:
        yield unknown(
            rule,
            f"libfabric {version or '(version unknown)'}: whether its EFA provider skips a device it cannot open is "
            f"known for releases up to {newest} (efa_device_list)",
        )
        return
    behaviours = {r["behaviour"] for r in hit}
    if behaviours == {"skip-failed"}:
        yield decided(rule, f"libfabric {version} skips a device it cannot open (efa_device_list)")
        return
    if job.privileged and behaviours == {"skip-non-efa"}:
        yield decided(rule, f"privileged: {', '.join(other)} can be opened and libfabric {version} skips non-EFA ones")
        return
    if (job.privileged and "skip-non-efa" in behaviours) or "skip-failed" in behaviours:
        yield unknown(
            rule,
            f"libfabric {version or '(version unknown)'}: the releases it may be ({', '.join(r['id'] for r in hit)}) "
            "differ on a device they cannot use (efa_device_list)",
        )
        return
    evidence = [
        _where_ev(ctx),
        *_line_ev(ctx),
        _ev(ctx, "devices", ", ".join(job.devices or ())),
        _ev(ctx, "privileged", job.privileged),
        ctx.node_ev("rdma.devices", ", ".join(f"{d.name} ({d.driver or 'driver unknown'})" for d in devices)),
        Evidence("image.libfabric.version", version, fabric.location),
    ]
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        variant="privileged" if job.privileged else None,
        where=job.where,
        who=job.who,
        other=", ".join(other),
        efa=", ".join(n or "?" for n in efa),
        libfabric=version or f"(version unknown: every release read, to {newest})",
        releases=", ".join(r["id"] for r in hit),
    )


def _memlock(ctx: Ctx, exposed: tuple[bool | None, str]) -> Iterator[Outcome]:
    job = _job(ctx)
    if job.privileged or "IPC_LOCK" in (job.cap_add or ()) or "ALL" in (job.cap_add or ()):
        # ib_umem_get skips the RLIMIT_MEMLOCK check for CAP_IPC_LOCK (linux drivers/infiniband/core/umem.c)
        for rule in ("JOB-MEMLOCK-TOO-LOW", "JOB-NO-IPC-LOCK"):
            yield decided(rule, f"{job.where}: CAP_IPC_LOCK, whatever the image")
        return
    consumer, symptom = _consumer_words(ctx)
    if consumer is None or ctx.node_has_rdma is False or exposed[0] is False:
        return  # no registration happens: no library of the image opens a device, or none is there
    memlock = job.memlock_kib
    if memlock is None and job.limits_from is not None:
        yield unknown("JOB-MEMLOCK-TOO-LOW", f"{job.where}: under Slurm the task's memlock is {job.limits_from}")
        return
    if memlock is None:
        if job.runtime in (RUNTIME_DOCKER, RUNTIME_KUBERNETES) and job.cap_add is not None and not job.open_flags:
            if job.runtime == RUNTIME_KUBERNETES and ctx.node.limits.memlock_kib == -1:
                return  # the node's jobs get an unlimited limit (node facts); nothing for the spec to add
            yield finding(
                ctx.matrix,
                "JOB-NO-IPC-LOCK",
                [
                    _where_ev(ctx),
                    *_line_ev(ctx),
                    _ev(ctx, "cap_add", ", ".join(job.cap_add) or "none"),
                    _ev(ctx, "memlock_kib", "not set by the spec"),
                    _ev(ctx, "rdma_consumers", consumer),
                ],
                where=job.where,
                who=job.who,
                runtime=job.runtime,
                reg_fn=ctx.reg_fn,
                consumers=consumer,
                symptom=symptom,
            )
        else:
            yield unknown(
                "JOB-MEMLOCK-TOO-LOW",
                f"{job.where}: the spec sets no memlock limit; the container gets "
                "its runtime's, which neither the spec nor the node facts show",
            )
        return
    if memlock < 0:
        return
    failing = ctx.matrix.threshold("memlock_reported_failing_kib")
    evidence = [_where_ev(ctx), *_line_ev(ctx), _ev(ctx, "memlock_kib", memlock), _ev(ctx, "rdma_consumers", consumer)]
    yield finding(
        ctx.matrix,
        "JOB-MEMLOCK-TOO-LOW",
        evidence,
        variant=None if memlock <= failing else "finite",
        where=job.where,
        who=job.who,
        memlock_kib=memlock,
        reg_fn=ctx.reg_fn,
        consumers=consumer,
        symptom=symptom,
    )


def _ranks(ctx: Ctx) -> tuple[int | None, str]:
    job = _job(ctx)
    if job.ranks_per_node:
        return job.ranks_per_node, "processes per node the spec starts"
    if job.gpus and job.gpus > 0:
        return job.gpus, "one rank per GPU the spec requests"
    if job.gpus == -1 and ctx.node.gpu.gpus:
        return len(ctx.node.gpu.gpus), "one rank per GPU of the node (the spec requests all)"
    return None, "the spec states neither ranks per node nor a GPU count"


def _shm(ctx: Ctx) -> Iterator[Outcome]:
    rule = "JOB-SHM-TOO-SMALL"
    job = _job(ctx)
    if job.host_ipc:
        yield decided(rule, "the host's /dev/shm (host IPC namespace)")
        return
    if ctx.nccl_present is not True:
        return  # no NCCL; NCCL unknown: the engine asks (its version does not matter here)
    off = ctx.setting("NCCL_SHM_DISABLE")
    if off and off.as_int() == 1:
        return  # NCCL does not use the shm transport
    ranks, ranks_words = _ranks(ctx)
    if ranks is not None and ranks < 2:
        return  # one rank per node: no intra-node peers, no shm segments
    if job.host_ipc or job.shm_from_host or job.runtime == RUNTIME_ENROOT:
        # the host's /dev/shm (host IPC namespace, mounted over the container's, or enroot's default
        # mounts): not a small default
        return
    size, size_words = job.shm_size_mib, job.shm_setting
    if size is not None and size < 0:
        return  # sized by the pod's memory, not a fixed small tmpfs
    if size is None:
        if not job.shm_stated:
            yield unknown(
                rule,
                f"{job.where}: the job facts do not say how the launch sets /dev/shm (--shm-size, shm_size, a Memory "
                "emptyDir, --ipc=host); give shm_size_mib (null: the launch sets none, the runtime's default applies)",
            )
            return
        if job.shm_setting is not None or job.runtime not in _DEFAULT_SHM or job.open_flags:
            yield unknown(rule, f"{job.where}: the size of /dev/shm in the container is not known from the spec")
            return
        size = float(ctx.matrix.threshold(_DEFAULT_SHM[job.runtime]))
        size_words = _DEFAULT_SHM_WORDS[job.runtime]
        if job.runtime == RUNTIME_KUBERNETES and float(ctx.matrix.threshold("crio_default_shm_mib")) != size:
            # the spec does not say whether the node runs containerd or CRI-O: a default only while they agree
            yield unknown(rule, f"{job.where}: containerd's and CRI-O's pod /dev/shm defaults differ; which runs here")
            return
    if ranks is None:
        yield unknown(rule, f"{job.where}: /dev/shm is {size:g} MiB; {ranks_words}")
        return
    need_dev_shm, need_words = _nccl_shm_need(ctx)
    if need_dev_shm is False:
        yield unknown(rule, f"{job.where}: /dev/shm is {size:g} MiB for {ranks} ranks; {need_words}")
        return
    bound = _shm_bound(ctx, ranks)
    if isinstance(bound, str):
        yield unknown(rule, f"{job.where}: /dev/shm is {size:g} MiB for {ranks} ranks; {bound}")
        return
    if size >= bound.most_mib:
        yield decided(
            rule, f"/dev/shm {size:g} MiB holds {bound.most_mib:.1f} MiB, NCCL's SHM need at its most channels"
        )
        return
    transport, transport_words = _shm_transport(ctx)
    if transport is False:
        yield decided(rule, transport_words)
        return
    if size >= bound.least_mib:
        yield unknown(
            rule,
            f"{job.where}: /dev/shm is {size:g} MiB for {ranks} ranks; NCCL's SHM transport needs "
            f"{bound.per_channel_mib:.1f} MiB per channel ({bound.segment_mib:.2f} MiB per receiving rank), so "
            f"{bound.least_mib:.1f} MiB at its least {bound.channels} channels and {bound.most_mib:.1f} MiB at "
            f"{bound.max_channels}: whether it is enough depends on the channels NCCL's topology search picks "
            "(NCCL_MAX_NCHANNELS bounds them) and on whether the GPUs use P2P instead",
        )
        return
    evidence = [
        _where_ev(ctx),
        *_line_ev(ctx),
        _ev(ctx, "shm_size_mib", f"{size:g} ({size_words})"),
        _ev(ctx, "ranks_per_node", f"{ranks} ({ranks_words})"),
        *ctx.nccl_evidence(),
        *bound.evidence,
    ]
    found = finding(
        ctx.matrix,
        rule,
        evidence,
        where=job.where,
        who=job.who,
        shm_mib=f"{size:g}",
        ranks=ranks,
        need_mib=f"{bound.least_mib:.1f}",
        segment_mib=f"{bound.segment_mib:.2f}",
        segment_how=bound.segment_how,
        channels=bound.channels,
        channels_how=bound.channels_how,
        how=size_words,
        runtime_fix=_SHM_FIX.get(job.runtime, _SHM_FIX[RUNTIME_DOCKER]),
    )
    version_words = "; ".join(w for w in (need_words if need_dev_shm is None else None, bound.assumes) if w)
    found = assuming(found, version_words or None, "image.nccl.version")
    if transport is None:
        found = assuming(found, transport_words, "node.gpu.p2p")
    yield found


@dataclass(frozen=True)
class _ShmBound:
    """What NCCL's SHM transport holds in /dev/shm for one node's ranks (catalog nccl_shm_buffers)."""

    segment_mib: float  # one receiving connection's buffers
    segment_how: str
    channels: int  # the fewest channels the communicator runs
    channels_how: str
    max_channels: int
    ranks: int
    assumes: str | None  # words a finding assumes (the NCCL release is not known)
    evidence: tuple[Evidence, ...]

    @property
    def per_channel_mib(self) -> float:
        return self.segment_mib * self.ranks  # every rank receives on each ring channel

    @property
    def least_mib(self) -> float:
        return self.per_channel_mib * self.channels

    @property
    def most_mib(self) -> float:
        return self.per_channel_mib * self.max_channels


def _shm_row(ctx: Ctx) -> tuple[dict[str, object] | None, str | None]:
    """The nccl_shm_buffers row of the image's NCCL; with its version unknown, the newest row when every row that
    derives a segment agrees on it (then the words a finding assumes)."""
    rows = list(ctx.matrix.rows("nccl_shm_buffers"))
    version = ctx.nccl.version if ctx.nccl is not None else None
    if version:
        for r in rows:
            if ranges.within(version, str(r["first"]), None) and ranges.at_least(str(r["last"]), version):
                return r, None
        newest = rows[-1] if rows else None
        if newest is not None and ranges.below(str(newest["last"]), version) is True:
            # a release after the last tag read: its buffers are assumed to be the newest row's
            return newest, f"NCCL {version} allocates as {newest['last']} does, the newest release read"
        return None, None
    known = [r for r in rows if r["recv_segment_buffers_bytes"] is not None]
    if not known or len({r["recv_segment_buffers_bytes"] for r in known}) != 1:
        return None, None
    return known[-1], f"the job's NCCL is {known[0]['first']} or later (the SHM buffers are alike from there on)"


def _shm_bound(ctx: Ctx, ranks: int) -> _ShmBound | str:
    """NCCL's /dev/shm need for `ranks` ranks on one node, from the release's buffer sizes (or the job's
    NCCL_*BUFFSIZE) and its channel bounds (or NCCL_MIN/MAX_NCHANNELS); a string says why it cannot be computed."""
    row, assumes = _shm_row(ctx)
    if row is None:
        return (
            f"NCCL {_nccl_v(ctx)}: what its SHM transport allocates per connection is derived for the releases of "
            "catalog nccl_shm_buffers only"
        )
    parts = {"LL": row["ll_bytes"], "LL128": row["ll128_bytes"], "Simple": row["simple_bytes"]}
    overrides = {"LL": "NCCL_LL_BUFFSIZE", "LL128": "NCCL_LL128_BUFFSIZE", "Simple": "NCCL_BUFFSIZE"}
    evidence: list[Evidence] = []
    how: list[str] = []
    for proto, name in overrides.items():
        s = ctx.setting(name)
        value = s.as_int() if s is not None else None
        if s is not None and value is not None and value > 0:
            parts[proto] = value
            evidence.append(s.evidence)
            how.append(f"{s.label}")
    if row["recv_segment_buffers_bytes"] is None or any(v is None for v in parts.values()):
        return f"NCCL {_nccl_v(ctx)} ({row['id']}): its per-connection segment size is not derived ({row.get('note')})"
    segment = sum(int(str(v)) for v in parts.values()) / (1 << 20)
    least, most = int(str(row["min_channels"] or 1)), int(str(row["max_channels"]))
    channels_how = f"ring channels are doubled after the topology search (NCCL {row['id']})"
    low = ctx.setting("NCCL_MAX_NCHANNELS") or ctx.setting("NCCL_MAX_NRINGS")
    if low is not None and (n := low.as_int()) is not None and n > 0:
        least, most = min(least, n), min(most, n)
        channels_how = f"{low.label} caps them"
        evidence.append(low.evidence)
    high = ctx.setting("NCCL_MIN_NCHANNELS") or ctx.setting("NCCL_MIN_NRINGS")
    if high is not None and (n := high.as_int()) is not None and n > least:
        least = min(n, most)
        channels_how = f"{high.label} asks for them"
        evidence.append(high.evidence)
    segment_how = "LL + LL128 + Simple buffers at NCCL's defaults" + (f", with {', '.join(how)}" if how else "")
    return _ShmBound(segment, segment_how, least, channels_how, most, ranks, assumes, tuple(evidence))


def _shm_transport(ctx: Ctx) -> tuple[bool | None, str]:
    """Whether the node's ranks reach each other through NCCL's SHM transport (src/transport/shm.cc): NCCL picks
    P2P first and SHM only for a pair of GPUs P2P cannot connect (NCCL_P2P_DISABLE=1, NCCL_P2P_LEVEL=LOC, GPUs
    without CUDA peer access or farther apart than NCCL's P2P level), and the network instead when
    ncclTopoCheckNet prefers it. None: which the node's GPUs do is not in the facts (its topology)."""
    off = ctx.setting("NCCL_P2P_DISABLE")
    if off is not None and (off.as_int() or 0) != 0:
        return True, f"{off.label}: NCCL's P2P transport is off, so the ranks of a node use its SHM transport"
    level = ctx.setting("NCCL_P2P_LEVEL")
    if level is not None and level.value.strip().upper() in ("LOC", "0"):
        return True, f"{level.label}: no P2P path, so the ranks of a node use NCCL's SHM transport"
    if ctx.node.gpu.p2p is False:
        return True, "the node facts say no pair of its GPUs has CUDA peer access, so NCCL uses its SHM transport"
    return None, (
        "the node's GPUs do not reach each other by CUDA P2P (PCIe across CPU sockets or beyond NCCL_P2P_LEVEL, "
        "GPUs without peer access), so NCCL's ring between them runs over its SHM transport"
    )


def _nccl_shm_need(ctx: Ctx) -> tuple[bool | None, str]:
    """Whether NCCL's SHM transport keeps its buffers in /dev/shm (nccl_features cumem_host_shm): every release
    before the row's does, and a later one does with NCCL_CUMEM_HOST_ENABLE=0 or a driver older than the row's CUDA;
    otherwise they are cuMem host memory (False, with the words), unless that allocation fails in the container.
    None: the NCCL version (or the node's driver) is unknown; the words are what a finding then assumes."""
    row = ctx.matrix.need("nccl_features", feature="cumem_host_shm")
    floor, cuda = row["nccl_min"], row["driver_cuda_min"]
    off = ctx.setting("NCCL_CUMEM_HOST_ENABLE")
    if off is not None and off.as_int() == 0:
        return True, f"{off.label}: the SHM transport's buffers are /dev/shm segments"
    newer = ctx.nccl_at_least("cumem_host_shm")
    if newer is None:
        return None, (
            f"the job's NCCL is older than {floor}, or its driver supports a CUDA below {cuda}, so NCCL's SHM "
            "transport keeps its buffers in /dev/shm (compat_matrix nccl_features cumem_host_shm)"
        )
    if not newer:
        return True, f"NCCL {_nccl_v(ctx)} (before {floor}) keeps the SHM transport's buffers in /dev/shm"
    driver_cuda = _driver_cuda(ctx)
    if driver_cuda is None:
        return None, (
            f"the node's driver supports a CUDA below {cuda}, so NCCL {_nccl_v(ctx)} keeps its SHM transport's "
            f"buffers in /dev/shm ({ctx.unknown_why('gpu.driver_version')})"
        )
    if ranges.at_least(driver_cuda, cuda) is False:
        return True, f"NCCL {_nccl_v(ctx)} on a driver for CUDA {driver_cuda} keeps the SHM buffers in /dev/shm"
    return False, (
        f"NCCL {_nccl_v(ctx)} on a driver for CUDA {driver_cuda} (>= {cuda}) puts its SHM transport's buffers in "
        "cuMem host memory, not /dev/shm, unless that allocation fails in the container (then it falls back to "
        "/dev/shm); only its proxy's small ops pool is always there (compat_matrix nccl_features cumem_host_shm)"
    )


def _nccl_v(ctx: Ctx) -> str:
    return ctx.nccl.version if ctx.nccl is not None and ctx.nccl.version else "(version unknown)"


def _driver_cuda(ctx: Ctx) -> str | None:
    """The CUDA version the node's driver supports: stated, or its branch's newest native CUDA (nvidia_driver_cuda)."""
    gpu = ctx.node.gpu
    if gpu.cuda_driver_version:
        return gpu.cuda_driver_version
    branch = ctx.driver_branch()
    row = ctx.matrix.row("nvidia_driver_cuda", driver_branch=branch) if branch else None
    return str(row["newest_cuda_native"]) if row and row.get("newest_cuda_native") else None


def _env(ctx: Ctx) -> Iterator[Outcome]:
    job = _job(ctx)
    image = ctx.image
    unread = image.unknown_reason("env")
    if unread and any(library_setting(v.name) for v in job.env):
        for rule in ("JOB-ENV-OVERRIDES-IMAGE", "JOB-ENV-SHADOWED-BY-IMAGE"):
            yield unknown(
                rule, f"{job.where} sets library variables; the image's Env, which they may replace: {unread}"
            )
        return
    if job.env_incomplete:
        yield unknown(
            "JOB-ENV-OVERRIDES-IMAGE",
            f"{job.where}: envFrom / --env-file / a shell array adds variables "
            "the spec does not show; they may override the image's NCCL/UCX Env",
        )
    for var in job.env:
        if var is not job.env_value(var.name):
            continue  # an earlier definition the later one replaces
        image_value = image.env.get(var.name)
        if image_value is None or not library_setting(var.name):
            continue  # only the libraries' settings: other values (tokens) stay out of reports (model/env_redact.py)
        if not job.wins_over_image(var.name, True):
            if var.value is not None and var.value != image_value:
                yield _env_conflict(ctx, "JOB-ENV-SHADOWED-BY-IMAGE", var, image_value)
            continue
        if var.value is None:
            yield unknown(
                "JOB-ENV-OVERRIDES-IMAGE",
                f"{job.where}: {var.name} replaces the image's "
                f"{var.name}={image_value} with a value the spec does not show",
            )
        elif var.value != image_value:
            yield _env_conflict(ctx, "JOB-ENV-OVERRIDES-IMAGE", var, image_value)


def _uverbs(devices: tuple[str, ...] | None) -> list[str] | None:
    """The uverbs nodes a spec passes one by one; None when it passes the whole /dev/infiniband (or none)."""
    if not devices or "/dev/infiniband" in devices:
        return None
    found = [d for d in devices if d.startswith("/dev/infiniband/uverbs")]
    return found or None


def _rdma_resource(name: str, value: str) -> bool:
    """A device-plugin resource or DRA claim that hands the container RDMA devices. A claim counts by what its
    device class selects (job/parse.py), never by the claim's own name."""
    if name.startswith("resourceClaim/"):
        return value == "rdma"
    # by whole name parts: "vpc.amazonaws.com/efa", "rdma/hca_shared", "nvidia.com/sriov_rdma" count,
    # "example.com/default" (which holds "efa") does not
    parts = re.split(r"[/._-]", name.lower())
    return any(part.startswith(w) for part in parts for w in _RDMA_RESOURCE_WORDS)


def _partial_devices(ctx: Ctx, exposed: tuple[bool | None, str]) -> Iterator[Outcome]:
    rule = "JOB-RDMA-DEVICES-PARTIAL"
    job = _job(ctx)
    given = _uverbs(job.devices)
    rdmacm, rdmacm_unread = librdmacm.in_image(ctx.image) if ctx.lib is not None else (None, None)
    uses = _uses_verbs(ctx) or rdmacm is not None  # an RDMA-CM application needs no NCCL or UCX to open devices
    if given is None or job.privileged or not uses or ctx.node_has_rdma is not True:
        return  # the whole directory, all of them (privileged), or nothing given: other rules speak
    if job.runtime == RUNTIME_ENROOT:
        return  # enroot's default mounts give the whole host /dev whatever the step mounts
    if job.runtime not in (RUNTIME_DOCKER, RUNTIME_KUBERNETES):
        yield unknown(rule, f"{job.where}: gives {', '.join(given)}; the runtime's own mounts may add the rest")
        return
    if any(k.startswith("resourceClaim/") or _rdma_resource(k, v) for k, v in job.resources or ()):
        yield unknown(rule, f"{job.where}: a device plugin or claim may add more RDMA devices than {', '.join(given)}")
        return
    names = [d.name for d in ctx.node.rdma.devices if d.name]
    if not names:
        yield unknown(rule, f"{job.where}: passes {', '.join(given)}; {ctx.unknown_why('rdma.devices')}")
        return
    if len(given) >= len(names):
        return
    evidence = [
        _where_ev(ctx),
        *_line_ev(ctx),
        _ev(ctx, "devices", ", ".join(job.devices or ())),
        ctx.node_ev("rdma.devices", ", ".join(names)),
    ]
    variant, behaviour, fixed = None, None, librdmacm.fixed_release(ctx.matrix)
    if rdmacm is None and rdmacm_unread and ctx.lib is not None and ctx.lib.rdma_core:
        # whether librdmacm is installed is not read; it comes from the same rdma-core as the libibverbs read
        rdmacm = librdmacm.Librdmacm(
            ctx.lib.rdma_core, f"if installed, from the rdma-core of {ctx.lib.path or 'its libibverbs'}"
        )
        behaviour = librdmacm.partial_devices(ctx.matrix, rdmacm)
        variant = "rdmacm-if-present" if behaviour == librdmacm.FAILS_ALL else None
        if variant is None:
            rdmacm = None
    elif rdmacm is not None:
        behaviour = librdmacm.partial_devices(ctx.matrix, rdmacm)
        variant = "rdmacm-fails-all" if behaviour == librdmacm.FAILS_ALL else None
    if rdmacm is not None:
        evidence.append(Evidence("image.rdma.librdmacm", f"{rdmacm.how} (rdma-core {rdmacm.release or 'not read'})"))
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        variant=variant,
        where=job.where,
        who=job.who,
        given=len(given),
        devices=", ".join(given),
        node_count=len(names),
        node_devices=", ".join(names),
        runtime_fix=_device_fix(ctx),
        rdmacm=rdmacm.release if rdmacm is not None else None,
        rdmacm_how=rdmacm.how if rdmacm is not None else None,
        rdmacm_fixed=fixed,
        rdmacm_note=_rdmacm_note(rdmacm, behaviour, fixed),
    )


def _rdmacm_note(lib: librdmacm.Librdmacm | None, behaviour: str | None, fixed: str | None) -> str:
    """What the image's librdmacm does with the devices it cannot open, for the NCCL wording of the rule."""
    if lib is None:
        return ""
    if behaviour == librdmacm.SKIPS:
        return (
            f" The image's librdmacm ({lib.how}) marks a device it cannot open dead and goes on (rdma-core {fixed} "
            "and later), so RDMA-CM applications run on the devices given too."
        )
    return (
        f" The image has librdmacm ({lib.how}) whose rdma-core release was not read: before rdma-core {fixed} one "
        "device it cannot open fails its whole device init, and every RDMA-CM call (rdma_get_devices, "
        "rdma_create_id) fails with ENODEV."
    )


def _node_gpus(ctx: Ctx) -> int | None:
    return len(ctx.node.gpu.gpus) if ctx.node.gpu.gpus else None


def _visible_gpus(ctx: Ctx) -> tuple[int | None, str | None]:
    """How many GPUs each rank of a node can pick from: the container's GPUs (the node's for a request of all),
    narrowed by CUDA_VISIBLE_DEVICES as the driver reads it (knowledge/visible_devices.py); (None, None) when not
    known. Without a count to narrow, the list's length still bounds what is visible."""
    job = _job(ctx)
    var = env_visible_devices.VAR
    s = ctx.setting(var)
    if s is not None and _per_task_list(ctx):
        # one task's list under Slurm's GPU binding: the node's ranks may each see other GPUs; the step's count decides
        return (job.gpus, job.gpus_setting) if job.gpus and job.gpus > 0 else (None, None)
    if s is None or var in (job.gpus_setting or ""):
        if job.gpus == -1:
            n = _node_gpus(ctx)
            return n, (f"{job.gpus_setting or 'all GPUs'}: the node's GPUs" if n is not None else None)
        return job.gpus, job.gpus_setting
    parsed = visible_devices.parse(s.value)
    base, base_how, _ = env_visible_devices.process_gpus(ctx)
    if base is not None:
        return len(parsed.visible_with(base)) + len(parsed.uuids), f"{s.name}={s.value}, where {base_how}"
    return len(parsed.ordinals) + len(parsed.uuids), f"{s.name}={s.value} lists no more"


def _ranks_vs_gpus(ctx: Ctx) -> Iterator[Outcome]:
    """Ranks per node against the GPUs each node's ranks can see. Fewer ranks than GPUs is no failure (one
    process may drive several GPUs: torchrun under one Slurm task), so only more ranks than GPUs is judged.
    The failure does not wait for NCCL: a launcher numbers its ranks 0..n-1 per node (LOCAL_RANK) and a training
    script selects cuda:LOCAL_RANK, which does not exist past the visible GPUs ('invalid device ordinal'); a script
    that wraps the rank around instead puts two ranks on one GPU, which NCCL refuses from the release in the
    matrix (duplicate_gpu_check)."""
    rule = "JOB-RANKS-EXCEED-GPUS"
    job = _job(ctx)
    ranks = job.ranks_per_node
    if job.gpus == 0 or not (ctx.nccl is not None or ctx.gpu_image or job.gpus or ctx.setting("CUDA_VISIBLE_DEVICES")):
        return  # a container without GPUs, or nothing says the ranks use one: no GPU for a rank to miss
    if job.ranks_follow_gpus:
        return  # one process per GPU the container sees (torchrun --nproc-per-node gpu): none share one
    if ranks is None:
        yield unknown(
            rule,
            f"{job.where}: the spec does not say how many processes a node runs "
            f"({job.ranks_setting or 'the command it starts decides: torchrun --nproc-per-node, mpirun -np'})",
        )
        return
    if ranks < 2:
        return  # one process per node cannot share a GPU with another
    gpus, gpus_how = _visible_gpus(ctx)
    if gpus is None:
        why = (
            f"{ranks} ranks per node on all of the node's GPUs; {ctx.unknown_why('gpu.gpus')}"
            if job.gpus == -1
            else f"{ranks} ranks per node; the spec does not say how many GPUs a node's container gets"
        )
        if ctx.setting(env_visible_devices.VAR) is not None and _per_task_list(ctx):
            why = f"{ranks} ranks per node; {_PER_TASK_WORDS} and how many GPUs the step gets per node is not stated"
        yield unknown(rule, f"{job.where}: {why}")
        return
    if gpus == 0 or ranks <= gpus:
        if gpus and ctx.nccl is None:  # decided on the launch's counts: the NCCL version would not change it
            yield decided(rule, f"{ranks} ranks per node on {gpus} GPUs: none shares one")
        return  # no GPU at all is ENV-CUDA-VISIBLE-DEVICES-* or a CPU job's, not ranks sharing one
    newer = ctx.nccl_at_least("multi_rank_gpu_opt_in")
    optin = ctx.setting("NCCL_MULTI_RANK_GPU_ENABLE")
    if newer and optin is not None and optin.as_int() == 1:
        return  # allowed by NCCL from that release (NVLS off)
    nccl_refuses = ctx.nccl_at_least("duplicate_gpu_check") is True
    evidence = [
        _where_ev(ctx),
        *_line_ev(ctx),
        _ev(ctx, "ranks_per_node", f"{ranks} ({job.ranks_setting or 'the spec'})"),
        _ev(ctx, "gpus", f"{gpus} ({gpus_how or 'the spec'})"),
        *(ctx.nccl_evidence() if ctx.nccl is not None else []),
    ]
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        where=job.where,
        who=job.who,
        ranks=ranks,
        gpus=gpus,
        ranks_how=job.ranks_setting or "the spec",
        gpus_how=gpus_how or "the spec",
        variant=("opt-in" if newer else None) if nccl_refuses else "ordinal",
        nccl=_nccl_words(ctx),
    )


def _nccl_words(ctx: Ctx) -> str:
    if ctx.nccl is None:
        return "no NCCL the image shows" if ctx.nccl_present is False else "an NCCL the image facts do not show"
    return f"NCCL {ctx.nccl.version}" if ctx.nccl.version else "an NCCL whose version is not known"


def _pyxis_image(ctx: Ctx) -> Iterator[Outcome]:
    job = _job(ctx)
    if job.runtime == RUNTIME_ENROOT and not job.image:
        why = next((n for n in job.notes if "container-image" in n), "the step names no image the script decides")
        yield unknown("JOB-PYXIS-IMAGE-NAME", f"{job.where}: {why}")
        return
    if job.image_form != FORM_AMBIGUOUS or not job.image:
        return
    name = job.image.removeprefix("docker://")
    head = name.split("/", 1)[0]
    if "@" in head:
        name = name.split("@", 1)[1]  # USER@REGISTRY/...
    registry, _, path = name.partition("/")
    yield finding(
        ctx.matrix,
        "JOB-PYXIS-IMAGE-NAME",
        [_where_ev(ctx), *_line_ev(ctx), _ev(ctx, "image", job.image)],
        where=job.where,
        who=job.who,
        image=name,
        registry=registry,
        path=path,
    )


# The node labels that name a GKE node's machine type and accelerator (set by GKE on every node)
_MACHINE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


def _gke_row(ctx: Ctx) -> dict[str, object] | None:
    labels = ctx.node.labels
    machine = next((labels[k] for k in _MACHINE_LABELS if labels.get(k)), None)
    accelerator = labels.get(_ACCELERATOR_LABEL)
    for row in ctx.matrix.rows("gke_gpudirect"):
        if machine == row["machine_type"] or (accelerator and accelerator == row["accelerator"]):
            return dict(row)
    return None


def _gke_gpu_nics(ctx: Ctx) -> Iterator[Outcome]:
    """GKE's GPUDirect-TCPX/TCPXO machine types put their GPU NICs (eth1..ethN) in the host network namespace and in
    VPCs of their own: a pod reaches them with hostNetwork: true or through multi-networking, one pod network per NIC
    (gke_gpudirect). A GPU pod with neither has only eth0: the TCPX(O) daemon's GPU/NIC detection disagrees with
    CUDA's and it exits, and NCCL runs between nodes over TCP on eth0."""
    rule = GKE_NICS
    job = _job(ctx)
    if job.runtime != RUNTIME_KUBERNETES or not job.gpus:
        return  # not a pod, or a container without GPUs (a launcher, a sidecar)
    row = _gke_row(ctx)
    if row is None:
        return  # not a GKE GPUDirect-TCPX(O) machine type (or the node's labels do not say)
    nics = int(str(row["gpu_nics"]))
    if job.host_network:
        yield decided(rule, f"{job.where}: hostNetwork gives the pod the machine's {nics} GPU NICs")
        return
    networks = job.pod_networks
    if networks is None and job.host_network is False:
        networks = ()  # facts that state the pod's network placement and name no pod network attach none
    if networks is None:
        yield unknown(
            rule,
            f"{job.where} on a {row['machine_type']} node: whether the pod is in the host network or gets the "
            f"{nics} GPU NICs as pod networks (the networking.gke.io/interfaces annotation) is not in the facts",
        )
        return
    if len(networks) >= nics:
        yield decided(rule, f"{job.where}: {len(networks)} pod networks ({', '.join(networks)}) for {nics} GPU NICs")
        return
    evidence = [
        _where_ev(ctx),
        *_line_ev(ctx),
        _ev(ctx, "host_network", job.host_network if job.host_network is not None else "not set (false)"),
        _ev(ctx, "pod_networks", ", ".join(networks) or "none"),
        ctx.node_ev("labels", f"{row['machine_type']} ({row['transport']}, {nics} GPU NICs)"),
    ]
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        variant="some" if networks else None,
        where=job.where,
        who=job.who,
        machine=row["machine_type"],
        transport=row["transport"],
        nics=nics,
        given=len(networks),
        networks=row["networks"],
        daemon=row["daemon"] or "the transport's daemon",
        env_prefix=row["env_prefix"] or "the plugin's",
    )


def _pyxis_reuse(ctx: Ctx) -> Iterator[Outcome]:
    """A Pyxis step naming a container (--container-name) that already exists uses it: the image is not imported
    again, and while the step that made it still runs, this one joins its namespaces and imports that process's
    environment over its own (pyxis_slurmstepd.c spank_import_container_env; --container-env names are kept)."""
    rule = PYXIS_REUSE
    job = _job(ctx)
    if job.runtime != RUNTIME_ENROOT or not job.container:
        return  # not a named Pyxis container
    if job.container_reuse == "new":
        yield decided(rule, f"{job.where}: --container-name {job.container}:create makes a new container")
        return
    if job.container_reuse is None:
        yield unknown(
            rule,
            f"{job.where}: whether a container named {job.container} already exists on the node (a named container "
            "outlives its job under Pyxis' default container_scope=global; then its filesystem is used and the image "
            "not imported) is not in the script",
        )
        return
    if not job.reuse_conflicts:
        yield decided(rule, f"{job.where}: reuses {job.container} with the same image and settings as the step before")
        return
    names = [c for c in job.reuse_conflicts if c != "--container-image"]
    evidence = [
        _where_ev(ctx),
        *_line_ev(ctx),
        _ev(ctx, "container_name", job.container),
        _ev(ctx, "reuse_conflicts", ", ".join(job.reuse_conflicts)),
    ]
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        variant=None if names else "image",
        where=job.where,
        who=job.who,
        name=job.container,
        settings=", ".join(names) or "none",
        image=job.image or "its image",
    )


_PER_TASK_WORDS = (
    "under Slurm each task's CUDA_VISIBLE_DEVICES is set by the step's GPU binding (srun --gpu-bind; --gpus-per-task "
    "and --ntasks-per-gpu bind each task to its own GPUs), so the value given is one task's view, not the GPUs every "
    "rank of the node shares"
)


def _per_task_list(ctx: Ctx) -> bool:
    """Whether CUDA_VISIBLE_DEVICES, as given, may be one task's own list: a Slurm step that does not unbind its
    GPUs (--gpu-bind=none) and starts more than one task per node."""
    job = _job(ctx)
    return job.slurm and job.gpu_bind != BIND_NONE and (job.ranks_per_node or 0) > 1


def _ipc_consumers(ctx: Ctx) -> tuple[rdma_consumers.Consumers, str | None]:
    """Who in the image maps a peer GPU's memory by CUDA IPC (cuda_ipc_consumers), and what is not read."""
    found = rdma_consumers.consumers_in(ctx.matrix, ctx.image, False, table=IPC_TABLE)
    off = ctx.setting("NCCL_P2P_DISABLE")
    if off is not None and (off.as_int() or 0) != 0:
        kept = tuple(c for c in found.found if c.consumer != rdma_consumers.NCCL)
        found = rdma_consumers.Consumers(kept, found.unread)  # NCCL's P2P transport is off
    unread = list(found.unread)
    if ctx.image.unknown_reason("packages"):
        unread.append(f"packages (a CUDA-aware Open MPI, UCX with CUDA): {ctx.image.unknown_reason('packages')}")
    return found, "; ".join(unread) or None


def _task_gpus(ctx: Ctx) -> tuple[int | None, str]:
    """GPUs one Slurm task sees under per-task binding: its CUDA_VISIBLE_DEVICES list, else the step's GPUs per node
    shared out over its tasks (--gpus-per-task)."""
    job = _job(ctx)
    s = ctx.setting(env_visible_devices.VAR)
    if s is not None:
        parsed = visible_devices.parse(s.value)
        return len(parsed.ordinals) + len(parsed.uuids), f"{s.name}={s.value}"
    if job.gpus and job.gpus > 0 and job.ranks_per_node:
        return max(1, job.gpus // job.ranks_per_node), job.gpus_setting or "the spec"
    return None, "how many GPUs each task gets is not stated"


def _gpu_subset(ctx: Ctx) -> Iterator[Outcome]:
    """Ranks of one node that each see only their own GPUs: containers side by side, or Slurm tasks bound to their
    GPUs. A library that maps a peer rank's GPU buffers by CUDA IPC (cuda_ipc_consumers) needs that GPU visible:
    NCCL built with CUDA 10.1 or later still selects its P2P transport for a peer GPU it cannot see (p2pCanConnect)
    and fails in CUDA IPC (NVIDIA/nccl#324); Open MPI's smcuda BTL compares device ordinals, takes two ranks that
    each call their GPU 0 for one GPU, and fails to open the peer's memory ('Failed to register remote memory')."""
    rule = GPU_SUBSET
    job = _job(ctx)
    if job.slurm:
        yield from _task_subset(ctx)
        return
    if job.runtime not in (RUNTIME_DOCKER, RUNTIME_KUBERNETES):
        return  # on the host without Slurm the ranks see the node's GPUs (CUDA_VISIBLE_DEVICES rules speak)
    node_gpus, mine = _node_gpus(ctx), job.gpus
    if mine == 0:
        yield decided(rule, f"{job.where} gets no GPU: no CUDA IPC between its ranks")
        return
    if mine == -1:
        yield decided(rule, f"{job.where}: the container gets all the node's GPUs")
        return
    if not mine or node_gpus is None:
        return  # how many GPUs it gets (or the node has) is not known: the engine asks
    if mine >= node_gpus:
        yield decided(rule, f"{job.where}: the container sees all {node_gpus} GPUs of the node")
        return
    words = f"{job.where} sees {mine} of the node's {node_gpus} GPUs ({job.gpus_setting or 'the spec'})"
    if job.containers_per_node is None:
        yield unknown(
            rule,
            f"{words}; whether other ranks of the job run in other containers on this node (then a CUDA IPC user "
            "such as NCCL's P2P transport or Open MPI's smcuda maps GPUs this container does not see, and fails) "
            "is not in the spec",
        )
        return
    if job.containers_per_node <= 1:
        yield decided(rule, f"{words}; no other container of the job shares the node")
        return
    yield from _subset_outcome(
        ctx,
        words,
        [
            _ev(ctx, "gpus", f"{mine} ({job.gpus_setting or 'the spec'})"),
            _ev(ctx, "containers_per_node", job.containers_per_node),
            ctx.node_ev("gpu.gpus", node_gpus),
        ],
        {"gpus": mine, "node_gpus": node_gpus, "containers": job.containers_per_node},
        None,
    )


def _task_subset(ctx: Ctx) -> Iterator[Outcome]:
    """Slurm tasks of one node bound to their own GPUs (srun --gpu-bind, implied by --gpus-per-task)."""
    rule = GPU_SUBSET
    job = _job(ctx)
    ranks = job.ranks_per_node
    if job.gpu_bind == BIND_NONE:
        yield decided(rule, f"{job.where}: --gpu-bind=none: every task sees all the step's GPUs of its node")
        return
    if not ranks or ranks < 2:
        return  # one task per node (or not stated: the ranks rule asks) has no peer task on its node
    if job.gpu_bind is None and ctx.setting(env_visible_devices.VAR) is None:
        # no --gpus-per-task / --ntasks-per-gpu / --gpu-bind: every task sees all the step's GPUs of its node
        yield decided(rule, f"{job.where}: the step binds no GPU to a task (srun's default: each sees all of them)")
        return
    per_task, how = _task_gpus(ctx)
    if per_task is None:
        return  # neither a list nor a count per task: nothing to compare (the ranks rule asks for the count)
    if job.gpus and job.gpus > 0 and per_task >= job.gpus:
        yield decided(rule, f"{job.where}: each task sees all {job.gpus} GPUs the step gets per node")
        return
    words = f"{job.where} starts {ranks} tasks per node; one task sees {per_task} GPU(s) ({how})"
    if job.gpu_bind is None:
        # the list may be every task's (all share those GPUs) or one task's (each has its own): not decided
        consumers, _ = _ipc_consumers(ctx)
        who = (
            consumers.words() or "a CUDA IPC user of the image (NCCL's P2P transport, Open MPI's smcuda, UCX cuda_ipc)"
        )
        yield unknown(
            rule,
            f"{words}; {_PER_TASK_WORDS}. If the step binds GPUs per task (--gpus-per-task, --gpu-bind), each rank "
            f"sees only its own GPU and {who} cannot map a peer rank's GPU memory (CUDA IPC; Open MPI: 'Failed to "
            "register remote memory'): is the step's GPU binding per task?",
        )
        return
    yield from _subset_outcome(
        ctx,
        words,
        [
            _ev(ctx, "gpu_bind", f"{job.gpu_bind} ({job.gpus_setting or '--gpu-bind'})"),
            _ev(ctx, "ranks_per_node", ranks),
        ],
        {"gpus": per_task, "node_gpus": job.gpus or per_task * ranks, "containers": ranks},
        "slurm",
    )


def _subset_outcome(
    ctx: Ctx, words: str, evidence: list[Evidence], counts: dict[str, int], variant: str | None
) -> Iterator[Outcome]:
    """The split is decided: a finding when the image carries a CUDA IPC user that fails on it, a question when
    whether it carries one is not read, nothing found otherwise."""
    rule = GPU_SUBSET
    job = _job(ctx)
    consumers, unread = _ipc_consumers(ctx)
    deciding = [c for c in consumers.found if c.consumer != IPC_ASKS]
    if not deciding:
        if consumers.found or unread:
            asked = consumers.words() or unread
            yield unknown(rule, f"{words}; whether a library of the image maps peer GPU memory by CUDA IPC: {asked}")
            return
        yield decided(rule, f"{words}; the image has no library that maps a peer GPU's memory by CUDA IPC")
        return
    found = rdma_consumers.Consumers(tuple(deciding), ())
    yield finding(
        ctx.matrix,
        rule,
        [_where_ev(ctx), *_line_ev(ctx), *evidence, _ev(ctx, "cuda_ipc_consumers", found.words())],
        variant=variant,
        where=job.where,
        who=job.who,
        consumers=found.words(),
        symptom=found.symptom() or "a CUDA IPC error (invalid argument / invalid device context)",
        nccl=_nccl_words(ctx),
        **counts,
    )
