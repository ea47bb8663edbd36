"""JOB-ENROOT-NO-GPU-DRIVER: enroot's NVIDIA hook (conf/hooks/98-nvidia.sh, catalog enroot_nvidia_hook) over a real
Pyxis job script and the Env real images set.

The job is aws-samples' nccl-tests container sbatch (tests/job/specs/real/SOURCES.md). The image Envs are what the
images' Dockerfiles set: the official python image sets no NVIDIA_* variable
(https://github.com/docker-library/python/blob/master/3.12/slim-bookworm/Dockerfile: PATH, LANG, GPG_KEY,
PYTHON_VERSION), nvidia/cuda base images set both
(https://gitlab.com/nvidia/container-images/cuda/-/blob/master/dist/12.4.1/ubuntu2204/base/Dockerfile:
ENV NVIDIA_VISIBLE_DEVICES all, ENV NVIDIA_DRIVER_CAPABILITIES compute,utility).
"""

from __future__ import annotations

import dataclasses
import os

from engine_facts import committed_facts, matrix, node, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import EnvVar, load_job_spec, parse_job_spec

RULE = "JOB-ENROOT-NO-GPU-DRIVER"
MATRIX = matrix()
REAL = os.path.join(os.path.dirname(__file__), "specs", "real")
PYTHON_ENV = {"PATH": "/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
CUDA_ENV = {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility"}


def _step():
    (step,) = load_job_spec(os.path.join(REAL, "aws-nccl-tests-container.sbatch"))
    assert step.runtime == "enroot"
    return step


def _run(env, job=None):
    image = with_nccl(committed_facts("bookworm"), "2.21.5", env=env)
    return evaluate(image, node("mofed-23.10-open-550-peermem"), MATRIX, job=job or _step())


def _found(result):
    return [f for f in result.findings if f.id == RULE]


def _unknown(result):
    return [u for u in result.unknowns if u.rule == RULE]


def test_an_image_without_nvidia_visible_devices_gets_no_driver_under_enroot():
    (f,) = _found(_run(PYTHON_ENV))
    assert f.severity == "error" and "not set" in f.title and "Found no NVIDIA driver" in f.predicted_error
    assert "98-nvidia.sh" in f.mechanism and f.fixes[0].startswith("set NVIDIA_VISIBLE_DEVICES=all")


def test_void_is_the_same_as_unset():
    (f,) = _found(_run({**PYTHON_ENV, "NVIDIA_VISIBLE_DEVICES": "void"}))
    assert "void" in f.title


def test_an_nvidia_cuda_based_image_or_the_jobs_export_gets_the_driver():
    result = _run({**PYTHON_ENV, **CUDA_ENV})
    assert not _found(result) and not _unknown(result)
    # the hook reads enroot's environment first: the job's export sets it for an image that does not
    step = _step()
    exported = dataclasses.replace(
        step, env=(*step.env, EnvVar("NVIDIA_VISIBLE_DEVICES", "all"), EnvVar("NVIDIA_DRIVER_CAPABILITIES", "all"))
    )
    result = _run(PYTHON_ENV, exported)
    assert not _found(result) and not _unknown(result)


def test_without_capabilities_the_hook_mounts_utility_only():
    (f,) = _found(_run({**PYTHON_ENV, "NVIDIA_VISIBLE_DEVICES": "all"}))
    assert "no libcuda" in f.title and "utility" in f.title and "nvidia-smi works" in f.mechanism


def test_an_unknown_capability_word_stops_the_container():
    (f,) = _found(_run({**PYTHON_ENV, "NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "compute,gpu"}))
    assert "gpu" in f.title and "Unknown NVIDIA driver capability: gpu" in f.predicted_error


def test_an_unread_image_env_asks_rather_than_assuming_the_variables_unset():
    # every nvidia/cuda image (so every NGC image) sets both variables: "the image does not set them" is no default
    # for a GPU image, so the hypothesis does not assume it and the rule asks which image it is
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    unread = dataclasses.replace(image, unknown={**image.unknown, "env": "the image config was not read"})
    result = evaluate(unread, node("mofed-23.10-open-550-peermem"), MATRIX, job=_step())
    assert _found(result) == []
    (u,) = _unknown(result)
    assert "NVIDIA_VISIBLE_DEVICES" in u.reason and "FROM nvidia/cuda" in u.reason


def test_the_variables_every_nvidia_cuda_image_sets_are_the_ones_never_assumed_unset():
    from imgcheck.engine.facts import SET_BY_GPU_BASE_IMAGES

    # the base rows (built FROM a distribution image); every other tag is built FROM one of them and inherits
    bases = [r for r in MATRIX.rows("nvidia_image_env") if r["from"] is None]
    assert len(bases) > 100
    for row in bases:
        assert all(row["env"].get(name) for name in SET_BY_GPU_BASE_IMAGES), row["tag"]


def test_docker_sets_the_variable_itself():
    (run,) = parse_job_spec("docker run --gpus all img", "cmd")
    result = _run(PYTHON_ENV, run)
    assert not _found(result) and not _unknown(result)


def test_a_node_without_nvidia_container_cli_fails_the_hook():
    cuda_node = node("mofed-23.10-open-550-peermem")
    bare = dataclasses.replace(cuda_node, gpu=dataclasses.replace(cuda_node.gpu, container_cli=False))
    image = with_nccl(committed_facts("bookworm"), "2.21.5", env={**PYTHON_ENV, **CUDA_ENV})
    (f,) = [f for f in evaluate(image, bare, MATRIX, job=_step()).findings if f.id == RULE]
    assert "nvidia-container-cli" in f.title and "Command not found: nvidia-container-cli" in f.predicted_error
    # the hook does not run for an image that does not ask for it: that is the no-driver finding, not this one
    (g,) = _found(evaluate(with_nccl(committed_facts("bookworm"), "2.21.5", env=PYTHON_ENV), bare, MATRIX, job=_step()))
    assert "not set" in g.title
