"""Issue 33, job spec: real launch specs from public repositories (verbatim, sources in specs/real/SOURCES.md),
read and judged with the committed facts of a real Debian rdma image (plus NCCL) and committed node facts.

Each bullet has a spec that must raise nothing (the spec is right) and, where the mechanism can fail, the same
real spec with the one field changed that breaks it."""

from __future__ import annotations

import dataclasses
import os

import pytest
from engine_facts import committed_facts, matrix, node, with_nccl

from imgcheck.cli.main import main
from imgcheck.engine import evaluate
from imgcheck.errors import BadInputError
from imgcheck.job import load_job_spec, parse_job_spec
from imgcheck.job.model import FORM_AMBIGUOUS, FORM_DOCKER_HUB, FORM_REGISTRY, FORM_SQUASHFS
from imgcheck.job.slurm import image_form

REAL = os.path.join(os.path.dirname(__file__), "specs", "real")
MATRIX = matrix()
RDMA_NODE = "mofed-23.10-open-550-peermem"  # mlx5_0, mlx5_1, 8 H100, memlock unlimited


def real(name):
    return load_job_spec(os.path.join(REAL, name))


def text(name):
    with open(os.path.join(REAL, name)) as f:
        return f.read()


def image(nccl="2.21.5", **env):
    return with_nccl(committed_facts("bookworm"), nccl, env=env)


def run(job, img=None, nd=None):
    return evaluate(img or image(), nd or node(RDMA_NODE), MATRIX, job=job)


def found(result, rule):
    return [f for f in result.findings if f.id == rule]


def unknowns(result, rule):
    return [u for u in result.unknowns if u.rule == rule]


def alarms(result):
    return [f.id for f in result.findings if f.id.startswith("JOB-") and f.severity in ("error", "warning")]


def test_every_real_spec_names_its_source():
    with open(os.path.join(REAL, "SOURCES.md")) as f:
        sources = f.read()
    for name in os.listdir(REAL):
        if name != "SOURCES.md":
            assert f"| {name} | https://github.com/" in sources, name


# ---- env and arrays in sbatch scripts ----
def test_sbatch_array_of_pyxis_flags_is_expanded():
    (step,) = real("aws-nccl-tests-container.sbatch")
    assert step.line == 59 and not step.open_flags  # srun "${ARGS[@]}" ...: ARGS is declared at the top level
    assert step.image is None  # --container-image $IMAGE, and IMAGE is : "${IMAGE:=...}": the submitter may set it
    assert any("IMAGE defaults to $APPS_PATH/nccl-tests.sqsh" in n for n in step.notes)
    assert step.env_value("FI_PROVIDER").value == "efa" and step.env_value("NCCL_DEBUG").value == "INFO"
    assert step.env_value("NCCL_TUNER_PLUGIN").value is None  # $(uname -m) is known only on the node
    assert step.ranks_per_node == 8 and step.gpus is None  # ###SBATCH --gpus-per-node is commented out


def test_array_set_under_a_condition_stays_open():
    (step,) = real("aws-fsdp-llama2_70b-training.sbatch")
    assert "${ARGS[@]}" in step.open_flags and step.env_incomplete
    result = run(step)
    assert not alarms(result)
    assert unknowns(result, "JOB-ENV-OVERRIDES-IMAGE")


def test_mpijob_launcher_env_reaches_the_workers():
    launcher, worker = real("aws-eks-nccl-tests-mpijob.yaml")
    assert worker.env_value("FI_PROVIDER").value == "efa"
    assert worker.env_value("NCCL_BUFFSIZE").value == "8388608"
    assert worker.env_value("OMPI_MCA_pml").value == "^ucx"  # --mca pml ^ucx
    assert worker.env_value("OMPI_MCA_btl_tcp_if_exclude").value == "lo,docker0,veth_def_agent"
    assert worker.env_value("PATH").value is None  # -x PATH: the launcher's "$PATH:..." is expanded at run time
    assert worker.ranks_per_node == 8 and worker.ranks_setting == "Launcher mpirun -N 8"
    assert not launcher.env_value("FI_PROVIDER")  # the launcher runs mpirun, no rank


