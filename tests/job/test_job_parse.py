"""Launch specs as their projects write them (tests/job/specs/, each naming its source) read into JobFacts."""

from __future__ import annotations

import os

import pytest

from imgcheck.errors import BadInputError
from imgcheck.job import RUNTIME_DOCKER, RUNTIME_ENROOT, RUNTIME_KUBERNETES, load_job_spec, parse_job_spec
from imgcheck.job.units import docker_size_bytes, k8s_quantity_bytes

SPECS = os.path.join(os.path.dirname(__file__), "specs")


def spec(name):
    return load_job_spec(os.path.join(SPECS, name))


def test_leaderworkerset_leader_and_worker_with_memory_backed_shm():
    jobs = spec("lws-vllm-gpu.yaml")
    assert [(j.kind, j.role, j.container) for j in jobs] == [
        ("LeaderWorkerSet", "leader", "vllm-leader"),
        ("LeaderWorkerSet", "worker", "vllm-worker"),
    ]
    worker = jobs[1]
    assert worker.runtime == RUNTIME_KUBERNETES and worker.image == "vllm/vllm-openai:v0.8.5"
    assert worker.gpus == 8 and worker.shm_size_mib == 15 * 1024  # emptyDir medium Memory, sizeLimit 15Gi
    assert worker.privileged is False and worker.devices == () and worker.cap_add == ()
    assert ("memory", "1124Gi") not in worker.resources  # plain resources are not device plugins
    assert worker.line == 42 and "lws-vllm-gpu.yaml line 42" in worker.where  # the Service document is skipped


def test_pytorchjob_replicas_resources_caps_env_and_nproc():
    master, worker = spec("pytorchjob-rdma.yaml")
    assert (master.role, worker.role) == ("Master", "Worker")
    assert dict(worker.resources)["rdma/rdma_shared_device_a"] == "1"
    assert worker.cap_add == ("IPC_LOCK",) and worker.ranks_per_node == 8
    assert master.shm_size_mib == -1  # Memory emptyDir without sizeLimit: sized by memory, not by the spec
    assert worker.shm_size_mib is None and worker.shm_setting is None  # runtime default applies
    assert master.env_value("NCCL_IB_HCA").value == "mlx5_0,mlx5_1"
    assert worker.env_value("NCCL_IB_HCA").line == 48  # the "- name: NCCL_IB_HCA" line


def test_mpijob_slots_per_worker_are_ranks_of_workers_only():
    launcher, worker = spec("mpijob.yaml")
    assert launcher.role == "Launcher" and launcher.ranks_per_node is None
    assert worker.ranks_per_node == 8 and worker.gpus == 8


def test_jobset_pod_template_privileged_host_network():
    (job,) = spec("jobset.yaml")
    assert (job.kind, job.role, job.privileged, job.host_network) == ("JobSet", "workers", True, True)


def test_pyxis_step_takes_sbatch_lines_exports_and_container_env():
    (step,) = spec("pyxis-nccl-tests.sbatch")
    assert step.runtime == RUNTIME_ENROOT
    assert step.image == "nvcr.io#nvidia/pytorch:24.05-py3"  # enroot's REGISTRY#IMAGE, not a comment
    assert step.ranks_per_node == 8 and step.gpus == 8 and step.workload == "nccl-allreduce"
    assert step.devices == ("/dev/infiniband",)
    assert step.env_overrides_image == ("NCCL_DEBUG",)
    assert step.env_value("NCCL_IB_HCA").value == "mlx5_9"
    # what the script cannot say stays unknown
    assert step.privileged is None and step.cap_add is None and step.memlock_kib is None and step.shm_size_mib is None


def test_ngc_docker_run_line():
    (run,) = spec("ngc-pytorch-run.sh")
    assert run.runtime == RUNTIME_DOCKER and run.image == "nvcr.io/nvidia/pytorch:24.05-py3"
    assert run.memlock_kib == -1 and run.host_ipc is True and run.gpus == -1


def test_vllm_run_cluster_flags_from_shell_arrays_stay_open():
    (run,) = spec("vllm-run_cluster.sh")
    assert run.image is None  # "${DOCKER_IMAGE}": known only when the script runs
    assert run.shm_size_mib == pytest.approx(10.24 * 1024) and run.host_network is True
    assert "${ADDITIONAL_ARGS[@]}" in run.open_flags


def test_compose_service_devices_ulimits_gpu_reservation():
    (svc,) = spec("compose-gpu.yaml")
    assert svc.kind == "compose" and svc.workload == "trainer"
    assert svc.devices == ("/dev/infiniband",) and svc.memlock_kib == 8192 and svc.gpus == 4


