"""Issue 32, launch facts per fabric: the RDMA consumer the image has (not NCCL by assumption), the device-plugin
resource of the node's fabric, and GKE's GPUDirect-TCPX(O) machine types that need hostNetwork or pod networks.

Real spec: GoogleCloudPlatform/container-engine-accelerators gpudirect-tcpxo/nccl-test-latest.yaml (specs/real,
source in SOURCES.md); the broken variants change the one field that breaks it."""

from __future__ import annotations

import dataclasses
import os

from engine_facts import committed_facts, matrix, node, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import load_job_spec, parse_job_spec
from imgcheck.job.facts_io import parse_job_facts
from imgcheck.model.node_io import parse_node_facts

REAL = os.path.join(os.path.dirname(__file__), "specs", "real")
MATRIX = matrix()
RDMA_NODE = "mofed-23.10-open-550-peermem"  # mlx5_0, mlx5_1, 8 H100
GKE = "JOB-GKE-GPU-NICS-NOT-IN-POD"


def found(result, rule):
    return [f for f in result.findings if f.id == rule]


def unknowns(result, rule):
    return [u for u in result.unknowns if u.rule == rule]


def a3_mega():
    """Node facts as a GKE A3 Mega node states them: its machine type label and 8 H100 (no RDMA devices: TCPXO)."""
    gpus = [{"index": i, "name": "NVIDIA H100 80GB HBM3", "gpu_class": "datacenter"} for i in range(8)]
    return parse_node_facts(
        {
            "name": "gke-a3-mega",
            "labels": {
                "node.kubernetes.io/instance-type": "a3-megagpu-8g",
                "cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb",
            },
            "gpu": {"driver_version": "550.90.07", "gpus": gpus},
        },
        "a3-mega.json",
    )


def tcpxo_pods():
    jobs = load_job_spec(os.path.join(REAL, "gke-tcpxo-nccl-test-latest.yaml"))
    return [j for j in jobs if j.container == "nccl-test"], [j for j in jobs if j.container == "tcpxo-daemon"]


# ---- GKE GPUDirect-TCPXO: hostNetwork or one pod network per GPU NIC ----
def test_tcpxo_manifest_with_multinetwork_annotations_is_decided_fine():
    workers, daemons = tcpxo_pods()
    assert len(workers) == 2 and all(len(w.pod_networks or ()) == 8 for w in workers)
    assert workers[0].pod_networks[0] == "eth1:vpc1" and workers[0].host_network is False
    img = with_nccl(committed_facts("bookworm"), "2.21.5")
    for job in workers + daemons:
        result = evaluate(img, a3_mega(), MATRIX, job=job)
        assert not found(result, GKE) and not unknowns(result, GKE), job.where


def test_tcpxo_pod_without_networks_or_host_network_is_found():
    (worker, _), _ = tcpxo_pods()
    img = with_nccl(committed_facts("bookworm"), "2.21.5")
    (f,) = found(evaluate(img, a3_mega(), MATRIX, job=dataclasses.replace(worker, pod_networks=())), GKE)
    assert f.severity == "warning" and "GPUDirect-TCPXO" in f.title and "8 GPU NICs" in f.title
    assert any("hostNetwork: true" in fix for fix in f.fixes)
    # four of eight NICs attached: the "some" variant
    (some,) = found(
        evaluate(img, a3_mega(), MATRIX, job=dataclasses.replace(worker, pod_networks=worker.pod_networks[:4])), GKE
    )
    assert "attaches 4 pod networks" in some.title
    # the older manifests' hostNetwork: true
    fixed = dataclasses.replace(worker, pod_networks=(), host_network=True)
    assert not found(evaluate(img, a3_mega(), MATRIX, job=fixed), GKE)
    # not a TCPX(O) machine type: nothing to say
    assert not found(evaluate(img, node(RDMA_NODE), MATRIX, job=dataclasses.replace(worker, pod_networks=())), GKE)


def test_facts_file_without_pod_networks_but_no_host_network_is_decided():
    """A facts file that states hostNetwork false and names no pod network attaches none (the pod has eth0 only)."""
    job = parse_job_facts(
        {
            "runtime": "kubernetes",
            "kind": "Pod",
            "host_network": False,
            "gpus": 8,
            "resources": {"nvidia.com/gpu": "8"},
        },
        "pod.json",
    )
    assert found(evaluate(committed_facts("bookworm"), a3_mega(), MATRIX, job=job), GKE)
    silent = parse_job_facts({"runtime": "kubernetes", "kind": "Pod", "gpus": 8}, "pod.json")
    assert unknowns(evaluate(committed_facts("bookworm"), a3_mega(), MATRIX, job=silent), GKE)


