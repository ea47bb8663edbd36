"""What NVIDIA's images set in their Env, read from the catalogs when an image's own Env is not read (issue 32).

Data-driven over catalogs nvidia_image_env (every nvidia/cuda tag, generated from NVIDIA's rendered Dockerfiles by
tools/upstreams/gen_nvidia_image_env.py) and ngc_image_env (NGC PyTorch releases' Env as public records of the
image's own Env show it), and JOB-ENROOT-NO-GPU-DRIVER on the real Pyxis job of test_gpu_injection.py with the image's
Env not read: decided for a reference that names nvidia/cuda or an NGC image (both set NVIDIA_VISIBLE_DEVICES and
NVIDIA_DRIVER_CAPABILITIES), still asking (or, under the hypothesis, conditional) for a plain python image."""

from __future__ import annotations

import dataclasses
import os

import pytest
from engine_facts import committed_facts, matrix, node, with_nccl
from test_gpu_injection import RULE, _found, _step, _unknown

from imgcheck.engine import evaluate
from imgcheck.engine.context import Ctx
from imgcheck.knowledge import image_env
from imgcheck.model.image import ImageFacts

MATRIX = matrix()
CUDA_ROWS = {r["tag"]: r for r in MATRIX.rows("nvidia_image_env")}
NGC_ENV = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "ngc_env")


def _unread(reference: str, platform: str | None = None) -> ImageFacts:
    return ImageFacts(reference=reference, platform=platform, unknown={"env": "not read: a facts file without Env"})


def test_every_nvidia_cuda_tag_sets_the_driver_variables_through_its_from_chain():
    assert len(CUDA_ROWS) > 1000  # every rendered Dockerfile, 10.0 .. 13.0
    for tag, row in CUDA_ROWS.items():
        assert row["from"] is None or row["from"] in CUDA_ROWS, tag  # the parent tag is itself a row
        env = image_env.family_env(MATRIX, _unread(f"nvidia/cuda:{tag}"))
        assert env["NVIDIA_VISIBLE_DEVICES"].value == "all", tag
        assert env["NVIDIA_DRIVER_CAPABILITIES"].value.split(",")[:2] == ["compute", "utility"], tag
        assert env["NVIDIA_VISIBLE_DEVICES"].source.startswith("nvidia_image_env "), tag
        assert "CUDA_VERSION" in env and tag.startswith(env["CUDA_VERSION"].value.rsplit(".", 1)[0]), tag


def test_a_runtime_tag_reads_its_base_and_its_own_lines():
    env = image_env.family_env(MATRIX, _unread("nvidia/cuda:12.2.2-runtime-ubuntu22.04", "linux/amd64"))
    assert env["NCCL_VERSION"].value == "2.19.3-1" and "/runtime/Dockerfile" in env["NCCL_VERSION"].source
    assert env["NVIDIA_REQUIRE_CUDA"].value.startswith("cuda>=12.2 brand=tesla,driver>=470")
    assert "/base/Dockerfile" in env["NVIDIA_REQUIRE_CUDA"].source
    # arm64 requires no driver branch; with the platform unknown the amd64 value, said so and only inferred
    arm = image_env.family_env(MATRIX, _unread("nvidia/cuda:12.2.2-runtime-ubuntu22.04", "linux/arm64"))
    assert arm["NVIDIA_REQUIRE_CUDA"].value == "cuda>=12.2"
    (unknown_arch,) = [
        v
        for n, v in image_env.family_env(MATRIX, _unread("nvidia/cuda:12.2.2-runtime-ubuntu22.04")).items()
        if n == "NVIDIA_REQUIRE_CUDA"
    ]
    assert unknown_arch.value == env["NVIDIA_REQUIRE_CUDA"].value and unknown_arch.confidence == "inferred"
    assert image_env.ARCH_SPLIT in unknown_arch.words
    # amd64 only (arm64 installs no cuda-compat): with the platform unknown whether it is set is not known
    assert "NV_CUDA_COMPAT_PACKAGE" in env
    assert "NV_CUDA_COMPAT_PACKAGE" not in image_env.family_env(MATRIX, _unread("nvidia/cuda:12.2.2-base-ubuntu22.04"))
    # a value naming the distro image's variable is not inferred: the catalog does not hold the distro's Env
    assert "PATH" not in env


def test_a_partial_tag_gives_only_what_every_matching_tag_agrees_on():
    env = image_env.family_env(MATRIX, _unread("FROM nvidia/cuda:12.2.0-devel"))
    assert env["NVIDIA_VISIBLE_DEVICES"].confidence == "inferred" and env["CUDA_VERSION"].value == "12.2.0"
    assert image_env.family_env(MATRIX, _unread("nvidia/cuda"))["NVIDIA_VISIBLE_DEVICES"].value == "all"


@pytest.mark.parametrize(
    "reference",
    ["python:3.12-slim", "example.com/nvidia/cuda:12.2.2-base-ubuntu22.04", "nvcr.io/nvidia/cuda-dl-base:25.01"],
)
def test_other_references_name_no_family(reference):
    assert image_env.family_env(MATRIX, _unread(reference)) == {}


