"""Kubernetes workloads: the pod templates of Pod, Deployment/StatefulSet/DaemonSet/ReplicaSet/Job/CronJob,
Kubeflow PyTorchJob and MPIJob, LeaderWorkerSet, JobSet, Volcano Job and KubeRay RayCluster/RayJob/RayService;
one JobFacts per container.

Field meanings: Kubernetes API reference (core/v1 PodSpec, Container, SecurityContext, EmptyDirVolumeSource);
Kubeflow training-operator v1 API (pytorchReplicaSpecs, mpiReplicaSpecs, nprocPerNode, slotsPerWorker);
sigs.k8s.io/lws (leaderWorkerTemplate), sigs.k8s.io/jobset (replicatedJobs[].template), Volcano
batch.volcano.sh/v1alpha1 Job (tasks[].template), KubeRay ray.io/v1 (headGroupSpec, workerGroupSpecs[]) and
resource.k8s.io DRA (PodSpec.resourceClaims, ResourceClaimTemplate, DeviceClass).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from typing import Any

from .launcher import PER_GPU, LauncherFacts, is_launcher, read_launcher, torchrun_procs
from .model import RUNTIME_KUBERNETES, EnvVar, JobFacts
from .shell import parse_script
from .units import MIB, k8s_quantity_bytes
from .yamlload import line_of

# Resources that are not devices a plugin injects (the rest may be: rdma/*, nvidia.com/hostdev, ...)
PLAIN_RESOURCES = ("cpu", "memory", "ephemeral-storage", "pods")
GPU_RESOURCES = ("nvidia.com/gpu",)
_RANKS_SETTING = {"PyTorchJob": "nprocPerNode", "MPIJob": "slotsPerWorker"}


def _get(obj: object, *keys: str) -> Any:  # a value of a hand-written YAML document: anything
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def pod_templates(doc: dict[str, Any]) -> Iterator[tuple[Any, Any, Any, int | None]]:
    """(workload name, role, PodSpec, ranks per node stated by the workload) for each pod template in `doc`."""
    for workload, role, template, ranks in _templates(doc):
        yield workload, role, _get(template, "spec"), ranks


def pod_annotations(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The annotations of each pod template in `doc`, in the order of pod_templates."""
    for _workload, _role, template, _ranks in _templates(doc):
        yield _map(_get(template, "metadata", "annotations"))


def _templates(doc: dict[str, Any]) -> Iterator[tuple[Any, Any, Any, int | None]]:
    """(workload name, role, pod template {metadata, spec}, ranks per node) for each pod template in `doc`."""
    kind = doc.get("kind")
    name = _get(doc, "metadata", "name")
    spec = _map(doc.get("spec"))
    if kind == "Job" and str(doc.get("apiVersion", "")).startswith("batch.volcano.sh/"):
        for task in _list(spec.get("tasks")):  # Volcano Job: spec.tasks[].template (volcano.sh batch/v1alpha1)
            yield name, _get(task, "name"), _get(task, "template"), None
    elif kind == "Pod":
        yield name, None, doc, None
    elif kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController"):
        yield name, None, _get(spec, "template"), None
    elif kind == "CronJob":
        yield name, None, _get(spec, "jobTemplate", "spec", "template"), None
    elif kind == "PyTorchJob":
        nproc = _int(spec.get("nprocPerNode") or _get(spec, "elasticPolicy", "nProcPerNode"))
        for role, replica in _map(spec.get("pytorchReplicaSpecs")).items():
            yield name, role, _get(replica, "template"), nproc
    elif kind == "MPIJob":
        slots = _int(spec.get("slotsPerWorker"))
        for role, replica in _map(spec.get("mpiReplicaSpecs")).items():
            yield name, role, _get(replica, "template"), slots if role == "Worker" else None
    elif kind == "LeaderWorkerSet":
        lwt = _map(spec.get("leaderWorkerTemplate"))
        for role, key in (("leader", "leaderTemplate"), ("worker", "workerTemplate")):
            if isinstance(lwt.get(key), dict):
                yield name, role, _get(lwt, key), None
    elif kind in ("RayCluster", "RayJob", "RayService"):
        # KubeRay: RayJob.spec.rayClusterSpec, RayService.spec.rayClusterConfig (ray.io/v1)
        cluster = spec if kind == "RayCluster" else _map(spec.get("rayClusterSpec") or spec.get("rayClusterConfig"))
        yield name, "head", _get(cluster, "headGroupSpec", "template"), None
        for group in _list(cluster.get("workerGroupSpecs")):
            yield name, _get(group, "groupName") or "worker", _get(group, "template"), None
    elif kind == "JobSet":
        for rj in _list(spec.get("replicatedJobs")):
            yield name, _get(rj, "name"), _get(rj, "template", "spec", "template"), None


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []  # a hand-edited spec may put anything anywhere