# ---- memlock: whichever library of the image opens the devices ----
def test_no_ipc_lock_names_ucx_when_the_image_has_no_nccl():
    """The real bookworm image ships UCX 1.13 with uct_ib and no NCCL: the finding is UCX's, unconditional."""
    img = committed_facts("bookworm")
    assert not img.nccl and img.ucx is not None
    (job,) = parse_job_spec("docker run --device /dev/infiniband img", "cmd")
    (f,) = found(evaluate(img, node(RDMA_NODE), MATRIX, job=job), "JOB-NO-IPC-LOCK")
    assert not f.assumes
    assert "UCX" in f.mechanism and "ibv_create_cq" in (f.predicted_error or "")
    assert any(e.fact == "job.rdma_consumers" and "UCX" in str(e.value) for e in f.evidence)
    (locked,) = parse_job_spec("docker run --device /dev/infiniband --cap-add IPC_LOCK img", "cmd")
    assert not found(evaluate(img, node(RDMA_NODE), MATRIX, job=locked), "JOB-NO-IPC-LOCK")


def test_no_consumer_when_the_job_turns_nccl_ib_off():
    img = with_nccl(committed_facts("bookworm"), "2.21.5", env={"NCCL_IB_DISABLE": "1"})
    (job,) = parse_job_spec("docker run --gpus all img", "cmd")
    assert not found(evaluate(img, node(RDMA_NODE), MATRIX, job=job), "JOB-RDMA-DEVICES-NOT-EXPOSED")


# ---- the device-plugin resource of the node's fabric ----
def _efa_node():
    devices = [{"name": f"rdmap{79 + i}s0", "driver": "efa"} for i in range(4)]
    return parse_node_facts({"name": "p5", "rdma": {"stack": "inbox", "devices": devices}}, "p5.json")


