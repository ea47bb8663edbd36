"""Whether a container is cluster infrastructure (an operator's own DaemonSet or Deployment), not a job's rank.

The GPU Operator and the Network Operator deploy their components (driver containers, toolkit, device plugins, driver
manager, CNI plugins, ...) as DaemonSets and Deployments on every GPU or RDMA node. Such a container runs no NCCL or
RDMA collective of a job, so the rules about a job's libraries and launch do not apply to it; the node's own component
rules do. The images are read from every release of both operators (catalog cluster_component_images).
"""

from __future__ import annotations

from ..job.model import WORKLOAD_INFRASTRUCTURE, JobFacts
from ..matrix import Matrix

TABLE = "cluster_component_images"


def _path(reference: str) -> str:
    """REGISTRY/NAMESPACE/NAME of a reference, without tag or digest ("nvcr.io/nvidia/driver")."""
    ref = reference.split("://", 1)[-1].split("@", 1)[0]
    head, _, tail = ref.rpartition("/")
    name = tail.split(":", 1)[0]
    return f"{head}/{name}" if head else name


def component_of(matrix: Matrix, reference: str | None) -> dict[str, object] | None:
    """The catalog row whose image the reference names: the same path, or the same last two path parts (a mirror
    registry that keeps the operator's namespace: myregistry/cloud-native/k8s-driver-manager)."""
    if not reference:
        return None
    path = _path(reference)
    tail = "/".join(path.split("/")[-2:])
    for row in matrix.rows(TABLE):
        image = str(row["image"])
        if path == image or ("/" in tail and "/".join(image.split("/")[-2:]) == tail):
            return dict(row)
    return None


def infrastructure(matrix: Matrix, reference: str | None, job: JobFacts | None) -> str | None:
    """Why the container is cluster infrastructure (None: it is, as far as the facts show, a job's container)."""
    if job is not None and job.workload_kind == WORKLOAD_INFRASTRUCTURE:
        return job.workload_why or f"{job.where} is stated to be cluster infrastructure"
    for ref in (job.image if job is not None else None, reference):
        row = component_of(matrix, ref)
        if row is not None:
            what = f"{job.kind} " if job is not None else ""
            return (
                f"{what}{ref} is the {row['operator']}'s {row['component']} component ({row['image']}, in its "
                f"releases {row['first']} to {row['last']}: {row['source']}): cluster infrastructure, not a job's rank"
            )
    return None
