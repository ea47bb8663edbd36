"""Issue 32, launch facts read right: how GPUs reach a container and a rank per launcher, partial specs, and the
operators' own components.

Real specs (specs/real, sources in SOURCES.md): TaskC_Demos stablediffusion/build.sh (a docker run without and one
with --gpus), awsome-distributed-training mosaicml-composer 2.train-mpt-manual-distributed.sbatch (--gpus-per-task
with one task per node), NVIDIA/k8s-device-plugin deployments/static/nvidia-device-plugin.yml (a cluster component
DaemonSet), awsome-distributed-training nccl-tests.yaml (an MPIJob, cut the way a thread posts it). The job facts of
the Slurm and enroot cases are the launches the threads state (CliMA/slurm-buildkite#54, NVIDIA/enroot#207)."""

from __future__ import annotations

import dataclasses
import os

from engine_facts import committed_facts, matrix, node, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import load_job_spec, parse_job_spec
from imgcheck.job.facts_io import parse_job_facts
from imgcheck.job.model import BIND_PER_TASK, COMPLETE, PARTIAL
from imgcheck.knowledge import cluster_workloads
from imgcheck.model.image import Cuda, Hpcx
from imgcheck.model.node_io import parse_node_facts

REAL = os.path.join(os.path.dirname(__file__), "specs", "real")
MATRIX = matrix()
IB_NODE = "mofed-23.10-open-550-peermem"  # mlx5_0, mlx5_1, 8 H100
NO_REQUEST = "JOB-NO-GPU-REQUEST"
ALLOCATION = "JOB-NVIDIA-VISIBLE-DEVICES-ALLOCATION"
SUBSET = "JOB-GPU-SUBSET-CUDA-IPC"
RANKS = "JOB-RANKS-EXCEED-GPUS"


def found(result, rule):
    return [f for f in result.findings if f.id == rule]


def unknowns(result, rule):
    return [u for u in result.unknowns if u.rule == rule]


def gpu_node(count: int):
    gpus = [{"index": i, "name": "NVIDIA A100-SXM4-80GB", "gpu_class": "datacenter"} for i in range(count)]
    return parse_node_facts({"name": "gpu-node", "gpu": {"driver_version": "550.90.07", "gpus": gpus}}, "node.json")


def cuda_image(env: dict[str, str]):
    """The bookworm fixture with a CUDA runtime and the Env a CUDA base image (or a plain one) gives it."""
    return dataclasses.replace(
        committed_facts("bookworm"), cuda=Cuda(version="12.8.0", origin="env CUDA_VERSION"), env=env
    )


# --- docker: a launch that asks for no GPU --------------------------------------------------------------------------


def test_docker_run_without_gpus_gets_no_driver_and_with_gpus_does():
    """build.sh runs one image without --gpus and one with --gpus all. A CUDA base image sets NVIDIA_VISIBLE_DEVICES=all
    (and NVIDIA_REQUIRE_CUDA), so only the daemon's default runtime decides: conditional on runc, Docker's default."""
    without, with_gpus = load_job_spec(os.path.join(REAL, "taskc-stablediffusion-build.sh"))
    assert without.gpus is None and without.completeness == COMPLETE and with_gpus.gpus == -1
    image = cuda_image({"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_REQUIRE_CUDA": "cuda>=12.8", "CUDA_VERSION": "12.8.0"})
    (f,) = found(evaluate(image, gpu_node(1), MATRIX, job=without), NO_REQUEST)
    assert f.assumes and "runc" in f.assumes[0] and "no --gpus" in f.title
    assert not found(evaluate(image, gpu_node(1), MATRIX, job=with_gpus), NO_REQUEST)
    # --runtime nvidia with the image's NVIDIA_VISIBLE_DEVICES=all: the legacy hook injects them
    nvidia = dataclasses.replace(without, oci_runtime="nvidia")
    assert not found(evaluate(image, gpu_node(1), MATRIX, job=nvidia), NO_REQUEST)


