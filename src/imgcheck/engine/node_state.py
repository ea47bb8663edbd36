"""Node state a job's start depends on (node/node_state.py): Yama's ptrace_scope against UCX's CMA transport, /dev/shm's
mode against shared-memory transports, nouveau holding the GPU, IMEX channel devices, MIG without capability devices.

Each rule decides when its node fact is known and asks (naming the fact) when the fact matters and is not known.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..model.report import Evidence
from ..versions.ecosystems import numeric_tuple
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown
from .node_only import node_only

YAMA_CMA = "NODE-YAMA-PTRACE-CMA"
SHM = "NODE-SHM-NOT-WRITABLE"
NOUVEAU = "NODE-NOUVEAU-LOADED"
IMEX = "NODE-IMEX-CHANNEL-MISSING"
MIG_CAPS = "NODE-MIG-NO-CAP-DEVICES"
DOCKER_RUNTIME = "NODE-DOCKER-DEFAULT-RUNTIME"
DKMS_HEADERS = "NODE-DKMS-NO-HEADERS"
NVIDIA_RUNTIMES = ("nvidia", "nvidia-container-runtime")
UCX_HANDLES = "ucx_cma_ptrace_scope_handled"  # thresholds: first UCX release whose cma md reads ptrace_scope
IMEX_VAR = "NVIDIA_IMEX_CHANNELS"
_SHM_NEEDED = 0o1777  # tmpfs default for /dev/shm: everyone may create, only the owner may remove (sticky)
_HOST_RUNTIMES = ("bare-metal",)


@rule(YAMA_CMA, requires=(facts.UCX,), reads=(facts.YAMA_SCOPE,), needs={"thresholds": {UCX_HANDLES}})
def yama_cma(ctx: Ctx) -> Iterator[Outcome]:
    """UCX's cma transport moves intra-node data with process_vm_readv/writev, which the kernel permits only to a process
    that may ptrace the peer (mm/process_vm_access.c, PTRACE_MODE_ATTACH_REALCREDS). Yama scope 1 limits that to
    descendants, so sibling ranks get EPERM. From the release in thresholds ucx_cma_ptrace_scope_handled on, UCX reads
    ptrace_scope at init: at 1 it calls prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY), at 2 it needs CAP_SYS_PTRACE, at 3 it
    disables cma; before it, cma is used whatever the scope and fails at run time."""
    ucx = ctx.image.ucx
    if ucx is None:
        return  # no UCX: the rule does not apply; UCX not read: the engine asks (the rule REQUIRES it)
    scope = ctx.node.state.yama_ptrace_scope
    first = str(ctx.matrix.need("thresholds", key=UCX_HANDLES)["value"])
    if scope == 0:
        yield decided(YAMA_CMA, "kernel.yama.ptrace_scope is 0: ranks of one user may read each other's memory")
        return
    if not ucx.version:
        return  # the engine asks for UCX's version
    if numeric_tuple(ucx.version) >= numeric_tuple(first):
        yield decided(
            YAMA_CMA,
            f"UCX {ucx.version} reads ptrace_scope at init (from {first}): it allows its peers with prctl at scope 1, "
            "and turns cma off where the scope forbids it",
        )
        return
    if scope is None:
        yield unknown(
            YAMA_CMA,
            f"UCX {ucx.version} uses its cma transport whatever Yama allows: what is the node's kernel.yama.ptrace_scope "
            "(/proc/sys/kernel/yama/ptrace_scope; node.state.yama_ptrace_scope)?",
            (facts.YAMA_SCOPE.name,),
        )
        return
    ev = [ctx.node_ev("state.yama_ptrace_scope", scope), *_ucx_ev(ctx)]
    yield finding(ctx.matrix, YAMA_CMA, ev, node=ctx.node.name, scope=scope, ucx=ucx.version, first=first)


def _ucx_ev(ctx: Ctx) -> list[Evidence]:
    ucx = ctx.image.ucx
    return [Evidence("image.ucx.version", ucx.version, ucx.location)] if ucx is not None else []


def _uses_host_shm(ctx: Ctx) -> bool | None:
    """Whether the job's processes see the node's own /dev/shm (None: no launch spec says)."""
    job = ctx.job
    if job is None:
        return None
    if job.runtime in _HOST_RUNTIMES or job.host_ipc or job.shm_from_host:
        return True
    if job.runtime in ("docker", "kubernetes"):
        return False  # the runtime mounts a tmpfs of its own (Docker: mode 1777, shm-size 64 MiB)
    return None


@rule(SHM, reads=(facts.NCCL, facts.SHM_MODE))
def shm_not_writable(ctx: Ctx) -> Iterator[Outcome]:
    """NCCL's SHM transport, PyTorch's shared-memory tensors and MPI's sm/vader create files with shm_open(3) in /dev/shm;
    without write permission for the job's user shm_open fails with EACCES ('Call to shm_open failed : Permission
    denied' in NCCL's shm.h/shmutils.cc) and NCCL init ends in 'unhandled system error'."""
    if not node_only(ctx) and ctx.image.nccl == () and not ctx.image.unknown_reason("nccl"):
        yield decided(SHM, "the image ships no NCCL")
        return
    host = _uses_host_shm(ctx)
    if host is False:
        yield decided(SHM, "the container gets its own /dev/shm from its runtime, not the node's")
        return
    mode = ctx.node.state.shm_mode
    if mode is None:
        return  # the engine asks for /dev/shm's mode
    if mode != "absent" and int(mode, 8) & _SHM_NEEDED == _SHM_NEEDED:
        yield decided(SHM, f"/dev/shm is mode {mode}: every user may create files in it")
        return
    where = (
        "the job runs on the node's /dev/shm"
        if host
        else "jobs that use the node's /dev/shm (bare metal, Slurm, --ipc=host)"
    )
    yield finding(ctx.matrix, SHM, [ctx.node_ev("state.shm_mode", mode)], node=ctx.node.name, mode=mode, where=where)


@rule(NOUVEAU, reads=(facts.GPU_DRIVER, facts.NOUVEAU_LOADED))
def nouveau_loaded(ctx: Ctx) -> Iterator[Outcome]:
    """nouveau binds NVIDIA GPUs when it loads first; nvidia.ko then cannot claim them (the driver installation guide
    requires disabling nouveau: 'the Nouveau drivers are loaded ... the NVIDIA driver cannot be installed/used')."""
    gpu = ctx.node.gpu
    if gpu.driver_version is not None or gpu.kernel_module is not None:
        yield decided(NOUVEAU, "the NVIDIA kernel driver is loaded on the node")
        return
    loaded = ctx.node.state.nouveau_loaded
    if loaded is None:
        yield unknown(
            NOUVEAU,
            "no NVIDIA driver is loaded: is nouveau loaded instead (lsmod | grep nouveau; node.state.nouveau_loaded)?",
            (facts.NOUVEAU_LOADED.name,),
        )
        return
    if not loaded:
        yield decided(NOUVEAU, "nouveau is not loaded")
        return
    blacklisted = ctx.node.state.nouveau_blacklisted
    ev = [ctx.node_ev("state.nouveau_loaded", True), ctx.node_ev("state.nouveau_blacklisted", blacklisted)]
    variant = "blacklisted" if blacklisted else None
    yield finding(ctx.matrix, NOUVEAU, ev, variant=variant, node=ctx.node.name)


@rule(IMEX, reads=(facts.IMEX_CHANNELS, *facts.each_setting(IMEX_VAR)))
def imex_channel_missing(ctx: Ctx) -> Iterator[Outcome]:
    """A job that asks for IMEX channels (NVIDIA_IMEX_CHANNELS) gets /dev/nvidia-caps-imex-channels/channel<N> from the
    toolkit; CUDA's fabric-handle allocations (cuMemCreate with CU_MEM_HANDLE_TYPE_FABRIC, multi-node NVLink) fail with
    'operation not permitted' without an accessible channel device (IMEX guide, 'IMEX channels')."""
    job = ctx.job
    asked = job.env_value(IMEX_VAR) if job is not None else None
    value = asked.value if asked is not None else ctx.image.env.get(IMEX_VAR)
    if value is None:
        if ctx.image.unknown_reason("env") and facts.setting(IMEX_VAR).state(ctx) != facts.State.ABSENT:
            return  # whether the image asks is not known: the engine asks
        yield decided(IMEX, f"the job does not ask for IMEX channels ({IMEX_VAR} is not set)")
        return
    if value.strip().lower() in ("", "none", "void"):
        yield decided(IMEX, f"{IMEX_VAR}={value}: no IMEX channel is asked for")
        return
    channels = ctx.node.state.imex_channels
    if channels is None:
        yield unknown(
            IMEX,
            f"the job sets {IMEX_VAR}={value}: does the node have /dev/nvidia-caps-imex-channels/channel<N> "
            "(node.state.imex_channels)?",
            (facts.IMEX_CHANNELS.name,),
        )
        return
    if channels:
        yield decided(IMEX, f"the node has IMEX channel devices: {', '.join(channels)}")
        return
    registered = ctx.node.state.imex_registered
    ev = [ctx.node_ev("state.imex_channels", "none"), ctx.node_ev("state.imex_registered", registered)]
    yield finding(
        ctx.matrix, IMEX, ev, variant="no_driver" if registered is False else None, node=ctx.node.name, value=value
    )


@rule(MIG_CAPS, reads=(facts.MIG_INSTANCES, facts.NVIDIA_CAPS))
def mig_no_cap_devices(ctx: Ctx) -> Iterator[Outcome]:
    """A MIG device is opened through its capability's device node /dev/nvidia-caps/nvidia-cap<N> (MIG user guide,
    'Device Nodes and Capabilities'); nvidia-modprobe creates them. Without them CUDA and NVML cannot use the instances."""
    if not ctx.gpu_image and not any(ctx.image.unknown_reason(k) for k in ("nccl", "cuda", "packages")):
        yield decided(
            MIG_CAPS, "the image runs no GPU code (no CUDA, NCCL or GPU framework read): it opens no MIG device"
        )
        return
    instances = ctx.node.mig.gpu_instances
    if instances is None:
        return  # the engine asks whether MIG instances exist
    if not instances:
        yield decided(MIG_CAPS, "no MIG GPU instance exists on the node")
        return
    caps = ctx.node.state.nvidia_caps
    if caps is None:
        return  # the engine asks for /dev/nvidia-caps
    if caps:
        yield decided(MIG_CAPS, f"/dev/nvidia-caps has {len(caps)} capability device(s)")
        return
    count = sum(instances.values())
    ev = [ctx.node_ev("mig.gpu_instances", count), ctx.node_ev("state.nvidia_caps", "none")]
    yield finding(ctx.matrix, MIG_CAPS, ev, node=ctx.node.name, instances=count)


@rule(
    DOCKER_RUNTIME,
    reads=(facts.DOCKER_DEFAULT_RUNTIME, facts.CUDA, facts.NCCL, *facts.each_setting("NVIDIA_VISIBLE_DEVICES")),
)
def docker_default_runtime(ctx: Ctx) -> Iterator[Outcome]:
    """The legacy NVIDIA runtime (nvidia-docker2 / nvidia-container-runtime) injects the driver only into containers
    it starts. A container Docker starts with its default runtime runc, without --gpus (Docker's own hook request), gets
    no driver libraries or devices. The kubelet through Docker (dockershim, cri-dockerd) cannot name a runtime per pod,
    so the device plugin's README requires nvidia as Docker's default runtime."""
    job = ctx.job
    if job is None or job.runtime not in ("docker", "kubernetes"):
        yield decided(DOCKER_RUNTIME, "the job is not started by Docker or Kubernetes")
        return
    if job.runtime == "docker" and (job.oci_runtime or job.gpus is not None):
        how = f"--runtime {job.oci_runtime}" if job.oci_runtime else "--gpus"
        yield decided(DOCKER_RUNTIME, f"the docker launch asks for the GPU itself ({how})")
        return
    if job.runtime == "docker" and not (ctx.gpu_image or job.env_value("NVIDIA_VISIBLE_DEVICES")):
        if ctx.image.unknown_reason("cuda") or ctx.image.unknown_reason("nccl"):
            return  # whether the image uses the GPU is not known: the engine asks
        yield decided(DOCKER_RUNTIME, "the container asks for no GPU")
        return
    default = ctx.node.state.docker_default_runtime
    if default is None:
        return  # the engine asks for Docker's default runtime
    if default in NVIDIA_RUNTIMES:
        yield decided(DOCKER_RUNTIME, f"Docker's default runtime is {default}")
        return
    registered = ctx.node.state.docker_runtimes or ()
    ev = [
        ctx.node_ev("state.docker_default_runtime", default),
        ctx.node_ev("state.docker_runtimes", ", ".join(registered) or "none"),
    ]
    variant = "kubernetes" if job.runtime == "kubernetes" else None
    yield finding(ctx.matrix, DOCKER_RUNTIME, ev, variant=variant, node=ctx.node.name, default=default)


@rule(DKMS_HEADERS, reads=(facts.KERNEL, facts.DKMS, facts.KERNEL_HEADERS))
def dkms_no_headers(ctx: Ctx) -> Iterator[Outcome]:
    """DKMS builds a module for a kernel from that kernel's build tree (/lib/modules/<release>/build); for a kernel without
    it, dkms autoinstall stops ('Your kernel headers for kernel <release> cannot be found'), so the DKMS-built GPU or
    RDMA modules are missing after a kernel change."""
    release = ctx.node.kernel.release
    builds = ctx.node.dkms
    if builds is None and ctx.node.gpu.driver_version:
        # the failure is a module missing at boot; the driver is loaded now, so this boot has what the job needs
        yield decided(DKMS_HEADERS, f"the NVIDIA driver {ctx.node.gpu.driver_version} is loaded for the running kernel")
        return
    if not release or builds is None:
        return  # the engine asks for the kernel release and the DKMS builds
    other = sorted({b.name for b in builds if b.name and b.kernel and b.kernel != release})
    mine = {b.name for b in builds if b.kernel == release}
    missing = [name for name in other if name not in mine]
    if not missing:
        yield decided(
            DKMS_HEADERS, f"every DKMS module has a build for the running kernel {release} (or there is none)"
        )
        return
    headers = ctx.node.state.kernel_headers
    if headers is None:
        return  # the engine asks for the build tree
    if headers:
        yield decided(DKMS_HEADERS, f"the build tree of {release} is installed: dkms can build {', '.join(missing)}")
        return
    ev = [ctx.node_ev("kernel.release", release), ctx.node_ev("state.kernel_headers", False)]
    ev += [ctx.node_ev(f"dkms.{name}", "no build for the running kernel") for name in missing]
    yield finding(ctx.matrix, DKMS_HEADERS, ev, node=ctx.node.name, release=release, modules=", ".join(missing))


RULES, NEEDS, REQUIRES, READS, check = family(
    yama_cma,
    shm_not_writable,
    nouveau_loaded,
    imex_channel_missing,
    mig_no_cap_devices,
    docker_default_runtime,
    dkms_no_headers,
)
