"""CONTAINER-TOOLKIT-KNOWN-DEFECT: the node's nvidia-container-toolkit release against the image's Env and the launch.

The row is the toolkit's own CHANGELOG entry (v1.17.2: 'Fixed a bug where legacy images would set imex channels as
all', commit f774ceee): a legacy image (CUDA_VERSION set, NVIDIA_REQUIRE_CUDA not) without NVIDIA_IMEX_CHANNELS
started by the runtime hook of toolkit 1.17.0/1.17.1. The image Env is NVIDIA/nvidia-container-toolkit#797's (a
CUDA image with CUDA_VERSION only); the working image adds NVIDIA_REQUIRE_CUDA as
opendatahub-io/distributed-workloads#271 did.
"""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import committed_facts, node, replace_in
from engine_facts import matrix as load_matrix

from imgcheck.engine import evaluate
from imgcheck.job.model import RUNTIME_ENROOT, RUNTIME_KUBERNETES, EnvVar, JobFacts
from imgcheck.model.image import Cuda

RULE = "CONTAINER-TOOLKIT-KNOWN-DEFECT"
LEGACY_ENV = {
    "CUDA_VERSION": "12.1.1",
    "NVIDIA_VISIBLE_DEVICES": "all",
    "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
}


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


def _image(env):
    base = committed_facts("bookworm")
    cuda = Cuda(version="12.1.1", origin="env CUDA_VERSION", path="image config Env")
    return dataclasses.replace(base, env=dict(env), cuda=cuda)


def _node(toolkit):
    return replace_in(node("inbox-6.8-open-570"), "gpu.container_toolkit_version", toolkit)


POD = JobFacts(path="pod.yaml", kind="Pod", runtime=RUNTIME_KUBERNETES, gpus=1)


def _said(image, toolkit, matrix, job=POD):
    result = evaluate(image, _node(toolkit), matrix, job=job)
    return {**{u.rule: u for u in result.unknowns}, **{f.id: f for f in result.findings}}


def test_legacy_image_without_imex_channels_on_toolkit_1_17_0_and_1_17_1(matrix):
    for toolkit in ("1.17.0", "1.17.1"):
        found = _said(_image(LEGACY_ENV), toolkit, matrix)[RULE]
        assert found.severity == "error" and "unsupported IMEX channel value: all" in found.predicted_error
        assert found.__class__.__name__ == "Finding" and not found.assumes
    for toolkit in ("1.16.2", "1.17.2", "1.17.8"):
        assert RULE not in {f.id for f in evaluate(_image(LEGACY_ENV), _node(toolkit), matrix, job=POD).findings}


def test_the_image_or_launch_avoids_it(matrix):
    required = _image({**LEGACY_ENV, "NVIDIA_REQUIRE_CUDA": "cuda>=12.1"})  # not a legacy image
    assert RULE not in {f.id for f in evaluate(required, _node("1.17.0"), matrix, job=POD).findings}
    channels = dataclasses.replace(POD, env=(EnvVar("NVIDIA_IMEX_CHANNELS", "0"),))
    assert RULE not in {f.id for f in evaluate(_image(LEGACY_ENV), _node("1.17.0"), matrix, job=channels).findings}
    enroot = JobFacts(path="job.sbatch", kind="slurm", runtime=RUNTIME_ENROOT)  # no toolkit hook
    assert RULE not in {f.id for f in evaluate(_image(LEGACY_ENV), _node("1.17.0"), matrix, job=enroot).findings}


def test_unknown_toolkit_or_runtime_is_asked(matrix):
    n = _node(None)
    n = dataclasses.replace(n, unknown={**n.unknown, "gpu.container_toolkit_version": "no package database"})
    result = evaluate(_image(LEGACY_ENV), n, matrix, job=POD)
    assert any(u.rule == RULE for u in result.unknowns)
    no_job = _said(_image(LEGACY_ENV), "1.17.0", matrix, job=None)[RULE]
    assert "runtime" in no_job.reason
    assert RULE not in _said(_image(LEGACY_ENV), "", matrix)  # no toolkit installed: decided
