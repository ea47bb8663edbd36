"""The RDMA cgroup limits of the probe's own cgroup (cgroup v2: /proc/self/cgroup `0::PATH`, rdma.max at each level,
Documentation/admin-guide/cgroup-v2.rst), and RDMA-CGROUP-HCA-HANDLES against the ranks per node a job starts."""

from __future__ import annotations

import dataclasses
import os
import shutil

from engine_facts import committed_facts, matrix, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import load_job_spec
from imgcheck.node.probe import probe

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
SPEC = os.path.join(os.path.dirname(__file__), "..", "job", "specs", "pod-roce-hostnetwork.yaml")
RULE = "RDMA-CGROUP-HCA-HANDLES"
POD = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f3c.slice/cri-containerd-4b1e.scope"


def _root(tmp_path, pod_limit: str | None, container_limit: str | None = None):
    root = tmp_path / "node"
    shutil.copytree(os.path.join(FIXTURES, "inbox-ubuntu2204"), root, symlinks=True)
    (root / "proc/4242/cgroup").write_text(f"0::/{POD}\n")
    cg = root / "sys/fs/cgroup"
    (cg / POD).mkdir(parents=True)
    (cg / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n")
    pod_dir = cg / POD.rsplit("/", 1)[0]
    if pod_limit is not None:
        (pod_dir / "rdma.max").write_text(pod_limit)
    if container_limit is not None:
        (cg / POD / "rdma.max").write_text(container_limit)
    return str(root)


def _run(node, ranks):
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    (pod,) = load_job_spec(SPEC)  # a real RoCE pod manifest; its ranks per node set here
    job = dataclasses.replace(pod, ranks_per_node=ranks) if ranks else None
    result = evaluate(image, node, matrix(), job=job)
    return [f for f in result.findings if f.id == RULE], [u for u in result.unknowns if u.rule == RULE]


def test_the_smallest_limit_along_the_path_counts(tmp_path):
    node = probe(_root(tmp_path, "mlx5_0 hca_handle=8 hca_object=max\n", "mlx5_0 hca_handle=2 hca_object=1000\n"))
    assert node.limits.rdma == {"mlx5_0": {"hca_handle": 2, "hca_object": 1000}}
    (f,), _ = _run(node, 8)
    assert "mlx5_0 hca_handle=2" in f.title and "8 ranks" in f.title
    assert _run(node, 2) == ([], [])


def test_max_and_no_file_are_no_limit(tmp_path):
    node = probe(_root(tmp_path, "mlx5_0 hca_handle=max hca_object=max\n"))
    assert node.limits.rdma == {"mlx5_0": {"hca_handle": None, "hca_object": None}}
    assert _run(node, 8) == ([], [])


def test_unreadable_is_unknown_with_a_job(tmp_path):
    root = _root(tmp_path, None)
    os.unlink(os.path.join(root, "sys/fs/cgroup/cgroup.controllers"))
    node = probe(root)
    assert node.limits.rdma is None and "rdma controller" in node.unknown["limits.rdma"]
    found, (u,) = _run(node, 8)
    assert found == [] and "8 ranks per node" in u.reason
    # a limit without the job's ranks: unknown, not silence
    limited = dataclasses.replace(node, limits=dataclasses.replace(node.limits, rdma={"mlx5_0": {"hca_handle": 4}}))
    assert _run(limited, None)[1]