def test_plain_image_without_nvidia_visible_devices_gets_nothing_even_from_the_nvidia_runtime():
    """cuda-python#2724's shape: an image whose Env sets no NVIDIA_VISIBLE_DEVICES and is no legacy CUDA image (no
    CUDA_VERSION): the toolkit selects no device whatever the runtime (cuda_image.go), so the finding is decided."""
    (without, _) = load_job_spec(os.path.join(REAL, "taskc-stablediffusion-build.sh"))
    plain = dataclasses.replace(cuda_image({}), cuda=Cuda(version="12.8.0", origin="pip nvidia-cuda-runtime-cu12"))
    (f,) = found(evaluate(plain, gpu_node(1), MATRIX, job=without), NO_REQUEST)
    assert not f.assumes and "not even the nvidia runtime" in f.title
    # a legacy CUDA image (CUDA_VERSION without NVIDIA_REQUIRE_CUDA): unset means all, so the runtime decides again
    legacy = cuda_image({"CUDA_VERSION": "10.0.130"})
    (f,) = found(evaluate(legacy, gpu_node(1), MATRIX, job=without), NO_REQUEST)
    assert f.assumes


def test_docker_facts_that_do_not_say_whether_gpus_were_requested_ask():
    """A facts file that states a docker launch but not its --gpus (cuda-python#2724's case as written): asked, with
    the NVIDIA_VISIBLE_DEVICES mechanism, never decided."""
    job = parse_job_facts({"runtime": "docker", "kind": "GitHub Actions container job", "env": {}}, "job.json")
    result = evaluate(cuda_image({}), gpu_node(1), MATRIX, job=job)
    assert not found(result, NO_REQUEST)
    (u,) = unknowns(result, NO_REQUEST)
    assert "--gpus" in u.reason and "NVIDIA_VISIBLE_DEVICES" in u.reason
    # gpus: 0 stated (sd-cpp#1352's case): decided under Docker's default runtime
    zero = parse_job_facts({"runtime": "docker", "kind": "docker run", "gpus": 0}, "job.json")
    assert found(evaluate(cuda_image({}), gpu_node(1), MATRIX, job=zero), NO_REQUEST)


# --- Slurm: host indices and per-task binding ------------------------------------------------------------------------


def test_nvidia_visible_devices_host_indices_outside_the_allocation():
    """enroot#207: four GPUs allocated (host 0,1,4,5) and NVIDIA_VISIBLE_DEVICES=0,1,4,5: index 4 is no device of the
    step's cgroup (nvidia-container-cli: 'unknown device'); conditional on the device cgroup. 'all' is the fix."""
    doc = {"runtime": "slurm", "kind": "srun", "gpus": 4, "env": {"NVIDIA_VISIBLE_DEVICES": "0,1,4,5"}}
    (f,) = found(evaluate(cuda_image({}), gpu_node(8), MATRIX, job=parse_job_facts(doc, "job.json")), ALLOCATION)
    assert "index 4" in f.title and f.assumes and "ConstrainDevices" in f.assumes[0]
    fixed = dict(doc, env={"NVIDIA_VISIBLE_DEVICES": "all"})
    assert not found(evaluate(cuda_image({}), gpu_node(8), MATRIX, job=parse_job_facts(fixed, "job.json")), ALLOCATION)
    assert "JOB-ENROOT-NO-GPU-DRIVER" not in {f.id for f in evaluate(cuda_image({}), gpu_node(8), MATRIX).findings}


def test_per_task_cuda_visible_devices_is_not_ranks_sharing_one_gpu():
    """CliMA/slurm-buildkite#54: four tasks, one task's CUDA_VISIBLE_DEVICES=0. That is one task's view under Slurm's
    GPU binding, not four ranks on one GPU (the old false alarm); the CUDA IPC question is asked instead."""
    doc = {"runtime": "slurm", "kind": "srun", "ranks_per_node": 4, "env": {"CUDA_VISIBLE_DEVICES": "0"}}
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    result = evaluate(image, gpu_node(4), MATRIX, job=parse_job_facts(doc, "job.json"))
    assert not found(result, RANKS)
    assert any("one task's view" in u.reason for u in unknowns(result, RANKS))
    assert any("binding per task" in u.reason for u in unknowns(result, SUBSET))


