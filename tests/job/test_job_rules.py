"""The job_launch rules over real spec shapes, the committed facts of a real Debian rdma image (plus NCCL) and
committed node facts. Each rule has a failing and a working launch."""

from __future__ import annotations

import dataclasses
import os

import pytest
from engine_facts import committed_facts, matrix, node, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import EnvVar, load_job_spec, parse_job_spec
from imgcheck.model.node import Limits

SPECS = os.path.join(os.path.dirname(__file__), "specs")
MATRIX = matrix()
RDMA_NODE = "mofed-23.10-open-550-peermem"  # mlx5_0, mlx5_1, 8 H100, memlock unlimited


def spec(name):
    return load_job_spec(os.path.join(SPECS, name))


def image(**env):
    return with_nccl(committed_facts("bookworm"), "2.21.5", env=env)


def run(job, img=None, nd=None):
    return evaluate(img or image(), nd or node(RDMA_NODE), MATRIX, job=job)


def found(result, rule):
    return [f for f in result.findings if f.id == rule]


def unknowns(result, rule):
    return [u for u in result.unknowns if u.rule == rule]


# ---- RDMA devices ----
def test_lws_without_rdma_resource_falls_back_to_sockets():
    worker = spec("lws-vllm-gpu.yaml")[1]
    (f,) = found(run(worker), "JOB-RDMA-DEVICES-NOT-EXPOSED")
    assert f.severity == "warning" and "Socket" in f.predicted_error
    assert "container vllm-worker" in f.mechanism and "line 42" in f.mechanism
    assert all(e.path == worker.path for e in f.evidence if e.fact.startswith("job."))


def test_rdma_resource_privileged_or_device_exposes():
    for job in (spec("pytorchjob-rdma.yaml")[1], spec("jobset.yaml")[0], spec("compose-gpu.yaml")[0]):
        assert not found(run(job), "JOB-RDMA-DEVICES-NOT-EXPOSED"), job.where


def test_no_finding_without_rdma_on_the_node_or_with_ib_disabled():
    worker = spec("lws-vllm-gpu.yaml")[1]
    assert not found(run(worker, nd=node("cpu-no-rdma")), "JOB-RDMA-DEVICES-NOT-EXPOSED")
    assert not found(run(worker, img=image(NCCL_IB_DISABLE="1")), "JOB-RDMA-DEVICES-NOT-EXPOSED")


