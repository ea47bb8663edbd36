"""What a launch spec states about one container of one workload. None everywhere means "the spec does not say".

A spec never shows the runtime's defaults (Docker's 64 MiB /dev/shm, the daemon's memlock limit): those are
applied by the engine from the matrix, with their sources, so the facts stay what the file says.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RUNTIME_DOCKER = "docker"  # docker run / docker compose
RUNTIME_KUBERNETES = "kubernetes"
RUNTIME_ENROOT = "enroot"  # Slurm with Pyxis (srun --container-image)
# No container: the ranks run on the host (mpirun/torchrun/srun without Pyxis), in the node's network and IPC
# namespaces, so they see its interfaces and its /dev/shm (a facts file states it; job/facts_io.py)
RUNTIME_HOST = "bare-metal"

# How enroot reads a --container-image name (NVIDIA/enroot src/docker.sh): a squashfs file, REGISTRY#IMAGE, a
# Docker Hub path, or REGISTRY/IMAGE, which enroot 4.0.0 and later read as Docker does and earlier releases as
# a Docker Hub path (unless their credentials file names the registry)
FORM_SQUASHFS = "squashfs"
FORM_REGISTRY = "registry"
FORM_DOCKER_HUB = "docker-hub"
FORM_AMBIGUOUS = "registry-or-docker-hub"

# How much of the container the spec shows. COMPLETE: a whole manifest, compose file or launch line was parsed, so a
# key it does not show is the runtime's default (no hostPath device, not privileged). PARTIAL: a snippet (a "..."
# line, a truncated manifest) or a facts file someone wrote down: a key it does not show is unknown, never absent.
COMPLETE = "complete"
PARTIAL = "partial"

# Slurm's GPU binding of tasks (srun(1) --gpu-bind, --gpus-per-task, --ntasks-per-gpu): PER_TASK when each task's
# CUDA_VISIBLE_DEVICES names only its own GPUs (--gpus-per-task and --ntasks-per-gpu imply --gpu-bind=per_task /
# single; --gpu-bind=closest, map_gpu, mask_gpu, single, per_task bind too); BIND_NONE (--gpu-bind=none): every task
# sees all the step's GPUs on its node. https://slurm.schedmd.com/srun.html
BIND_PER_TASK = "per-task"
BIND_NONE = "none"
SLURM_KINDS = ("slurm", "srun", "sbatch", "salloc")

# What the container is: a job's rank (None, the default) or cluster infrastructure (the GPU Operator's, the Network
# Operator's or a device plugin's own DaemonSet), which runs no NCCL or RDMA collective of a job
WORKLOAD_INFRASTRUCTURE = "cluster-infrastructure"


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str | None  # None: from the host or a secret/configMap, not stated in the spec
    line: int | None = None


@dataclass(frozen=True)
class JobFacts:
    path: str  # the spec file
    kind: str  # "Pod", "PyTorchJob", "docker run", "compose", "slurm", ...
    runtime: str | None
    workload: str | None = None  # metadata.name, compose service, ...
    role: str | None = None  # replica type (Master, Worker, leader, ...)
    container: str | None = None
    line: int | None = None  # where the container is defined
    image: str | None = None
    privileged: bool | None = None
    cap_add: tuple[str, ...] | None = None  # capabilities added, upper case without CAP_
    host_network: bool | None = None
    host_ipc: bool | None = None  # the container shares the host's IPC namespace (and so its /dev/shm)
    # networks the pod gets besides its default one (GKE networking.gke.io/interfaces, Multus): "eth1:vpc1", ...;
    # () none; None: the spec does not say
    pod_networks: tuple[str, ...] | None = None
    devices: tuple[str, ...] | None = None  # host device paths given to the container (--device, hostPath mounts)
    resources: tuple[tuple[str, str], ...] | None = None  # extended resources requested (name, quantity)
    gpus: int | None = None  # GPUs requested; -1: all the node has
    shm_size_mib: float | None = None  # the /dev/shm size the spec sets; -1: sized by memory, not by the spec
    shm_from_host: bool = False  # the host's /dev/shm is mounted over the container's (-v, hostPath, mounts)
    shm_setting: str | None = None  # how the spec sets /dev/shm (None: it does not, the runtime default applies)
    # whether the source says how /dev/shm is set at all: a parsed launch line or manifest does (no flag is the
    # runtime's default); a job facts file that names no shm key does not (unknown, never the default)
    shm_stated: bool = True
    memlock_kib: int | None = None  # the soft memlock limit the spec sets; -1: unlimited
    ranks_per_node: int | None = None  # processes per node the spec starts (nprocPerNode, --ntasks-per-node, ...)
    ranks_setting: str | None = None  # where ranks_per_node comes from ("--ntasks-per-node 8", "mpirun -N 8")
    ranks_follow_gpus: bool = False  # one process per visible GPU (torchrun --nproc-per-node gpu): none share one
    gpus_setting: str | None = None  # where gpus comes from ("--gpus-per-node=8", "nvidia.com/gpu: 8")
    # Slurm: where the task's memlock limit comes from, as far as the script says (PropagateResourceLimits)
    limits_from: str | None = None
    # Pyxis/enroot: how enroot reads the image name (FORM_* above); None: not Pyxis, or the name is not known
    image_form: str | None = None
    env: tuple[EnvVar, ...] = ()
    env_incomplete: bool = False  # envFrom / --env-file: more variables than the spec shows
    # how many containers of the same job share a node, each with its own GPUs (docker runs or pods side by side);
    # None: the spec does not say (a launch line or a pod template shows one container)
    containers_per_node: int | None = None
    # Pyxis --container-name (in `container`): "earlier-step" when a step before this one in the script names the
    # same container, so Pyxis uses that container (pyxis_slurmstepd.c: the import is skipped, and while that step
    # runs this one joins its namespaces and imports its process environment); "new" (the :create flag); None: not a
    # named Pyxis container, or whether one of that name exists is not in the script (a named container outlives
    # its job under Pyxis' default container_scope=global)
    container_reuse: str | None = None
    # what this step asks for that the reused container does not give it: variables it sets to another value than
    # the step that made the container (not named by --container-env), "--container-image" when it names another
    reuse_conflicts: tuple[str, ...] = ()
    # Pyxis: which host variables override the image's Env (--container-env); None: not Pyxis
    env_overrides_image: tuple[str, ...] | None = None
    # words that add flags only at run time (a shell array "${ARGS[@]}"): an absent flag may still be given
    open_flags: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    # how the launcher puts the GPU driver into the container when it is not the NVIDIA Container Toolkit's hook:
    # "apptainer-nv" (legacy binds), "apptainer-nvccli" (the host's nvidia-container-cli), "cdi" (a CDI device
    # request: Apptainer/Podman --device nvidia.com/gpu=...); None: the runtime's usual way, or not stated
    gpu_injection: str | None = None
    # the job's collectives already ran (a job facts file states it, e.g. from the job's log): a failure at
    # communicator creation is behind it, so a known issue of that phase is not its cause. None: not stated (never
    # read from the absence of a log)
    collectives_ran: bool | None = None
    completeness: str = COMPLETE  # COMPLETE / PARTIAL above; job/facts_io.py reads a facts file as PARTIAL
    gpu_bind: str | None = None  # Slurm: BIND_PER_TASK / BIND_NONE above; None: not Slurm, or not stated
    # what the container is (WORKLOAD_INFRASTRUCTURE) and why ("DaemonSet of nvcr.io/nvidia/...: GPU Operator")
    workload_kind: str | None = None
    workload_why: str | None = None
    # Docker: the OCI runtime the launch names (--runtime nvidia, compose runtime: nvidia); None: the daemon's default
    oci_runtime: str | None = None

    @property
    def slurm(self) -> bool:
        """A Slurm step (Pyxis/enroot or on the host): Slurm sets each task's CUDA_VISIBLE_DEVICES itself."""
        return self.runtime == RUNTIME_ENROOT or "slurm" in (self.runtime or "") or self.kind in SLURM_KINDS

    @property
    def complete(self) -> bool:
        """Whether a key this spec does not show is the runtime's default (True) or unknown (False)."""
        return self.completeness == COMPLETE

    @property
    def who(self) -> str:
        """A short name for titles: the container, else the workload, else the kind of spec."""
        return self.container or self.workload or self.kind

    @property
    def where(self) -> str:
        """The words a report uses for this container: kind, workload, role, container and line."""
        parts = [self.kind]
        if self.workload:
            parts.append(self.workload)
        if self.role:
            parts.append(f"{self.role}")
        if self.container:
            parts.append(f"container {self.container}")
        text = " ".join(parts)
        return f"{text} ({self.path}" + (f" line {self.line})" if self.line else ")")

    def env_value(self, name: str) -> EnvVar | None:
        """The variable as the container gets it: the last definition wins (Kubernetes, docker -e)."""
        found = None
        for var in self.env:
            if var.name == name:
                found = var
        return found

    def wins_over_image(self, name: str, image_has: bool) -> bool:
        """Whether the job's value of `name` is what the process sees when the image's Env also sets it."""
        if not image_has or self.env_overrides_image is None:
            return True  # Kubernetes, Docker: the container's env replaces the image's (docs cited in rules.json)
        return name in self.env_overrides_image  # Pyxis keeps the image's value unless --container-env names it
