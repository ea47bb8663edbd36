"""The CUDA toolkit's stub libcuda ahead of the driver's on the image's loader path: CUDA error 34 (issue 32).

Layouts as real images make them: TensorFlow's devel GPU images link the stub under the soname and name the stub
directory in ld.so.conf.d behind the multiarch directory (tensorflow/tensorflow
tensorflow/tools/dockerfiles/partials/ubuntu/devel-nvidia.partial.Dockerfile: `ln -s .../stubs/libcuda.so
.../stubs/libcuda.so.1 && echo "/usr/local/cuda/lib64/stubs" > /etc/ld.so.conf.d/z-cuda-stubs.conf`);
fboulnois/stable-diffusion-docker#22 (fixed by PR 23) ran an image whose stubs came first on the loader path."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import matrix as load_matrix
from engine_facts import node
from imagebuild import Symlink, make_layer, write_docker_archive

from imgcheck import api
from imgcheck.engine import evaluate
from imgcheck.sources.read_options import ReadOptions

RULE = "CUDA-STUB-LIBCUDA-FIRST"
STUBS = "usr/local/cuda-11.2/targets/x86_64-linux/lib/stubs"
STUBS_FIRST = "LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs:/usr/local/cuda/lib64:/usr/local/nvidia/lib64"
NVIDIA_FIRST = "LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64:/usr/local/cuda/lib64/stubs"


def cuda_layer(link: bool = True, conf: dict | None = None) -> bytes:
    files: dict = {
        "usr/local/cuda": Symlink("cuda-11.2"),
        "usr/local/cuda-11.2/lib64": Symlink("targets/x86_64-linux/lib"),
        "usr/local/cuda-11.2/version.txt": b"CUDA Version 11.2.152\n",
        f"{STUBS}/libcuda.so": b"\x7fELF stub",
        "usr/lib/x86_64-linux-gnu/libc.so.6": b"\x7fELF libc",
        "etc/ld.so.conf.d/x86_64-linux-gnu.conf": b"# Multiarch support\n/usr/local/lib/x86_64-linux-gnu\n"
        b"/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n",
        "etc/ld.so.conf": b"include /etc/ld.so.conf.d/*.conf\n\n",
    }
    if link:
        files[f"{STUBS}/libcuda.so.1"] = Symlink("libcuda.so")
    return make_layer({**files, **(conf or {})})


def inspect(tmp_path, layer, env_line: str | None):
    env = ["CUDA_VERSION=11.2.2"] + ([env_line] if env_line else [])
    archive = write_docker_archive(str(tmp_path / "image.tar"), [layer], env=env)
    return api.inspect_image(f"docker-archive:{archive}", ReadOptions(use_cache=False))


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


def said(result) -> dict:
    return {f.id: f for f in result.findings} | {u.rule: u for u in result.unknowns}


def test_stubs_first_on_ld_library_path_is_error_34(tmp_path, matrix):
    facts = inspect(tmp_path, cuda_layer(), STUBS_FIRST)
    assert facts.cuda.stub_on_path is True
    assert facts.cuda.stub_path == "/usr/local/cuda/lib64/stubs/libcuda.so.1"
    found = {f.id: f for f in evaluate(facts, node("inbox-6.8-open-570"), matrix).findings}[RULE]
    assert found.severity == "error" and "34" in found.predicted_error and not found.assumes


def test_the_driver_directory_named_first_wins(tmp_path, matrix):
    facts = inspect(tmp_path, cuda_layer(), NVIDIA_FIRST)
    assert facts.cuda.stub_on_path is False and "/usr/local/nvidia/lib" in facts.cuda.stub_path_how
    assert RULE not in said(evaluate(facts, node("inbox-6.8-open-570"), matrix))


def test_a_stub_directory_without_the_soname_is_not_loaded(tmp_path, matrix):
    # the toolkit ships only libcuda.so; dlopen("libcuda.so.1") passes over the directory
    facts = inspect(tmp_path, cuda_layer(link=False), STUBS_FIRST)
    assert facts.cuda.stub_on_path is False
    assert RULE not in said(evaluate(facts, node("inbox-6.8-open-570"), matrix))


def test_tensorflow_z_conf_behind_the_multiarch_directory_is_fine(tmp_path, matrix):
    conf = {"etc/ld.so.conf.d/z-cuda-stubs.conf": b"/usr/local/cuda/lib64/stubs\n"}
    facts = inspect(tmp_path, cuda_layer(conf=conf), None)
    assert facts.cuda.stub_on_path is False
    assert RULE not in said(evaluate(facts, node("inbox-6.8-open-570"), matrix))


def test_a_conf_before_the_driver_directory_is_asked_not_passed(tmp_path, matrix):
    conf = {"etc/ld.so.conf.d/a-cuda-stubs.conf": b"/usr/local/cuda/lib64/stubs\n"}
    facts = inspect(tmp_path, cuda_layer(conf=conf), None)
    assert facts.cuda.stub_on_path is None and "a-cuda-stubs.conf" in facts.cuda.stub_path_how
    u = said(evaluate(facts, node("inbox-6.8-open-570"), matrix))[RULE]
    assert u not in evaluate(facts, node("inbox-6.8-open-570"), matrix).findings and "ldconfig" in u.reason


def test_stated_facts_without_the_files_give_a_conditional_finding(tmp_path, matrix):
    facts = inspect(tmp_path, cuda_layer(), STUBS_FIRST)
    stated = dataclasses.replace(
        facts, cuda=dataclasses.replace(facts.cuda, stub_path=None, stub_on_path=None, stub_path_how=None)
    )
    found = {f.id: f for f in evaluate(stated, node("inbox-6.8-open-570"), matrix).findings}[RULE]
    assert found.assumes and "libcuda.so.1" in found.assumes[0]


def test_a_preloaded_stub_is_loaded_first(tmp_path, matrix):
    facts = inspect(tmp_path, cuda_layer(), "LD_PRELOAD=/usr/local/cuda/lib64/stubs/libcuda.so")
    found = {f.id: f for f in evaluate(facts, node("inbox-6.8-open-570"), matrix).findings}[RULE]
    assert "LD_PRELOAD" in found.title and not found.assumes