def test_launcher_env_is_judged_against_the_image_env():
    worker = real("aws-eks-nccl-tests-mpijob.yaml")[1]
    result = run(worker, img=image(NCCL_DEBUG="WARN"))
    (f,) = found(result, "JOB-ENV-OVERRIDES-IMAGE")
    assert "NCCL_DEBUG" in f.title


# ---- /dev/shm from the host ----
def test_hostpath_dev_shm_is_the_hosts_shm():
    worker = real("aws-eks-nccl-tests-mpijob.yaml")[1]
    assert worker.shm_from_host and "hostPath /dev/shm" in worker.shm_setting
    assert not found(run(worker), "JOB-SHM-TOO-SMALL")
    without = parse_job_spec(
        text("aws-eks-nccl-tests-mpijob.yaml").replace(
            "            - name: shmem\n              mountPath: /dev/shm\n", ""
        ),
        "aws-eks-nccl-tests-mpijob.yaml",
    )[1]
    (f,) = found(run(without), "JOB-SHM-TOO-SMALL")  # containerd's 64 MiB for the 8 ranks mpirun -N starts
    assert "8 ranks" in f.title


def test_envsubst_pytorchjob_hostpath_shm_and_efa():
    (worker,) = real("aws-fsdp-llama2_13b-pytorchjob.yaml")
    assert worker.image is None  # ${IMAGE_URI}: filled in by envsubst, not in the file
    assert worker.shm_from_host and worker.gpus is None
    assert ("nvidia.com/gpu", "$GPU_PER_NODE") in worker.resources  # a GPU count envsubst fills in: GPU ranks
    result = run(worker)
    assert not found(result, "JOB-SHM-TOO-SMALL") and not found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")
    assert not unknowns(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")  # vpc.amazonaws.com/efa: $EFA_PER_NODE


def test_docker_volume_and_pyxis_mount_of_dev_shm():
    (job,) = parse_job_spec("docker run --gpus all -v /dev/shm:/dev/shm img", "run.sh")
    assert job.shm_from_host and not found(run(job), "JOB-SHM-TOO-SMALL")
    (step,) = parse_job_spec("srun --container-image=a#b --container-mounts=/dev/shm:/dev/shm cmd\n", "x.sbatch")
    assert step.shm_from_host and step.devices is None  # /dev/shm is not an RDMA device


# ---- devices ----
def test_one_uverbs_of_the_nodes_hcas_is_partial():
    (job,) = real("oobleck-start_container.sh")
    assert job.devices == ("/dev/infiniband/rdma_cm", "/dev/infiniband/uverbs0")
    result = run(job)
    assert not found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")
    (f,) = found(result, "JOB-RDMA-DEVICES-PARTIAL")
    assert f.severity == "warning" and "1 of the node's 2" in f.title and "mlx5_0, mlx5_1" in f.mechanism
    assert any(e.fact == "job.line" and e.value == 2 for e in f.evidence)
    assert all(e.path.endswith("oobleck-start_container.sh") for e in f.evidence if e.fact.startswith("job."))


def test_every_uverbs_or_the_directory_is_not_partial():
    two = parse_job_spec(
        text("oobleck-start_container.sh").replace(
            "--device=/dev/infiniband/uverbs0", "--device=/dev/infiniband/uverbs0 --device=/dev/infiniband/uverbs1"
        ),
        "start_container.sh",
    )[0]
    assert not found(run(two), "JOB-RDMA-DEVICES-PARTIAL")
    rdma_cm_only = parse_job_spec(
        text("oobleck-start_container.sh").replace(" --device=/dev/infiniband/uverbs0", ""), "start_container.sh"
    )[0]
    (f,) = found(run(rdma_cm_only), "JOB-RDMA-DEVICES-NOT-EXPOSED")  # rdma_cm alone opens no verbs device
    assert f.severity == "warning"


def test_partial_is_unknown_without_the_nodes_devices():
    (job,) = real("oobleck-start_container.sh")
    nd = dataclasses.replace(node(RDMA_NODE), rdma=dataclasses.replace(node(RDMA_NODE).rdma, devices=()))
    result = run(job, nd=nd)
    assert not found(result, "JOB-RDMA-DEVICES-PARTIAL") and unknowns(result, "JOB-RDMA-DEVICES-PARTIAL")


def test_efa_resource_counts_as_rdma_devices():
    worker = real("aws-eks-nccl-tests-mpijob.yaml")[1]
    assert ("vpc.amazonaws.com/efa", "32") in worker.resources
    result = run(worker)
    assert not found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED") and not unknowns(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")
    assert not alarms(result)  # a correct spec: no false alarm