def test_docker_run_flag_forms():
    (run,) = parse_job_spec(
        "docker run --rm --device=/dev/infiniband/uverbs0 --cap-add=IPC_LOCK,SYS_NICE "
        "-e NCCL_IB_HCA=mlx5_0 -eUCX_TLS=rc --env HOME --shm-size=1g "
        "--ulimit memlock=67108864:67108864 img:1 python train.py --device cuda",
        "cmd",
    )
    assert run.image == "img:1" and run.devices == ("/dev/infiniband/uverbs0",)
    assert run.cap_add == ("IPC_LOCK", "SYS_NICE") and run.memlock_kib == 65536 and run.shm_size_mib == 1024
    assert [(e.name, e.value) for e in run.env] == [("NCCL_IB_HCA", "mlx5_0"), ("UCX_TLS", "rc"), ("HOME", None)]


def test_sizes_by_each_runtime_rules():
    assert k8s_quantity_bytes("15Gi") == 15 * 2**30 and k8s_quantity_bytes("1G") == 10**9
    assert docker_size_bytes("64m") == 64 * 2**20 and docker_size_bytes("1GB") == 2**30
    assert k8s_quantity_bytes("lots") is None and docker_size_bytes("1x") is None


@pytest.mark.parametrize(
    "text,words",
    [
        ("kind: Pod\nspec: [unclosed", "not valid YAML"),
        ("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "no container found (kinds: Service)"),
        ("#!/bin/sh\necho hello\n", "no `docker run` command found"),
        ("#SBATCH --nodes=2\nsrun hostname\n", "no `srun --container-image` step"),
    ],
)
def test_specs_that_cannot_be_read_are_bad_input(text, words):
    with pytest.raises(BadInputError) as err:
        parse_job_spec(text, "spec")
    assert words in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "text",
    [
        "kind: Pod\nspec: {containers: [{name: 1, image: 7, env: 5, resources: {limits: 3}, volumeMounts: [1]}], volumes: 3}\n",
        "kind: PyTorchJob\nspec: {pytorchReplicaSpecs: [1, 2]}\n",
        "kind: JobSet\nspec: {replicatedJobs: {a: 1}}\n",
        "services: {a: {image: x, ulimits: [1], environment: 5, devices: 3, deploy: {resources: 1}}}\n",
        "kind: Pod\nspec:\n  containers:\n" + "  - {name: c, image: i}\n" * 1001,
    ],
)
def test_odd_types_are_read_or_refused_in_one_line(text):
    try:
        jobs = parse_job_spec(text, "odd.yaml")
    except BadInputError as err:
        assert "\n" not in str(err) and "odd.yaml" in str(err)
    else:
        assert all(j.path == "odd.yaml" for j in jobs)


def test_mistyped_container_fields_become_strings_or_unknown():
    (job,) = parse_job_spec("kind: Pod\nspec: {containers: [{name: 1, image: 7, env: 5}]}\n", "odd.yaml")
    assert (job.container, job.image, job.env) == ("1", "7", ())


def test_too_many_containers_is_refused():
    with pytest.raises(BadInputError, match="more than 1000"):
        parse_job_spec("kind: Pod\nspec:\n  containers:\n" + "  - {name: c, image: i}\n" * 1001, "big.yaml")


def test_srun_short_flags_do_not_swallow_the_next_option():
    (step,) = parse_job_spec(
        "srun -l -N 2 --ntasks-per-node 4 --container-image=img:1 --container-env=NCCL_IB_HCA,UCX_TLS python x.py\n",
        "run.sbatch",
    )
    assert step.image == "img:1" and step.ranks_per_node == 4
    assert step.env_overrides_image == ("NCCL_IB_HCA", "UCX_TLS")


def test_running_matches_the_repository_at_any_tag_or_digest():
    from imgcheck.job import JobFacts
    from imgcheck.job.parse import running

    def c(image):
        return JobFacts(path="x.yaml", kind="Pod", runtime="kubernetes", image=image)

    jobs = [
        c("reg.example:5000/team/trainer:v1"),
        c("reg.example:5000/team/trainer@sha256:" + "a" * 64),
        c("reg.example:5000/team/trainer-eval:v1"),
        c("reg.example:5000#team/trainer"),  # Pyxis spelling
        c("team/trainer:v1"),
        c("$IMAGE"),
        c(None),
    ]
    assert [j.image for j in running(jobs, "reg.example:5000/team/trainer")] == [
        "reg.example:5000/team/trainer:v1",
        "reg.example:5000/team/trainer@sha256:" + "a" * 64,
        "reg.example:5000#team/trainer",
    ]
    # Docker Hub's spellings are one registry; another host's team/trainer is another image
    assert [j.image for j in running(jobs, "docker.io/team/trainer")] == ["team/trainer:v1"]
