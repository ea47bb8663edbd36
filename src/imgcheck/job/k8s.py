"""Kubernetes workloads: the pod templates of Pod, Deployment/StatefulSet/DaemonSet/ReplicaSet/Job/CronJob,
Kubeflow PyTorchJob and MPIJob, LeaderWorkerSet and JobSet; one JobFacts per container.

Field meanings: Kubernetes API reference (core/v1 PodSpec, Container, SecurityContext, EmptyDirVolumeSource);
Kubeflow training-operator v1 API (pytorchReplicaSpecs, mpiReplicaSpecs, nprocPerNode, slotsPerWorker);
sigs.k8s.io/lws (leaderWorkerTemplate) and sigs.k8s.io/jobset (replicatedJobs[].template).
"""

from __future__ import annotations

from .model import RUNTIME_KUBERNETES, EnvVar, JobFacts
from .units import MIB, k8s_quantity_bytes
from .yamlload import line_of

# Resources that are not devices a plugin injects (the rest may be: rdma/*, nvidia.com/hostdev, ...)
PLAIN_RESOURCES = ("cpu", "memory", "ephemeral-storage", "pods")
GPU_RESOURCES = ("nvidia.com/gpu",)


def _get(obj, *keys):
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def pod_templates(doc: dict):
    """(workload name, role, PodSpec, ranks per node stated by the workload) for each pod template in `doc`."""
    kind = doc.get("kind")
    name = _get(doc, "metadata", "name")
    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    if kind == "Pod":
        yield name, None, spec, None
    elif kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController"):
        yield name, None, _get(spec, "template", "spec"), None
    elif kind == "CronJob":
        yield name, None, _get(spec, "jobTemplate", "spec", "template", "spec"), None
    elif kind == "PyTorchJob":
        nproc = _int(spec.get("nprocPerNode") or _get(spec, "elasticPolicy", "nProcPerNode"))
        for role, replica in _map(spec.get("pytorchReplicaSpecs")).items():
            yield name, role, _get(replica, "template", "spec"), nproc
    elif kind == "MPIJob":
        slots = _int(spec.get("slotsPerWorker"))
        for role, replica in _map(spec.get("mpiReplicaSpecs")).items():
            yield name, role, _get(replica, "template", "spec"), slots if role == "Worker" else None
    elif kind == "LeaderWorkerSet":
        lwt = _map(spec.get("leaderWorkerTemplate"))
        for role, key in (("leader", "leaderTemplate"), ("worker", "workerTemplate")):
            if isinstance(lwt.get(key), dict):
                yield name, role, _get(lwt, key, "spec"), None
    elif kind == "JobSet":
        for rj in _list(spec.get("replicatedJobs")):
            yield name, _get(rj, "name"), _get(rj, "template", "spec", "template", "spec"), None


def _list(value) -> list:
    return value if isinstance(value, list) else []  # a hand-edited spec may put anything anywhere


def _map(value) -> dict:
    return value if isinstance(value, dict) else {}


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None  # "auto", "gpu", absent: the operator decides at run time


def containers(doc: dict, path: str) -> list[JobFacts]:
    out = []
    for workload, role, pod, ranks in pod_templates(doc):
        if not isinstance(pod, dict):
            continue
        for container in _list(pod.get("containers")):
            if isinstance(container, dict):
                out.append(_container(doc.get("kind"), workload, role, pod, container, ranks, path))
    return out


def _volume(pod: dict, name: str):
    for vol in _list(pod.get("volumes")):
        if isinstance(vol, dict) and vol.get("name") == name:
            return vol
    return None


def _container(kind, workload, role, pod, c, ranks, path) -> JobFacts:
    sc = c.get("securityContext") if isinstance(c.get("securityContext"), dict) else {}
    caps = _get(sc, "capabilities", "add")
    resources = {}
    for section in ("requests", "limits"):  # limits win: extended resources must be equal when both are given
        for key, value in _map(_get(c, "resources", section)).items():
            resources[str(key)] = str(value)
    for claim in _list(_get(c, "resources", "claims")):  # dynamic resource allocation: any device, not shown here
        if isinstance(claim, dict) and claim.get("name"):
            resources[f"resourceClaim/{claim['name']}"] = "1"
    gpus = next((_int(resources[g]) for g in GPU_RESOURCES if g in resources), None)
    extended = tuple(
        sorted((k, v) for k, v in resources.items() if k not in PLAIN_RESOURCES and not k.startswith("hugepages-"))
    )
    shm, shm_setting, devices = None, None, []
    for mount in _list(c.get("volumeMounts")):
        if not isinstance(mount, dict):
            continue
        vol = _map(_volume(pod, mount.get("name")))
        target = str(mount.get("mountPath", "")).rstrip("/")
        if target == "/dev/shm":
            shm, shm_setting = _shm_of(vol), f"volume {mount.get('name')} mounted on /dev/shm"
        host = _get(vol, "hostPath", "path")
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
        image=None if c.get("image") is None else str(c.get("image")),
        privileged=bool(sc.get("privileged", False)),
        cap_add=tuple(str(x).upper().removeprefix("CAP_") for x in caps) if isinstance(caps, list) else (),
        host_network=bool(pod.get("hostNetwork", False)),
        host_ipc=bool(pod.get("hostIPC", False)),
        devices=tuple(devices),
        resources=extended,
        gpus=gpus,
        shm_size_mib=shm,
        shm_setting=shm_setting,
        memlock_kib=None,  # a pod spec cannot set rlimits: the container runtime's limit applies
        ranks_per_node=ranks,
        env=env,
        env_incomplete=bool(c.get("envFrom")),
    )


def _str(value) -> str | None:
    if value is None:
        return ""  # `value:` left empty is the empty string (core/v1 EnvVar)
    return str(value).lower() if isinstance(value, bool) else str(value)


def _shm_of(vol: dict) -> float | None:
    empty = vol.get("emptyDir")
    if not isinstance(empty, dict) or empty.get("medium") != "Memory":
        return None  # a disk-backed or other volume: its size is not in the spec
    limit = empty.get("sizeLimit")
    if limit is None:
        return -1  # tmpfs sized by the pod's memory (Kubernetes SizeMemoryBackedVolumes), not by the spec
    size = k8s_quantity_bytes(limit)
    return None if size is None else size / MIB