def test_dra_claim_of_an_rdma_device_class_counts():
    (test,) = real("dranet-gke-nccl-gib-test.yaml")
    assert ("resourceClaim/rdma-net-interface", "rdma") in test.resources
    result = run(test)
    assert not found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED") and not unknowns(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")
    # the same pod with a claim whose class is not in the file: the device class decides, unknown
    docs = text("dranet-gke-nccl-gib-test.yaml").split("---\n")
    kept = [d for d in docs if "kind: DeviceClass" not in d and "kind: ResourceClaimTemplate" not in d]
    (other,) = parse_job_spec("---\n".join(kept), "nccl-gib-test.yaml")
    assert other.resources[-1][1] == "device class not in this file"
    assert unknowns(run(other), "JOB-RDMA-DEVICES-NOT-EXPOSED")


# ---- GPUs per node vs ranks per node ----
def test_ranks_equal_gpus_passes_and_more_ranks_than_gpus_fails():
    worker = real("aws-eks-nccl-tests-mpijob.yaml")[1]  # mpirun -N 8, nvidia.com/gpu: 8
    assert not found(run(worker), "JOB-RANKS-EXCEED-GPUS")
    four = parse_job_spec(
        text("aws-eks-nccl-tests-mpijob.yaml").replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 4"), "nccl-tests.yaml"
    )[1]
    (f,) = found(run(four), "JOB-RANKS-EXCEED-GPUS")
    assert f.severity == "error" and "8 ranks per node on 4 GPUs" in f.title
    assert "Duplicate GPU detected" in f.predicted_error and "Launcher mpirun -N 8" in f.mechanism
    (newer,) = found(run(four, img=image(nccl="2.30.3")), "JOB-RANKS-EXCEED-GPUS")
    assert "NCCL_MULTI_RANK_GPU_ENABLE=1" in newer.predicted_error
    assert not found(run(four, img=image(nccl="2.30.3", NCCL_MULTI_RANK_GPU_ENABLE="1")), "JOB-RANKS-EXCEED-GPUS")


def test_fewer_ranks_than_gpus_is_not_a_failure():
    (step,) = real("aws-torch-screen.sbatch")  # --ntasks-per-node 1, --gres=gpu:8
    assert step.ranks_per_node == 1 and step.gpus == 8 and step.gpus_setting == "--gres=gpu:8"
    assert not found(run(step), "JOB-RANKS-EXCEED-GPUS")


def test_slurm_ranks_without_gpu_count_is_unknown():
    (step,) = real("aws-nccl-tests-container.sbatch")
    result = run(step)
    assert not found(result, "JOB-RANKS-EXCEED-GPUS")
    assert "does not say how many GPUs" in unknowns(result, "JOB-RANKS-EXCEED-GPUS")[0].reason


def test_slurm_gpus_total_over_nodes():
    (step,) = parse_job_spec(
        "#SBATCH --nodes=2\n#SBATCH --gpus=8\n#SBATCH --ntasks-per-node=8\nsrun --container-image=a#b x\n", "j.sbatch"
    )
    assert step.gpus == 4 and step.gpus_setting == "--gpus=8 over --nodes=2"
    assert found(run(step), "JOB-RANKS-EXCEED-GPUS")