def test_other_device_plugin_or_shell_array_flags_make_it_unknown():
    (pod,) = parse_job_spec(
        """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: img
    resources: {limits: {nvidia.com/gpu: 8, example.com/nic: 1}}
""",
        "pod.yaml",
    )
    result = run(pod)
    assert not found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")
    assert "example.com/nic" in unknowns(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")[0].reason
    (vllm,) = spec("vllm-run_cluster.sh")
    result = run(vllm)
    assert not found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")
    assert "${ADDITIONAL_ARGS[@]}" in unknowns(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")[0].reason


def test_pyxis_step_without_infiniband_mount_gets_enroots_host_dev():
    # enroot's default mount table rbinds the host's /dev and binds its /dev/shm (conf/mounts/10-system.fstab)
    (step,) = parse_job_spec(
        "#SBATCH --ntasks-per-node=8\nsrun --container-image=nvcr.io#nvidia/pytorch:24.05-py3 python train.py\n",
        "job.sbatch",
    )
    result = run(step)
    assert not found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED") and not unknowns(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")
    assert not found(result, "JOB-SHM-TOO-SMALL") and not unknowns(result, "JOB-SHM-TOO-SMALL")


# ---- memlock and IPC_LOCK ----
def test_compose_memlock_8mib_fails_registration():
    (svc,) = spec("compose-gpu.yaml")
    (f,) = found(run(svc), "JOB-MEMLOCK-TOO-LOW")
    assert f.severity == "error" and "8192 KiB" in f.title and "Cannot allocate memory" in f.predicted_error


def test_memlock_unlimited_or_ipc_lock_passes():
    (ngc,) = spec("ngc-pytorch-run.sh")
    assert not found(run(ngc), "JOB-MEMLOCK-TOO-LOW") and not found(run(ngc), "JOB-NO-IPC-LOCK")
    (svc,) = spec("compose-gpu.yaml")
    with_cap = dataclasses.replace(svc, cap_add=("IPC_LOCK",))
    assert not found(run(with_cap), "JOB-MEMLOCK-TOO-LOW")  # ib_umem_get skips the limit for CAP_IPC_LOCK


def test_large_finite_memlock_is_only_info():
    (run_line,) = parse_job_spec("docker run --device /dev/infiniband --ulimit memlock=1073741824 img", "cmd")
    (f,) = found(run(run_line), "JOB-MEMLOCK-TOO-LOW")
    assert f.severity == "info"


def test_kubernetes_rdma_pod_without_ipc_lock_warns_unless_node_jobs_are_unlimited():
    worker = dataclasses.replace(spec("pytorchjob-rdma.yaml")[1], cap_add=())
    nd = node(RDMA_NODE, limits=Limits(memlock_kib=None))
    (f,) = found(run(worker, nd=nd), "JOB-NO-IPC-LOCK")
    assert f.severity == "warning" and "IPC_LOCK" in f.fixes[0]
    assert not found(run(worker), "JOB-NO-IPC-LOCK")  # the node facts say jobs get memlock unlimited
    assert not found(run(spec("pytorchjob-rdma.yaml")[1], nd=nd), "JOB-NO-IPC-LOCK")  # the spec adds IPC_LOCK


# ---- /dev/shm ----
def test_mpijob_workers_get_the_pod_default_64mib_for_8_ranks():
    worker = spec("mpijob.yaml")[1]
    # NCCL 2.21.5: 9633792 bytes of LL + LL128 + Simple buffers per receiving connection (nccl_shm_buffers, from
    # shm.cc and init.cc at the tags), 8 receivers on each of at least 2 channels: 147.0 MiB > 64 MiB
    (f,) = found(run(worker, img=image(NCCL_P2P_DISABLE="1")), "JOB-SHM-TOO-SMALL")
    assert f.severity == "error" and not f.assumes
    assert "at least 147.0 MiB for 8 ranks" in f.title and "containerd's and CRI-O's pod default" in f.mechanism
    # P2P not known off: which transport the node's GPUs use is its topology's, so the finding is conditional
    (g,) = found(run(worker), "JOB-SHM-TOO-SMALL")
    assert g.assumes and "P2P" in g.assumes[0] and "node.gpu.p2p" in g.assumed_facts


def test_shm_need_follows_the_buffer_and_channel_settings():
    worker = spec("mpijob.yaml")[1]
    # one channel of 1 MiB Simple buffers: 8 x (0.5 + 4.6875 + 1) MiB = 49.5 MiB fits in 64 MiB at any channel count
    small = image(NCCL_P2P_DISABLE="1", NCCL_BUFFSIZE="1048576", NCCL_MAX_NCHANNELS="1")
    result = run(worker, img=small)
    assert not found(result, "JOB-SHM-TOO-SMALL") and not unknowns(result, "JOB-SHM-TOO-SMALL")
    # 2 ranks: 36.75 MiB at the least 2 channels, more with more channels: not decided either way
    two = dataclasses.replace(worker, ranks_per_node=2)
    result = run(two, img=image(NCCL_P2P_DISABLE="1"))
    (u,) = unknowns(result, "JOB-SHM-TOO-SMALL")
    assert not found(result, "JOB-SHM-TOO-SMALL") and "36.8 MiB" in u.reason and "NCCL_MAX_NCHANNELS" in u.reason


def test_a_facts_file_that_does_not_mention_shm_asks():
    from imgcheck.job.facts_io import parse_job_facts

    silent = parse_job_facts({"runtime": "docker", "kind": "docker run", "gpus": 8, "ranks_per_node": 8}, "f.json")
    result = run(silent, img=image(NCCL_P2P_DISABLE="1"))
    (u,) = unknowns(result, "JOB-SHM-TOO-SMALL")
    assert not found(result, "JOB-SHM-TOO-SMALL") and "shm_size_mib" in u.reason
    stated = parse_job_facts({**_as_doc(silent), "shm_size_mib": None}, "f.json")  # null: no --shm-size given
    assert found(run(stated, img=image(NCCL_P2P_DISABLE="1")), "JOB-SHM-TOO-SMALL")


def _as_doc(job):
    return {"runtime": job.runtime, "kind": job.kind, "gpus": job.gpus, "ranks_per_node": job.ranks_per_node}


def test_shm_sized_by_the_spec_or_host_ipc_or_disabled_passes():
    lws_worker = spec("lws-vllm-gpu.yaml")[1]  # 15Gi Memory emptyDir
    master = spec("pytorchjob-rdma.yaml")[0]  # Memory emptyDir without sizeLimit
    (ngc,) = spec("ngc-pytorch-run.sh")  # --ipc=host
    for job in (lws_worker, master, ngc):
        assert not found(run(job), "JOB-SHM-TOO-SMALL"), job.where
    assert not found(run(spec("mpijob.yaml")[1], img=image(NCCL_SHM_DISABLE="1")), "JOB-SHM-TOO-SMALL")


def test_docker_gpus_all_counts_the_nodes_gpus():
    (small,) = parse_job_spec("docker run --gpus all img", "cmd")  # Docker's 64 MiB default, 8 GPUs on the node
    assert found(run(small), "JOB-SHM-TOO-SMALL")  # a parsed launch line states its flags: no --shm-size
    (big,) = parse_job_spec("docker run --gpus all --shm-size 1g img", "cmd")
    assert not found(run(big), "JOB-SHM-TOO-SMALL")


def test_shm_of_unknown_size_or_ranks_is_unknown():
    (svc,) = spec("compose-gpu.yaml")
    one_rank = dataclasses.replace(svc, gpus=None)
    result = run(one_rank)
    assert not found(result, "JOB-SHM-TOO-SMALL") and unknowns(result, "JOB-SHM-TOO-SMALL")


# ---- env ----
def test_job_env_names_an_hca_the_node_lacks():
    worker = spec("pytorchjob-rdma.yaml")[1]  # NCCL_IB_HCA=mlx5_4; node has mlx5_0, mlx5_1
    (f,) = found(run(worker), "ENV-NCCL-IB-HCA-NO-DEVICE")
    ev = next(e for e in f.evidence if e.fact == "job.env.NCCL_IB_HCA")
    assert ev.value == "mlx5_4" and ev.path == worker.path
    assert "env line 48" in f.title or "env line 48" in f.mechanism
    assert not found(run(spec("pytorchjob-rdma.yaml")[0]), "ENV-NCCL-IB-HCA-NO-DEVICE")  # the master's list exists


def test_job_env_overrides_the_images_env():
    worker = spec("pytorchjob-rdma.yaml")[1]
    result = run(worker, img=image(NCCL_IB_HCA="mlx5_0"))
    (f,) = found(result, "JOB-ENV-OVERRIDES-IMAGE")
    assert f.severity == "info" and "mlx5_4" in f.title and "mlx5_0" in f.title
    assert found(result, "ENV-NCCL-IB-HCA-NO-DEVICE")  # the engine judges the value in force: the job's


def test_pyxis_export_loses_to_the_image_env_unless_container_env_names_it():
    (step,) = spec("pyxis-nccl-tests.sbatch")  # exports NCCL_IB_HCA=mlx5_9; --container-env=NCCL_DEBUG only
    result = run(step, img=image(NCCL_IB_HCA="mlx5_0"))
    (f,) = found(result, "JOB-ENV-SHADOWED-BY-IMAGE")
    assert f.severity == "warning" and "--container-env=NCCL_IB_HCA" in f.fixes[0]
    assert not found(result, "ENV-NCCL-IB-HCA-NO-DEVICE")  # mlx5_0 (the image's) is what NCCL gets
    # the image does not set it: the exported value is what the container gets
    assert found(run(step), "ENV-NCCL-IB-HCA-NO-DEVICE")
    named = dataclasses.replace(step, env_overrides_image=("NCCL_IB_HCA",))
    result = run(named, img=image(NCCL_IB_HCA="mlx5_0"))
    assert found(result, "ENV-NCCL-IB-HCA-NO-DEVICE") and not found(result, "JOB-ENV-SHADOWED-BY-IMAGE")


def test_no_spec_no_job_findings():
    result = run(None)
    assert not [f for f in result.findings if f.id.startswith("JOB-")]
    assert not [u for u in result.unknowns if u.rule.startswith("JOB-")]


def test_nccl_net_ib_with_no_device_is_an_error_not_a_fallback():
    worker = spec("lws-vllm-gpu.yaml")[1]
    forced = dataclasses.replace(worker, env=worker.env + (EnvVar("NCCL_NET", "IB", 60),))
    (f,) = found(run(forced), "JOB-RDMA-DEVICES-NOT-EXPOSED")
    assert f.severity == "error" and "network IB not found" in f.predicted_error
    assert any(e.fact == "job.env.NCCL_NET" for e in f.evidence)


def test_a_kubernetes_container_without_gpus_runs_no_rank():
    launcher, worker = spec("mpijob.yaml")
    result = run(launcher)
    assert not [f for f in result.findings if f.id.startswith("JOB-")]
    assert not [u for u in result.unknowns if u.rule.startswith("JOB-")]
    (f,) = found(run(worker), "JOB-RDMA-DEVICES-NOT-EXPOSED")
    assert f.title.startswith("mpi-worker:") and f.fixes[0].startswith("Kubernetes:")
    (shm,) = found(run(worker), "JOB-SHM-TOO-SMALL")
    assert shm.fixes[0].startswith("Kubernetes:")


def test_resource_claims_and_env_from_are_unknowns():
    (pod,) = parse_job_spec(
        """kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: img
    envFrom: [{configMapRef: {name: nccl-env}}]
    resources:
      limits: {nvidia.com/gpu: 8}
      claims: [{name: nic}]
""",
        "pod.yaml",
    )
    result = run(pod)
    assert not found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")
    assert "resourceClaim/nic" in unknowns(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")[0].reason
    assert unknowns(result, "JOB-ENV-OVERRIDES-IMAGE")


def test_nccl_net_socket_means_no_rdma_expected():
    worker = spec("lws-vllm-gpu.yaml")[1]
    sockets = dataclasses.replace(worker, env=worker.env + (EnvVar("NCCL_NET", "Socket", 60),))
    assert not found(run(sockets), "JOB-RDMA-DEVICES-NOT-EXPOSED")


def test_env_findings_never_show_values_of_other_variables():
    (step,) = parse_job_spec("export HF_TOKEN=hf_job_secret\nsrun --container-image=img python x.py\n", "job.sbatch")
    result = run(step, img=image(HF_TOKEN="hf_image_secret"))
    text = repr(result)
    assert "hf_job_secret" not in text and "hf_image_secret" not in text


def test_a_docker_run_without_devices_is_decided_from_the_spec():
    """Docker has no device plugins (no extended resources): devices [] and not privileged decide that the
    container gets no /dev/infiniband, even when the facts leave `resources` unsaid (a facts file)."""
    (job,) = parse_job_spec(
        "docker run --gpus all --network host --ipc host nvcr.io/nvidia/pytorch:24.05-py3\n", "run.sh"
    )
    bare = dataclasses.replace(job, resources=None)
    for j in (job, bare):
        (f,) = found(run(j), "JOB-RDMA-DEVICES-NOT-EXPOSED")
        assert f.severity == "warning" and not unknowns(run(j), "JOB-RDMA-DEVICES-NOT-EXPOSED")
    k8s = dataclasses.replace(bare, runtime="kubernetes", kind="Pod")
    assert not found(run(k8s), "JOB-RDMA-DEVICES-NOT-EXPOSED")  # a device plugin may add them: asked
    assert unknowns(run(k8s), "JOB-RDMA-DEVICES-NOT-EXPOSED")


def test_a_near_miss_variable_name_reaches_no_library():
    """A name no enumerated catalog lists, one edit from one that NCCL reads (the N of NCCL dropped), is flagged
    with the name meant; names other libraries read (RCCL_, HCCL_, UCC_, NVSHMEM_) and ordinary ones are not."""
    (job,) = parse_job_spec("docker run --gpus all --device /dev/infiniband -e CCL_NET_GDR_LEVEL=PHB img\n", "run.sh")
    (f,) = found(run(job), "ENV-PARAM-NEAR-MISS")
    assert "NCCL_NET_GDR_LEVEL" in f.title and "CCL_NET_GDR_LEVEL" in f.fixes[0] and f.evidence[0].value == "PHB"
    both = dataclasses.replace(job, env=(*job.env, EnvVar("NCCL_NET_GDR_LEVEL", "PHB")))
    assert not found(run(both), "ENV-PARAM-NEAR-MISS")  # the right name is set too
    others = ("RCCL_MSCCL_ENABLE", "HCCL_SOCKET_IFNAME", "UCC_TLS", "NVSHMEM_IB_GID_INDEX", "CUDA_MODULE_LOADING")
    assert not found(run(both, img=image(**{n: "1" for n in others})), "ENV-PARAM-NEAR-MISS")
    assert [f.title.split()[0] for f in found(run(None, img=image(NCLL_DEBUG="INFO")), "ENV-PARAM-NEAR-MISS")] == [
        "NCLL_DEBUG"
    ]


def test_shm_need_of_a_release_after_the_last_tag_read_is_assumed():
    worker = spec("mpijob.yaml")[1]
    newer = with_nccl(
        committed_facts("bookworm"), "2.99.1", env={"NCCL_P2P_DISABLE": "1", "NCCL_CUMEM_HOST_ENABLE": "0"}
    )
    (f,) = found(run(worker, img=newer), "JOB-SHM-TOO-SMALL")
    assert f.assumes and "newest release read" in f.assumes[0] and "147.0 MiB" in f.title