def test_a_read_env_is_never_replaced():
    read = ImageFacts(reference="nvidia/cuda:12.2.2-base-ubuntu22.04", env={"PATH": "/usr/bin"})
    assert image_env.family_env(MATRIX, read) == {}


def _env_file(name: str) -> dict[str, str]:
    from test_ngc_env_rows import read_env  # tests/recommend: the same reader of the recorded Env files

    return read_env(os.path.join(NGC_ENV, name))


@pytest.mark.parametrize("name", sorted(f for f in os.listdir(NGC_ENV) if f.endswith(".env")))
def test_ngc_rows_say_what_the_recorded_env_says(name, monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(os.path.dirname(os.path.dirname(__file__)), "recommend"))
    recorded = _env_file(name)
    (row,) = [r for r in MATRIX.rows("ngc_image_env") if r["tag"] == f"{recorded['NVIDIA_PYTORCH_VERSION']}-py3"]
    for key, value in recorded.items():
        if key in row["env"]:
            assert row["env"][key] == value, key


def test_every_recorded_ngc_pytorch_release_sets_visible_devices_and_compute():
    rows = [r for r in MATRIX.rows("ngc_image_env") if "NVIDIA_VISIBLE_DEVICES" in r["env"]]
    assert len(rows) >= 2
    for row in rows:
        assert row["env"]["NVIDIA_VISIBLE_DEVICES"] == "all" and "compute" in row["env"]["NVIDIA_DRIVER_CAPABILITIES"]
    # a release without a row (23.11) and one whose row does not record it (24.01): the value all rows agree on
    for tag in ("23.11-py3", "24.01-py3"):
        env = image_env.family_env(MATRIX, _unread(f"nvcr.io/nvidia/pytorch:{tag}"))
        assert env["NVIDIA_VISIBLE_DEVICES"].confidence == "inferred"
        assert env["NVIDIA_DRIVER_CAPABILITIES"].value == "compute,utility,video"


def _run_unread(reference: str):
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    image = dataclasses.replace(image, reference=reference, env={}, unknown={**image.unknown, "env": "not read"})
    return evaluate(image, node("mofed-23.10-open-550-peermem"), MATRIX, job=_step())


@pytest.mark.parametrize(
    "reference",
    ["nvcr.io/nvidia/pytorch:24.01-py3", "nccl-tests.Dockerfile (FROM nvidia/cuda:12.2.0-devel-ubuntu22.04)"],
)
def test_enroot_hook_decided_for_an_nvidia_family_image(reference):
    result = _run_unread(reference)
    assert not _found(result) and not _unknown(result)
    ctx = Ctx(_unread(reference), node("mofed-23.10-open-550-peermem"), MATRIX, _step())
    setting = ctx.setting("NVIDIA_VISIBLE_DEVICES")
    assert setting is not None and setting.origin == "inferred" and "catalog" in (setting.where or "")


def test_enroot_hook_still_asks_for_a_plain_python_image():
    result = _run_unread("python:3.12-slim")
    found, asked = _found(result), _unknown(result)
    assert asked or found
    assert all(f.assumes for f in found)  # never unconditional: the image's Env is not read
    assert any("NVIDIA_VISIBLE_DEVICES" in u.reason for u in asked) or any(
        "NVIDIA_VISIBLE_DEVICES" in " ".join(f.assumes) for f in found
    )


def test_an_image_built_from_the_family_keeps_its_variables_but_not_its_search_paths():
    itself = image_env.family_env(MATRIX, _unread("nvidia/cuda:12.2.2-runtime-ubuntu22.04"))
    derived = image_env.family_env(MATRIX, _unread("my-app (FROM nvidia/cuda:12.2.2-runtime-ubuntu22.04)"))
    assert itself["LD_LIBRARY_PATH"].value == "/usr/local/nvidia/lib:/usr/local/nvidia/lib64"
    assert "LD_LIBRARY_PATH" not in derived and derived["NVIDIA_VISIBLE_DEVICES"].value == "all"
    pinned = image_env.family_env(MATRIX, _unread("nvcr.io/nvidia/pytorch:23.10-py3@sha256:" + "0" * 64))
    assert "LD_LIBRARY_PATH" in pinned


@pytest.mark.parametrize(
    "reference, image, tag",
    [
        ("nvcr.io#nvidia/pytorch:24.01-py3", "nvcr.io/nvidia/pytorch", "24.01-py3"),  # enroot / Pyxis form
        ("docker.io/nvidia/cuda:12.2.2-base-ubuntu22.04", "nvidia/cuda", "12.2.2-base-ubuntu22.04"),
        ("nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04", "nvidia/cuda", "12.6.3-devel-ubuntu22.04"),
        ("app (FROM nvidia/cuda:12.2.0-devel-ubuntu22.04)", "nvidia/cuda", "12.2.0-devel-ubuntu22.04"),
    ],
)
def test_references_as_users_write_them(reference, image, tag):
    assert [(i, t) for i, t, _ in image_env.references(reference)] == [(image, tag)]