def test_efa_pod_without_the_efa_resource_is_decided_and_the_fix_names_it():
    img = committed_facts("bookworm")
    pod = {"runtime": "kubernetes", "kind": "Pod", "devices": [], "resources": {"nvidia.com/gpu": "8"}, "gpus": 8}
    (f,) = found(
        evaluate(img, _efa_node(), MATRIX, job=parse_job_facts(pod, "pod.json")), "JOB-RDMA-DEVICES-NOT-EXPOSED"
    )
    assert not f.assumes and "vpc.amazonaws.com/efa" in f.fixes[0] and "(4 here)" in f.fixes[0]
    plugged = dict(pod, resources={"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "4"})
    result = evaluate(img, _efa_node(), MATRIX, job=parse_job_facts(plugged, "pod.json"))
    assert not found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")
    # facts that state a pod's resources but neither devices nor privileged are a part of the pod (a thread's
    # truncated spec): the rest is unknown, never the pod spec's defaults (the aks-rdma-infiniband-30 false alarm)
    plain = {"runtime": "kubernetes", "kind": "Pod", "resources": {"nvidia.com/gpu": "8"}, "gpus": 8}
    result = evaluate(img, _efa_node(), MATRIX, job=parse_job_facts(plain, "p.json"))
    assert not found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")
    assert any("not shown" in u.reason for u in unknowns(result, "JOB-RDMA-DEVICES-NOT-EXPOSED"))
    # the same facts said to be the whole pod: its defaults (no hostPath device, not privileged) decide
    whole = dict(plain, completeness="complete")
    (f,) = found(
        evaluate(img, _efa_node(), MATRIX, job=parse_job_facts(whole, "p.json")), "JOB-RDMA-DEVICES-NOT-EXPOSED"
    )
    assert not f.assumes
    # facts that state none of resources, devices, privileged: undecided
    vague = {"runtime": "kubernetes", "kind": "Pod", "gpus": 8}
    result = evaluate(img, _efa_node(), MATRIX, job=parse_job_facts(vague, "pod.json"))
    assert not found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED") and unknowns(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")


def test_enroot_without_infiniband_nodes_and_without_mellanox_visible_devices():
    """enroot binds the host's /dev unless ENROOT_RESTRICT_DEV; its 99-mellanox hook adds HCAs only with
    MELLANOX_VISIBLE_DEVICES set. Facts that give the step no /dev/infiniband and no such variable: not exposed."""
    img = committed_facts("bookworm")  # UCX with uct_ib
    step = {"runtime": "slurm", "kind": "srun --container-image", "devices": []}
    (f,) = found(
        evaluate(img, node(RDMA_NODE), MATRIX, job=parse_job_facts(step, "s.json")), "JOB-RDMA-DEVICES-NOT-EXPOSED"
    )
    assert "MELLANOX_VISIBLE_DEVICES=all" in f.fixes[0]
    hooked = dict(step, env={"MELLANOX_VISIBLE_DEVICES": "all"})
    assert not found(
        evaluate(img, node(RDMA_NODE), MATRIX, job=parse_job_facts(hooked, "s.json")), "JOB-RDMA-DEVICES-NOT-EXPOSED"
    )
    # a script step that mounts nothing under /dev: enroot's default mounts give the host's /dev
    (parsed,) = parse_job_spec(
        "#!/bin/bash\nsrun --container-image=nvcr.io#nvidia/pytorch:24.05-py3 python t.py\n", "s.sbatch"
    )
    assert not found(evaluate(img, node(RDMA_NODE), MATRIX, job=parsed), "JOB-RDMA-DEVICES-NOT-EXPOSED")


# ---- Pyxis named containers: a later step with the same --container-name uses the earlier step's container ----
# The shape of TensorRT-LLM's disaggregated-serving launch before NVIDIA/TensorRT-LLM#12370 (one named container,
# one background step per server, CUDA_VISIBLE_DEVICES given per step through srun --export)
_DISAGG = """#!/bin/bash
#SBATCH --nodes=1
srun --container-image=nvcr.io/nvidia/tensorrt-llm/release:1.0.0 --container-name=disagg --export=ALL,CUDA_VISIBLE_DEVICES=0 python3 -m serve ctx &
srun --container-name=disagg --export=ALL,CUDA_VISIBLE_DEVICES=1 python3 -m serve gen &
wait
"""


def test_pyxis_step_reusing_a_named_container_with_other_env_is_found():
    first, second = parse_job_spec(_DISAGG, "disagg.sbatch")
    assert first.container == second.container == "disagg"
    assert first.container_reuse is None and second.container_reuse == "earlier-step"
    assert second.reuse_conflicts == ("CUDA_VISIBLE_DEVICES",)
    img = with_nccl(committed_facts("bookworm"), "2.21.5")
    (f,) = found(evaluate(img, node(RDMA_NODE), MATRIX, job=second), "JOB-PYXIS-CONTAINER-REUSED")
    assert "CUDA_VISIBLE_DEVICES" in f.title and f.severity == "warning"
    # the first step: whether a container of that name survives from an earlier job is not in the script
    assert unknowns(evaluate(img, node(RDMA_NODE), MATRIX, job=first), "JOB-PYXIS-CONTAINER-REUSED")
    # --container-env keeps the step's own value: nothing to say
    kept = _DISAGG.replace(
        "--container-name=disagg --export", "--container-name=disagg --container-env=CUDA_VISIBLE_DEVICES --export"
    )
    steps = parse_job_spec(kept, "disagg.sbatch")
    assert not steps[1].reuse_conflicts
    assert not found(evaluate(img, node(RDMA_NODE), MATRIX, job=steps[1]), "JOB-PYXIS-CONTAINER-REUSED")
    # :create makes a new container
    created = parse_job_spec(
        _DISAGG.replace(
            "--container-name=disagg --export=ALL,CUDA_VISIBLE_DEVICES=1",
            "--container-name=disagg2:create --export=ALL,CUDA_VISIBLE_DEVICES=1",
        ),
        "d.sbatch",
    )
    assert created[1].container_reuse == "new"


# ---- GPUs of one node split over containers while NCCL's P2P expects CUDA IPC between them ----
def _two_gpu_node():
    gpus = [{"index": i, "name": "Tesla V100-SXM2-32GB", "gpu_class": "datacenter"} for i in range(2)]
    return parse_node_facts({"name": "nvlink-2gpu", "gpu": {"gpus": gpus}}, "n.json")


def test_gpu_subset_per_container_is_found_asked_or_decided():
    img = with_nccl(committed_facts("bookworm"), "2.21.5")
    (one,) = parse_job_spec("docker run --gpus device=0 --network host img", "cmd")
    assert one.gpus == 1
    # one container seen alone: whether the node's other GPU runs a rank of the same job in another container is asked
    assert unknowns(evaluate(img, _two_gpu_node(), MATRIX, job=one), "JOB-GPU-SUBSET-CUDA-IPC")
    (f,) = found(
        evaluate(img, _two_gpu_node(), MATRIX, job=dataclasses.replace(one, containers_per_node=2)),
        "JOB-GPU-SUBSET-CUDA-IPC",
    )
    assert f.severity == "warning" and "1 of its 2 GPUs" in f.title
    off = with_nccl(committed_facts("bookworm"), "2.21.5", env={"NCCL_P2P_DISABLE": "1"})
    job = dataclasses.replace(one, containers_per_node=2)
    assert not found(evaluate(off, _two_gpu_node(), MATRIX, job=job), "JOB-GPU-SUBSET-CUDA-IPC")
    (every,) = parse_job_spec("docker run --gpus all --ipc host --network host img", "cmd")
    result = evaluate(img, _two_gpu_node(), MATRIX, job=dataclasses.replace(every, containers_per_node=2))
    assert not found(result, "JOB-GPU-SUBSET-CUDA-IPC") and not unknowns(result, "JOB-GPU-SUBSET-CUDA-IPC")
