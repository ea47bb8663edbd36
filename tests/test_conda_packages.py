"""conda environments' packages read from their conda-meta records (issue 32): a conda torch is a framework the
rules know (Gloo, GPU use), and its build string says whether it is the CUDA build.

The record is real (tests/data/conda/SOURCE names its URL); the build strings are the forms the pytorch channel and
conda-forge publish (py3.10_cuda11.8_cudnn8.7.0_0, py3.10_cpu_0; cuda118_py310h..., cpu_mkl_py310h...)."""

from __future__ import annotations

import dataclasses

from engine_facts import matrix as load_matrix
from imagebuild import make_layer, write_docker_archive

from imgcheck import api
from imgcheck.knowledge import frameworks, gpu_frameworks
from imgcheck.model.image import ImageFacts, Package
from imgcheck.sources.read_options import ReadOptions

RECORD = "tests/data/conda/_openmp_mutex-4.5-1_gnu.json"


def inspect(tmp_path, files: dict) -> ImageFacts:
    archive = write_docker_archive(str(tmp_path / "image.tar"), [make_layer(files)], env=[])
    return api.inspect_image(f"docker-archive:{archive}", ReadOptions(use_cache=False))


def test_records_of_environments_not_of_the_package_cache(tmp_path):
    record = open(RECORD, "rb").read()
    facts = inspect(
        tmp_path,
        {
            "opt/conda/conda-meta/_openmp_mutex-4.5-1_gnu.json": record,
            "opt/conda/envs/train/conda-meta/pytorch-2.1.0-py3.10_cuda12.1_cudnn8.9.2_0.json": b"{not json",
            "opt/conda/pkgs/_openmp_mutex-4.5-1_gnu/info/conda-meta/x-1-0.json": record,
        },
    )
    conda = {(p.name, p.version, p.build, p.channel, p.path) for p in facts.packages if p.db == "conda"}
    assert conda == {
        (
            "_openmp_mutex",
            "4.5",
            "1_gnu",
            "https://repo.anaconda.com/pkgs/main/linux-64",
            "/opt/conda/conda-meta/_openmp_mutex-4.5-1_gnu.json",
        ),
        # an unreadable record is still named by its file name (name-version-build.json), channel unknown
        (
            "pytorch",
            "2.1.0",
            "py3.10_cuda12.1_cudnn8.9.2_0",
            None,
            "/opt/conda/envs/train/conda-meta/pytorch-2.1.0-py3.10_cuda12.1_cudnn8.9.2_0.json",
        ),
    }


def conda(name: str, build: str) -> Package:
    return Package(name=name, version="2.1.0", db="conda", build=build)


def test_build_string_decides_the_cuda_variant():
    assert gpu_frameworks.runs_gpu_code(conda("pytorch", "py3.10_cuda11.8_cudnn8.7.0_0"))
    assert gpu_frameworks.runs_gpu_code(conda("pytorch", "cuda118_py310h6b2e2c1_301"))
    assert not gpu_frameworks.runs_gpu_code(conda("pytorch", "py3.10_cpu_0"))
    assert not gpu_frameworks.runs_gpu_code(conda("pytorch", "cpu_mkl_py310h3ea73d3_101"))
    assert not gpu_frameworks.runs_gpu_code(conda("numpy", "py310h5f9d8c6_0"))


def test_a_conda_pytorch_is_torch_for_gloo():
    image = dataclasses.replace(ImageFacts(reference="x"), packages=(conda("pytorch", "py3.10_cpu_0"),))
    found = frameworks.frameworks_in(load_matrix(), image)
    assert [f.framework for f in found] == ["torch"]