def test_gpus_per_task_binding_breaks_cuda_ipc_of_open_mpi_and_nccl():
    """The same launch with --gpus-per-task stated: each task sees its own GPU, so HPC-X's CUDA-aware Open MPI (smcuda:
    both ranks call their GPU device 0) fails to open the peer's memory. Named from the image, not NCCL alone."""
    doc = {
        "runtime": "slurm",
        "kind": "srun",
        "ranks_per_node": 4,
        "gpus": 4,
        "gpus_setting": "--gpus-per-task=1 x --ntasks-per-node=4",
        "gpu_bind": BIND_PER_TASK,
    }
    hpcx = dataclasses.replace(committed_facts("bookworm"), hpcx=Hpcx(version="2.18"))
    (f,) = found(evaluate(hpcx, gpu_node(4), MATRIX, job=parse_job_facts(doc, "job.json")), SUBSET)
    assert "HPC-X" in f.title and "Failed to register remote memory" in f.predicted_error
    # --gpu-bind=none: every task sees the node's GPUs
    unbound = parse_job_facts(dict(doc, gpu_bind="none"), "job.json")
    assert not found(evaluate(hpcx, gpu_node(4), MATRIX, job=unbound), SUBSET)


def test_gpus_per_task_with_one_task_per_node_is_no_split():
    """mosaicml-composer's sbatch: --gpus-per-task=8 with --ntasks-per-node 1: per-task binding read, one task per
    node sees all eight GPUs, so neither ranks past the GPUs nor a CUDA IPC split."""
    jobs = load_job_spec(os.path.join(REAL, "aws-mosaicml-mpt-manual-distributed.sbatch"))
    assert jobs and all(j.gpu_bind == BIND_PER_TASK for j in jobs)
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    for job in jobs:
        result = evaluate(image, gpu_node(8), MATRIX, job=job)
        assert not found(result, SUBSET) and not found(result, RANKS)


# --- partial specs ----------------------------------------------------------------------------------------------------


def test_a_spec_cut_with_an_ellipsis_leaves_devices_unknown():
    """nccl-tests.yaml as a thread posts it: the worker's resources shown, the rest cut with '...'. The whole file
    decides the device exposure; the cut one leaves devices and privileged unknown, so no finding (aks-rdma-30)."""
    path = os.path.join(REAL, "aws-eks-nccl-tests-mpijob.yaml")
    with open(path) as fh:
        text = fh.read()
    lines = text.splitlines()
    cut_at = next(i for i, line in enumerate(lines) if "resources:" in line)
    snippet = "\n".join(lines[: cut_at + 4] + ["        ..."]) + "\n"
    whole = parse_job_spec(text, path)
    cut = parse_job_spec(snippet, "snippet.yaml")
    assert all(j.completeness == COMPLETE for j in whole)
    assert cut and all(j.completeness == PARTIAL and j.privileged is None and j.devices is None for j in cut)
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    for job in cut:
        assert not found(evaluate(image, node(IB_NODE), MATRIX, job=job), "JOB-RDMA-DEVICES-NOT-EXPOSED")


# --- cluster components -----------------------------------------------------------------------------------------------


def test_device_plugin_daemonset_is_cluster_infrastructure():
    """NVIDIA's static device plugin DaemonSet on an InfiniBand node: the operator's own component, so no RDMA or
    NCCL rule of a job runs on it (the k8s-driver-manager#123 false alarm: RDMA-NO-LIBIBVERBS on a DaemonSet)."""
    (job,) = load_job_spec(os.path.join(REAL, "k8s-device-plugin-static-daemonset.yml"))
    image = dataclasses.replace(committed_facts("bookworm"), reference=job.image or "")
    result = evaluate(image, node(IB_NODE), MATRIX, job=job)
    ids = {f.id for f in result.findings}
    assert "JOB-CLUSTER-COMPONENT" in ids and "RDMA-NO-LIBIBVERBS" not in ids
    assert not any(u.rule.startswith(("JOB-RDMA", "RDMA-")) for u in result.unknowns)
    # a job image on the same node is evaluated as one
    assert "JOB-CLUSTER-COMPONENT" not in {
        f.id for f in evaluate(committed_facts("bookworm"), node(IB_NODE), MATRIX).findings
    }


def test_component_images_match_mirrors_that_keep_the_namespace():
    row = cluster_workloads.component_of(MATRIX, "registry.example.com/cloud-native/k8s-driver-manager:v0.9.0")
    assert row is not None and row["operator"] == "gpu-operator"
    assert cluster_workloads.component_of(MATRIX, "nvcr.io/nvidia/cuda:12.8.0-base-ubuntu24.04") is None
    assert cluster_workloads.component_of(MATRIX, "nvcr.io/nvidia/mellanox/doca-driver:doca3.1.0") is not None