# ---- Pyxis / enroot image names ----
@pytest.mark.parametrize(
    ("name", "form"),
    [
        ("nvcr.io#nvidia/pytorch:24.05-py3", FORM_REGISTRY),
        ("nvidia/cuda:11.6.2-base-ubuntu20.04", FORM_DOCKER_HUB),
        ("alpine", FORM_DOCKER_HUB),
        ("nvcr.io/nvidia/pytorch:20.03-py3", FORM_AMBIGUOUS),
        ("localhost:5000/img", FORM_AMBIGUOUS),
        ("./uccl-ep.sqsh", FORM_SQUASHFS),
        ("/enroot/nvcr.io_nvidia_pytorch_20.12-py3.sqsh", FORM_SQUASHFS),
    ],
)
def test_enroot_image_forms(name, form):
    assert image_form(name) == form


def test_docker_hub_names_in_a_real_pyxis_script_raise_nothing():
    steps = real("parallelcluster-pyxis-test.sh")
    assert [s.image for s in steps] == ["alpine", "nvidia/cuda:11.6.2-base-ubuntu20.04"]
    for step in steps:
        assert not found(run(step), "JOB-PYXIS-IMAGE-NAME")


def test_registry_without_hash_is_named():
    (step,) = parse_job_spec(
        text("parallelcluster-pyxis-test.sh")
        .replace("nvidia/cuda:11.6.2", "nvcr.io/nvidia/cuda:11.6.2")
        .split("\n")[-1]
        + "\n",
        "test.sh",
    )
    (f,) = found(run(step), "JOB-PYXIS-IMAGE-NAME")
    assert f.severity == "info" and "nvcr.io#nvidia/cuda:11.6.2-base-ubuntu20.04" in f.fixes[0]
    assert "registry-1.docker.io/nvcr.io/nvidia/cuda" in f.mechanism


def test_squashfs_image_is_a_file_not_a_reference():
    (step,) = real("aws-uccl-ep-test_internode.sbatch")
    assert step.image == "./uccl-ep.sqsh" and step.image_form == FORM_SQUASHFS
    # one task per node, and its torchrun starts --nproc_per_node=$SLURM_GPUS_PER_NODE (8, set by the script)
    assert step.ranks_per_node == 8
    assert step.ranks_setting == "--ntasks-per-node=1 x torchrun --nproc_per_node=8"


# ---- memlock under Slurm ----
def test_slurm_memlock_says_where_it_comes_from():
    (step,) = real("aws-nccl-tests-container.sbatch")
    (u,) = unknowns(run(step), "JOB-MEMLOCK-TOO-LOW")
    assert "submitting shell's soft memlock limit" in u.reason and "PropagateResourceLimits" in u.reason
    (prop,) = parse_job_spec("srun --propagate=NPROC --container-image=a#b x\n", "j.sbatch")
    assert "slurmd's own" in unknowns(run(prop), "JOB-MEMLOCK-TOO-LOW")[0].reason
    (ul,) = parse_job_spec("ulimit -l unlimited\nsrun --container-image=a#b x\n", "j.sbatch")
    assert "ulimit -l unlimited` (line 1)" in unknowns(run(ul), "JOB-MEMLOCK-TOO-LOW")[0].reason


# ---- formats ----
def test_volcano_job_tasks_are_read():
    master, worker = real("volcano-mpi-example.yaml")
    assert (master.kind, master.role, worker.role) == ("Job", "mpimaster", "mpiworker")
    assert worker.image == "volcanosh/example-mpi:0.0.3" and worker.line == 39


def test_kuberay_rayjob_groups_are_read():
    (head,) = real("kuberay-rayjob-pytorch-distributed-training.yaml")
    assert (head.kind, head.role, head.image) == ("RayJob", "head", "rayproject/ray-ml:2.46.0.0e19ea-py311-gpu")
    head, worker = real("kuberay-rayjob-pytorch-image-classifier.yaml")
    assert (head.role, head.gpus) == ("head", None) and (worker.role, worker.gpus) == ("gpu-group", 1)
    assert worker.image == "rayproject/ray-ml:2.46.0.0e19ea-py39"