def _map(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None  # "auto", "gpu", absent: the operator decides at run time


def containers(doc: dict[str, Any], path: str, claims: dict[str, str] | None = None) -> list[JobFacts]:
    """`claims`: DRA ResourceClaim / ResourceClaimTemplate name -> what its devices are ("rdma" or the device
    class), from the other documents of the same file."""
    out: list[JobFacts] = []
    for (workload, role, pod, ranks), notes in zip(pod_templates(doc), pod_annotations(doc), strict=True):
        if not isinstance(pod, dict):
            continue
        networks = pod_networks(notes)
        for container in _list(pod.get("containers")):
            if isinstance(container, dict):
                job = _container(doc.get("kind"), workload, role, pod, container, ranks, path, claims or {})
                out.append(dataclasses.replace(job, pod_networks=networks))
    if doc.get("kind") in ("MPIJob", "Job"):
        out = _with_launcher_env(doc, out)
    return [_with_torchrun(job, c) for job, c in zip(out, _containers_of(doc), strict=True)]


# Annotations that attach further networks to a pod: GKE multi-networking (a JSON list of {interfaceName, network};
# cloud.google.com/kubernetes-engine/docs/how-to/setup-multinetwork-support-for-pods) and Multus
# (k8s.v1.cni.cncf.io/networks: "net1,net2" or a JSON list of {name}; k8snetworkplumbingwg multi-net-spec)
GKE_INTERFACES = "networking.gke.io/interfaces"
MULTUS_NETWORKS = "k8s.v1.cni.cncf.io/networks"


def pod_networks(annotations: dict[str, Any]) -> tuple[str, ...]:
    """The networks a pod gets besides its default one, as its annotations name them."""
    found: list[str] = []
    gke = annotations.get(GKE_INTERFACES)
    if isinstance(gke, str):
        for item in _json_list(gke):
            net = str(_get(item, "network") or "")
            if net and net != "default":
                found.append(f"{_get(item, 'interfaceName') or '?'}:{net}")
    multus = annotations.get(MULTUS_NETWORKS)
    if isinstance(multus, str):
        items = _json_list(multus) if multus.lstrip().startswith("[") else multus.split(",")
        found += [str(_get(i, "name") if isinstance(i, dict) else i).strip() for i in items if i]
    return tuple(n for n in found if n)


def _json_list(text: str) -> list[Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return []  # a malformed annotation attaches nothing (the CNI rejects it)
    return value if isinstance(value, list) else []


def _containers_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The container mappings in the order containers() makes their JobFacts."""
    found: list[dict[str, Any]] = []
    for _workload, _role, pod, _ranks in pod_templates(doc):
        if isinstance(pod, dict):
            found += [c for c in _list(pod.get("containers")) if isinstance(c, dict)]
    return found


_EXPORT_LINE = re.compile(r"^[ \t]*export[ \t]+([A-Za-z_][A-Za-z0-9_]*)=", re.M)


def _with_torchrun(job: JobFacts, c: dict[str, Any]) -> JobFacts:
    """A container whose command runs torchrun --nproc-per-node N runs N ranks (over nprocPerNode, which only
    fills torchrun's default)."""
    words = [str(w) for w in _list(c.get("command")) + _list(c.get("args"))]
    if len(words) >= 3 and _shell_c(words):
        script = parse_script(words[2])
        commands = [list(cmd.words) for cmd in script.commands]
        # what the container's script exports reaches the programs it starts (value None: decided at run time,
        # e.g. GLOO_SOCKET_IFNAME=$(ip route get ...)); the spec's own env entry of the same name is replaced
        found = dict(script.exports)
        # a line the bash grammar cannot read (an envsubst template's ${DOLLAR}(...)) still exports the name
        for m in _EXPORT_LINE.finditer(words[2]):
            found.setdefault(m.group(1), (None, 0))
        exported = tuple(EnvVar(name, value, line_of(c)) for name, (value, _line) in found.items())
        if exported:
            names = {v.name for v in exported}
            job = dataclasses.replace(job, env=tuple(v for v in job.env if v.name not in names) + exported)
    else:
        commands = [list(words)]
    for command in commands:
        procs, setting = torchrun_procs(command)
        if procs == PER_GPU:
            return dataclasses.replace(job, ranks_setting=setting, ranks_follow_gpus=True)
        if procs is not None:
            return dataclasses.replace(job, ranks_per_node=procs, ranks_setting=setting)
    return job


def _with_launcher_env(doc: dict[str, Any], found: list[JobFacts]) -> list[JobFacts]:
    """An MPIJob's launcher, or the Volcano Job task that runs mpirun over its ssh/svc plugins, starts the ranks on
    the other replicas: its -x / --mca settings reach every rank there, over the worker container's own env, and
    -N / --npernode / --map-by ppr:N:node set the ranks per worker."""
    for role, _workload, c in _launchers(doc):
        facts = _launcher_command(c)
        if facts is None:
            continue
        own = {str(e.get("name")): e.get("value") for e in _list(c.get("env")) if isinstance(e, dict)}
        env = tuple(EnvVar(k, v if v is not None else _own_value(own, k), line_of(c)) for k, v in facts.env)
        out = []
        for job in found:
            if job.role != role:
                job = dataclasses.replace(
                    job,
                    env=job.env + env,
                    ranks_per_node=facts.ranks_per_node or job.ranks_per_node,
                    ranks_setting=f"{role} mpirun {facts.ranks_setting}" if facts.ranks_per_node else job.ranks_setting,
                    notes=job.notes + tuple(f"{role} mpirun takes {u}" for u in facts.unknown),
                )
            out.append(job)
        return out
    return found


def _launchers(doc: dict[str, Any]) -> Iterator[tuple[Any, Any, dict[str, Any]]]:
    """(role, workload, container) of the replicas that may run the MPI launcher."""
    volcano = doc.get("kind") == "Job" and str(doc.get("apiVersion", "")).startswith("batch.volcano.sh/")
    for workload, role, pod, _ranks in pod_templates(doc):
        if not isinstance(pod, dict) or not (volcano or (doc.get("kind") == "MPIJob" and role == "Launcher")):
            continue
        for c in _list(pod.get("containers")):
            if isinstance(c, dict):
                yield role, workload, c


def _shell_c(words: list[str]) -> bool:
    """sh -c SCRIPT, bash -xc SCRIPT, bash -lc SCRIPT: the command is a script."""
    flags = words[1]
    return (
        words[0].rsplit("/", 1)[-1] in ("sh", "bash")
        and flags.startswith("-")
        and not flags.startswith("--")
        and flags.endswith("c")
    )


def _own_value(own: dict[str, Any], name: str) -> str | None:
    value = own.get(name)
    if value is None or "$" in str(value):
        return None  # `-x NAME` passes the launcher's value; "$PATH:..." is expanded by no one in a pod spec
    return str(value)


def _launcher_command(c: dict[str, Any]) -> LauncherFacts | None:
    words = [str(w) for w in _list(c.get("command")) + _list(c.get("args"))]
    if words and is_launcher(words[0]):
        return read_launcher(words[1:])
    if len(words) >= 3 and _shell_c(words):
        for command in parse_script(words[2]).commands:
            if command.words and is_launcher(command.words[0]):
                return read_launcher(command.words[1:])
    return None


def _volume(pod: dict[str, Any], name: object) -> dict[str, Any] | None:
    for vol in _list(pod.get("volumes")):
        if isinstance(vol, dict) and vol.get("name") == name:
            return vol
    return None


def _container(
    kind: object,
    workload: Any,
    role: Any,
    pod: dict[str, Any],
    c: dict[str, Any],
    ranks: int | None,
    path: str,
    claims: dict[str, str],
) -> JobFacts:
    sc = _map(c.get("securityContext"))
    caps = _get(sc, "capabilities", "add")
    resources: dict[str, str] = {}
    for section in ("requests", "limits"):  # limits win: extended resources must be equal when both are given
        for key, value in _map(_get(c, "resources", section)).items():
            resources[str(key)] = str(value)
    # Dynamic resource allocation: the pod's claims (a network DRA driver such as dranet moves the NIC and its
    # RDMA devices into the pod, so a pod-level claim counts for every container) and the container's own.
    pod_claims = {str(k.get("name")): k for k in _list(pod.get("resourceClaims")) if isinstance(k, dict)}
    for claim in _list(_get(c, "resources", "claims")) + list(pod_claims.values()):
        if isinstance(claim, dict) and claim.get("name"):
            source = pod_claims.get(str(claim["name"]), claim)
            ref = source.get("resourceClaimTemplateName") or source.get("resourceClaimName")
            resources[f"resourceClaim/{claim['name']}"] = claims.get(str(ref), "device class not in this file")
    gpu_key = next((g for g in GPU_RESOURCES if g in resources), None)
    gpus = _int(resources[gpu_key]) if gpu_key else None
    extended = tuple(
        sorted((k, v) for k, v in resources.items() if k not in PLAIN_RESOURCES and not k.startswith("hugepages-"))
    )
    shm: float | None = None
    shm_setting: str | None = None
    devices: list[str] = []
    shm_from_host = False
    for mount in _list(c.get("volumeMounts")):
        if not isinstance(mount, dict):
            continue
        vol = _map(_volume(pod, mount.get("name")))
        target = str(mount.get("mountPath", "")).rstrip("/")
        host = _get(vol, "hostPath", "path")
        if target == "/dev/shm":
            shm, shm_setting = _shm_of(vol), f"volume {mount.get('name')} mounted on /dev/shm"
            if isinstance(host, str) and host.rstrip("/") == "/dev/shm":
                shm_from_host, shm_setting = True, f"hostPath /dev/shm (volume {mount.get('name')})"
                continue
        if isinstance(host, str) and host.rstrip("/").startswith("/dev/"):
            devices.append(host.rstrip("/"))
    env = tuple(
        EnvVar(str(e.get("name")), None if "valueFrom" in e else _str(e.get("value")), line_of(e))
        for e in _list(c.get("env"))
        if isinstance(e, dict) and e.get("name")
    )
    return JobFacts(
        path=path,
        kind=str(kind),
        runtime=RUNTIME_KUBERNETES,
        workload=workload,
        role=role,
        container=None if c.get("name") is None else str(c.get("name")),
        line=line_of(c),
        image=None if c.get("image") is None or "$" in str(c.get("image")) else str(c.get("image")),
        privileged=bool(sc.get("privileged", False)),
        cap_add=tuple(str(x).upper().removeprefix("CAP_") for x in caps) if isinstance(caps, list) else (),
        host_network=bool(pod.get("hostNetwork", False)),
        host_ipc=bool(pod.get("hostIPC", False)),
        devices=tuple(devices),
        resources=extended,
        gpus=gpus,
        gpus_setting=f"{gpu_key}: {resources[gpu_key]}" if gpu_key else None,
        ranks_setting=_RANKS_SETTING.get(str(kind)) if ranks else None,
        shm_size_mib=shm,
        shm_setting=shm_setting,
        shm_from_host=shm_from_host,
        memlock_kib=None,  # a pod spec cannot set rlimits: the container runtime's limit applies
        ranks_per_node=ranks,
        env=env,
        env_incomplete=bool(c.get("envFrom")),
    )


def _str(value: object) -> str | None:
    if value is None:
        return ""  # `value:` left empty is the empty string (core/v1 EnvVar)
    return str(value).lower() if isinstance(value, bool) else str(value)


def _shm_of(vol: dict[str, Any]) -> float | None:
    empty = vol.get("emptyDir")
    if not isinstance(empty, dict) or empty.get("medium") != "Memory":
        return None  # a disk-backed or other volume: its size is not in the spec
    limit = empty.get("sizeLimit")
    if limit is None:
        return -1  # tmpfs sized by the pod's memory (Kubernetes SizeMemoryBackedVolumes), not by the spec
    size = k8s_quantity_bytes(limit)
    return None if size is None else size / MIB
