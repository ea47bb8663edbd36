"""Apptainer / Singularity and Podman CDI launches (issue 32): job/apptainer.py and engine/launcher_gpu.py.

The launches are real scripts from public repositories (tests/job/specs/real/SOURCES.md): Singularity --nv in a
Slurm batch script and alone, Apptainer --nv, Podman --device nvidia.com/gpu=all. The node is a committed node facts
file with its CDI specs and nvidia-container-cli set as each case needs. The --nvccli command lines are hand-made (no
public script with a repository to cite was found): they test the error paths only."""

from __future__ import annotations

import os

from engine_facts import committed_facts, matrix, node, replace_in, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import load_job_spec, parse_job_spec

REAL = os.path.join(os.path.dirname(__file__), "specs", "real")
CDI = "LAUNCH-CDI-NO-SPEC"
NVCCLI = "LAUNCH-APPTAINER-NVCCLI"
MATRIX = matrix()


def job(name: str):
    (launch,) = load_job_spec(os.path.join(REAL, name))
    return launch


def run(launch, **node_changes):
    n = node("mofed-23.10-open-550-peermem")
    for path, value in node_changes.items():
        n = replace_in(n, path.replace("__", "."), value)
    return evaluate(with_nccl(committed_facts("bookworm"), "2.21.5"), n, MATRIX, job=launch)


def said(result, rule):
    return [f for f in result.findings if f.id == rule], [u for u in result.unknowns if u.rule == rule]


def test_singularity_nv_in_a_slurm_script_is_an_apptainer_launch():
    launch = job("extended-mintaka-singularity-vllm.sh")
    assert (launch.runtime, launch.kind, launch.gpu_injection) == ("apptainer", "apptainer exec", "apptainer-nv")
    assert launch.image == "/ceph/container/vllm-openai_latest.sif" and launch.gpus == -1
    # no namespaces: the host's network, IPC (its /dev/shm) and /dev, and the host environment passes through
    assert launch.host_network and launch.host_ipc and launch.shm_from_host and launch.env_incomplete
    assert "/dev/infiniband" in launch.devices


def test_tab_separated_singularity_exec_with_env_is_read():
    launch = job("magvit-singularity-run.sh")
    assert launch.gpu_injection == "apptainer-nv" and launch.image == "magvit_env.sif"
    assert [(v.name, v.value) for v in launch.env] == [
        ("PYTHONPATH", "/home/bae9wk/.local/lib/python3.10/site-packages")
    ]


def test_apptainer_nv_with_a_bind_list_finds_the_image_after_the_flag_value():
    launch = job("dicom-media-exporter-apptainer-job_def.sh")
    assert launch.image == "/software/containers/pytorch/pytorch-ffmpeg_latest.sif"


def test_podman_cdi_request_without_a_spec_on_the_node_is_unresolvable():
    launch = job("dalos-podman-cdi.sh")
    found, _ = said(run(launch, container_toolkit__cdi_specs=()), CDI)
    assert len(found) == 1 and "unresolvable CDI devices" in found[0].predicted_error
    assert "nvidia.com/gpu=all" in found[0].title


def test_podman_cdi_request_with_a_spec_is_decided_and_unknown_specs_are_asked():
    launch = job("dalos-podman-cdi.sh")
    assert said(run(launch, container_toolkit__cdi_specs=("/etc/cdi/nvidia.yaml",)), CDI) == ([], [])
    found, asked = said(run(launch, container_toolkit__cdi_specs=None), CDI)
    assert not found and asked


def test_nv_launch_is_not_asked_about_cdi_or_nvccli():
    launch = job("extended-mintaka-singularity-vllm.sh")
    result = run(launch, container_toolkit__cdi_specs=())
    assert said(result, CDI) == ([], []) and said(result, NVCCLI) == ([], [])


def test_nvccli_without_the_cli_on_the_node_fails():
    (launch,) = parse_job_spec("apptainer exec --nvccli train.sif python train.py\n", "nvccli.sh")
    assert launch.gpu_injection == "apptainer-nvccli"
    found, _ = said(run(launch, gpu__container_cli=False), NVCCLI)
    assert len(found) == 1 and found[0].severity == "error"
    assert said(run(launch, gpu__container_cli=True), NVCCLI) == ([], [])
    assert said(run(launch, gpu__container_cli=None), NVCCLI)[1]


def test_nvccli_under_contain_without_nvidia_visible_devices_gets_no_gpu():
    (launch,) = parse_job_spec("apptainer exec --containall --nvccli train.sif python train.py\n", "nvccli.sh")
    found, _ = said(run(launch, gpu__container_cli=True), NVCCLI)
    assert len(found) == 1 and "NVIDIA_VISIBLE_DEVICES" in found[0].title
    (named,) = parse_job_spec(
        "apptainer exec --containall --nvccli --env NVIDIA_VISIBLE_DEVICES=all train.sif python train.py\n", "n.sh"
    )
    assert said(run(named, gpu__container_cli=True), NVCCLI) == ([], [])