def test_helm_template_is_refused_in_one_line(capsys):
    with pytest.raises(BadInputError, match=r"render it first \(helm template\)"):
        real("kuberay-helm-raycluster-cluster.yaml")
    code = main(["job", "check", os.path.join(REAL, "kuberay-helm-raycluster-cluster.yaml")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "render it first (helm template)" in err


def test_ray_cluster_launcher_node_types_are_read():
    head, worker = real("ray-aws-example-gpu-docker.yaml")
    assert (head.kind, head.workload, head.role, head.image) == (
        "Ray cluster",
        "ray.head.gpu",
        "head",
        "rayproject/ray-ml:latest-gpu",
    )
    assert worker.image == "rayproject/ray-ml:latest-cpu"  # the node type's docker.worker_image overrides
    assert head.host_network and head.shm_size_mib == -1  # Ray adds --net=host and its own --shm-size
    result = run(head)
    assert not found(result, "JOB-SHM-TOO-SMALL")
    # Ray passes no /dev/infiniband: on an RDMA node NCCL falls back to sockets
    assert found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")
    assert not found(run(head, nd=node("cpu-no-rdma")), "JOB-RDMA-DEVICES-NOT-EXPOSED")
    opted = parse_job_spec(
        text("ray-aws-example-gpu-docker.yaml").replace(
            '    container_name: "ray_nvidia_docker" # e.g. ray_docker\n',
            '    container_name: "ray_nvidia_docker" # e.g. ray_docker\n'
            "    run_options: [--device=/dev/infiniband, --ulimit memlock=-1]\n",
        ),
        "cluster.yaml",
    )[0]
    assert opted.devices == ("/dev/infiniband",) and opted.memlock_kib == -1
    assert not found(run(opted), "JOB-RDMA-DEVICES-NOT-EXPOSED")


def test_skypilot_task_is_read_and_what_skypilot_decides_is_unknown():
    (task,) = real("skypilot-nccl_test.yaml")
    assert (task.kind, task.workload, task.gpus, task.image) == ("SkyPilot task", "torch-nccl-allreduce", 8, None)
    assert task.runtime is None and task.devices is None
    result = run(task)
    assert not alarms(result)
    assert unknowns(result, "JOB-RDMA-DEVICES-NOT-EXPOSED") and unknowns(result, "JOB-SHM-TOO-SMALL")
    (docker_task,) = parse_job_spec(
        text("skypilot-nccl_test.yaml").replace(
            "  use_spot: True\n", "  image_id: docker:nvcr.io/nvidia/pytorch:24.05-py3\n"
        ),
        "task.yaml",
    )
    assert docker_task.image == "nvcr.io/nvidia/pytorch:24.05-py3"


def test_ray_cluster_without_a_container_is_refused_in_one_line():
    with pytest.raises(BadInputError, match="Ray cluster launcher config without docker.image"):
        parse_job_spec("cluster_name: gpu\nprovider: {type: aws}\navailable_node_types: {}\n", "cluster.yaml")


def test_rdma_shared_device_and_sriov_vf_resources_count():
    (pod,) = real("network-operator-rdma-gpu-test-pod1.yml")
    assert ("rdma/rdma_shared_device_a", "1") in pod.resources
    result = run(pod)
    assert not found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED") and not alarms(result)
    (vf,) = real("network-operator-sriov-network-pod1.yaml")
    assert vf.resources == (("nvidia.com/sriovlegacy", "1"),) and vf.gpus is None
    with_gpu = parse_job_spec(
        text("network-operator-sriov-network-pod1.yaml").replace(
            '          nvidia.com/sriovlegacy: "1"\n  nodeSelector',
            '          nvidia.com/sriovlegacy: "1"\n          nvidia.com/gpu: 8\n  nodeSelector',
        ),
        "sriov-network-pod1.yaml",
    )[0]
    result = run(with_gpu)
    assert with_gpu.gpus == 8
    assert not found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED") and not unknowns(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")


def test_job_check_names_why_the_image_is_unknown_and_reads_squashfs_in_place(capsys):
    nodes = os.path.join(os.path.dirname(__file__), "..", "fixtures", "engine_nodes", f"{RDMA_NODE}.json")
    code = main(["job", "check", os.path.join(REAL, "aws-nccl-tests-container.sbatch"), "--node-facts", nodes])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "IMAGE defaults to $APPS_PATH/nccl-tests.sqsh" in err and "--image REF" in err
    code = main(["job", "check", os.path.join(REAL, "aws-uccl-ep-test_internode.sbatch"), "--node-facts", nodes])
    err = capsys.readouterr().err
    assert code == 3 and "enroot:./uccl-ep.sqsh" in err  # the squashfs file, not a registry name


def test_slurm_tasks_on_one_node_and_tasks_per_gpu():
    # NVIDIA/deepops#1102: "--nodes=1 --ntasks=4 --gres=gpu:1 will result in the processes sharing a single GPU"
    (shared,) = parse_job_spec(
        "#SBATCH --nodes=1\n#SBATCH --ntasks=4\n#SBATCH --gres=gpu:1\nsrun --container-image=a#b x\n", "j.sbatch"
    )
    assert (shared.ranks_per_node, shared.gpus) == (4, 1)
    assert found(run(shared), "JOB-RANKS-EXCEED-GPUS")
    (spread,) = parse_job_spec("#SBATCH --nodes=2\n#SBATCH --ntasks=8\nsrun --container-image=a#b x\n", "j.sbatch")
    assert spread.ranks_per_node is None  # Slurm places tasks by each node's CPUs: not known per node
    (per_gpu,) = parse_job_spec(
        "#SBATCH --gpus-per-node=4\n#SBATCH --ntasks-per-gpu=1\nsrun --container-image=a#b x\n", "j.sbatch"
    )
    assert per_gpu.ranks_per_node == 4 and not found(run(per_gpu), "JOB-RANKS-EXCEED-GPUS")


def test_srun_options_with_values_do_not_end_the_option_list():
    # the shape of the srun lines in the code search's Pyxis results: --time/--partition values before the image
    (step,) = parse_job_spec(
        "srun -K --partition=RTX3090 --gpus 2 --ntasks 2 --nodes 1 --time 00:30:00 "
        "--container-image=/netscratch/enroot/nvcr.io_nvidia_pytorch_23.08-py3.sqsh --pty --exclusive "
        "--container-mounts=/dev/shm:/dev/shm torchrun --nproc_per_node=gpu -m train\n",
        "run.sh",
    )
    assert step.image_form == FORM_SQUASHFS and step.shm_from_host
    # two tasks, each a torchrun starting one process per GPU it sees (both GPUs): 4 processes on 2 GPUs
    assert (step.gpus, step.ranks_per_node) == (2, 4)
    assert found(run(step), "JOB-RANKS-EXCEED-GPUS")


def test_torchrun_per_gpu_under_one_task_and_in_a_pod():
    (one,) = parse_job_spec(
        "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"
        "srun --container-image=a#b torchrun --nproc-per-node=gpu train.py\n",
        "j.sbatch",
    )
    assert one.ranks_per_node == 8 and one.ranks_follow_gpus
    result = run(one)
    assert not found(result, "JOB-RANKS-EXCEED-GPUS") and not unknowns(result, "JOB-RANKS-EXCEED-GPUS")
    (task,) = real("skypilot-nccl_test.yaml")  # --nproc_per_node $SKYPILOT_NUM_GPUS_PER_NODE: SkyPilot's value
    assert task.ranks_per_node is None
    (too_many,) = parse_job_spec(
        "#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n"
        "srun --container-image=a#b torchrun --nproc_per_node 8 train.py\n",
        "j.sbatch",
    )
    assert too_many.ranks_per_node == 64  # 8 tasks x 8 processes each
    assert found(run(too_many), "JOB-RANKS-EXCEED-GPUS")


def test_privileged_docker_with_infiniband_and_host_ipc_raises_nothing():
    (job,) = real("transformers-launch_docker.sh")
    assert job.privileged and job.devices == ("/dev/infiniband",) and job.host_ipc
    assert job.env_value("NCCL_DEBUG_SUBSYS").value == "ALL"
    assert not alarms(run(job))


def test_a_backslash_before_a_comment_ends_the_docker_run(capsys):
    # RunPod's cluster script: "--network=bridge \\<TAB># ..." ends the command; bash then runs "--device=..."
    with pytest.raises(BadInputError, match="line 2: `docker run` names no image: the command ends on line 4"):
        real("runpod-cluster-scripts-docker_run.sh")
    code = main(["job", "check", os.path.join(REAL, "runpod-cluster-scripts-docker_run.sh")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "does not continue the line" in err


def test_srun_export_sets_the_tasks_env():
    (step,) = real("contrastive-learning-eval-slurm.sh")
    assert step.image_form == FORM_SQUASHFS  # --container-mounts=...`pwd`... did not end the option list
    assert [(e.name, e.value) for e in step.env] == [("NCCL_SOCKET_IFNAME", "bond"), ("NCCL_IB_HCA", "mlx5")]
    result = run(step, img=image(NCCL_IB_HCA="mlx5_7"))
    # Pyxis keeps the image's value: --export reaches the task, not the container's Env
    assert found(result, "JOB-ENV-SHADOWED-BY-IMAGE")


def test_export_none_from_sbatch_reaches_the_steps_unless_reset():
    # srun(1): steps inherit sbatch's --export (SLURM_EXPORT_ENV); NONE drops the script's own exports
    (none,) = parse_job_spec("#SBATCH --export=NONE\nexport NCCL_IB_HCA=mlx5_0\nsrun --container-image=a#b x\n", "j")
    assert none.env == ()
    (reset,) = parse_job_spec(
        "#SBATCH --export=NONE\nexport NCCL_IB_HCA=mlx5_0\nexport SLURM_EXPORT_ENV=ALL\nsrun --container-image=a#b x\n",
        "j",
    )
    assert reset.env_value("NCCL_IB_HCA").value == "mlx5_0"
    (listed,) = parse_job_spec(
        "export NCCL_IB_HCA=mlx5_0\nexport NCCL_DEBUG=INFO\nsrun --export=ALL,NCCL_DEBUG=WARN,UCX_TLS=rc --container-image=a#b x\n",
        "j",
    )
    # with ALL the caller's value wins over the listed one (srun(1) --export)
    assert listed.env_value("NCCL_DEBUG").value == "INFO" and listed.env_value("UCX_TLS").value == "rc"


def test_what_the_spec_leaves_to_the_command_is_unknown_not_silent():
    (job,) = real("transformers-launch_docker.sh")  # --privileged: all GPUs; the command decides the ranks
    (u,) = unknowns(run(job), "JOB-RANKS-EXCEED-GPUS")
    assert "does not say how many processes a node runs" in u.reason
    (step,) = real("aws-nccl-tests-container.sbatch")
    (u,) = unknowns(run(step), "JOB-PYXIS-IMAGE-NAME")
    assert "IMAGE defaults to" in u.reason
    vf = real("network-operator-sriov-network-pod1.yaml")[0]  # no GPU requested: no NCCL rank, nothing to say
    assert not unknowns(run(vf), "JOB-RANKS-EXCEED-GPUS")


def test_pod_running_torchrun_has_its_nproc_as_ranks():
    (worker,) = real("aws-fsdp-llama2_13b-pytorchjob.yaml")
    assert worker.ranks_per_node is None  # --nproc_per_node=$GPU_PER_NODE: envsubst's
    filled = parse_job_spec(
        text("aws-fsdp-llama2_13b-pytorchjob.yaml")
        .replace("--nproc_per_node=$GPU_PER_NODE", "--nproc_per_node=8")
        .replace("nvidia.com/gpu: $GPU_PER_NODE", "nvidia.com/gpu: 4"),
        "llama2_13b-fsdp.yaml",
    )[0]
    assert filled.ranks_per_node == 8 and filled.ranks_setting == "torchrun --nproc_per_node=8"
    (f,) = found(run(filled), "JOB-RANKS-EXCEED-GPUS")
    assert "8 ranks per node on 4 GPUs" in f.title


def test_docker_command_torchrun_sets_ranks():
    (job,) = parse_job_spec(
        text("transformers-launch_docker.sh").replace(
            "bert_pytorch bash", "bert_pytorch torchrun --nproc-per-node 16 t.py"
        ),
        "launch_docker.sh",
    )
    assert job.ranks_per_node == 16 and job.gpus is None  # --privileged: the node's GPUs, 8 here
    (f,) = found(run(dataclasses.replace(job, gpus=-1)), "JOB-RANKS-EXCEED-GPUS")
    assert "16 ranks per node on 8 GPUs" in f.title


def test_mpi_operator_example_single_dash_mca_and_x():
    launcher, worker = real("mpi-operator-tensorflow-benchmarks.yaml")
    assert worker.env_value("NCCL_DEBUG").value == "INFO"
    assert worker.env_value("OMPI_MCA_pml").value == "ob1" and worker.env_value("OMPI_MCA_btl").value == "^openib"
    assert worker.env_value("LD_LIBRARY_PATH").value is None  # -x NAME: the launcher's own value, not in the file
    assert (worker.ranks_per_node, worker.gpus) == (1, 1)
    assert not alarms(run(worker, nd=node("cpu-no-rdma")))


def test_volcano_task_running_mpirun_gives_the_workers_its_env_and_ranks():
    master, worker = real("oci-volcano-BM.GPU.H100.8-nccl-test.yaml")
    assert (master.role, worker.role, worker.gpus) == ("mpimaster", "mpiworker", 8)
    # -npernode $NUM_GPUS with NUM_GPUS=8 set in the bash -c script
    assert worker.ranks_per_node == 8 and worker.ranks_setting == "mpimaster mpirun -npernode 8"
    assert worker.env_value("NCCL_IB_GID_INDEX").value == "3"
    assert worker.env_value("NCCL_IB_HCA").value.startswith("=mlx5_0,mlx5_1")
    assert worker.env_value("OMPI_MCA_coll").value == "^hcoll"
    assert not master.env_value("NCCL_IB_GID_INDEX")  # the master runs no rank
    result = run(worker, img=image(nccl="2.29.2"))
    assert not alarms(result) and not found(result, "JOB-RANKS-EXCEED-GPUS")


def test_leaderworkerset_and_jobset_examples_read():
    leader, worker = real("lws-vllm-GPU-lws.yaml")  # the Service document is skipped
    assert (leader.role, worker.role, worker.gpus, worker.shm_size_mib) == ("leader", "worker", 8, 15 * 1024)
    result = run(worker, nd=node("cpu-no-rdma"))
    assert not alarms(result) and not found(result, "JOB-SHM-TOO-SMALL")
    (pytorch,) = real("jobset-pytorch-resnet.yaml")  # bash -xc 'torchrun --nproc_per_node=1 ...'
    assert (pytorch.kind, pytorch.role, pytorch.ranks_per_node) == ("JobSet", "workers", 1)
    assert pytorch.ranks_setting == "torchrun --nproc_per_node=1"


def test_resource_names_count_by_their_parts_not_substrings():
    worker = real("aws-eks-nccl-tests-mpijob.yaml")[1]
    renamed = dataclasses.replace(
        worker, resources=(("nvidia.com/gpu", "8"), ("example.com/default", "1")), privileged=False
    )
    result = run(renamed)  # "default" holds "efa", but names no RDMA device: exposure is unknown, not assumed
    assert not found(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")
    assert "example.com/default" in unknowns(result, "JOB-RDMA-DEVICES-NOT-EXPOSED")[0].reason
