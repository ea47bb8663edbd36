"""Packages that run CUDA code in the process: torch as a Python distribution, and conda's builds of it.

conda names its torch `pytorch` (the pytorch channel and conda-forge; conda-forge's `pytorch-gpu` is a metapackage
of the CUDA build) and says in the build string which variant it is: the pytorch channel's `py3.10_cuda11.8_cudnn8.7.0_0`
or `py3.10_cpu_0`, conda-forge's `cuda118_py310h...` or `cpu_mkl_py310h...` (anaconda.org/pytorch/pytorch and
anaconda.org/conda-forge/pytorch file lists). A CPU build runs no GPU code; a build string that names neither is
counted as GPU-capable, as a pip torch is (its wheel's variant is not read either).
"""

from __future__ import annotations

from ..model.image import Package

PYTHON_DISTS = ("torch",)
CONDA_PACKAGES = ("pytorch", "pytorch-gpu", "torch")


def cuda_build(package: Package) -> bool | None:
    """Whether a conda package's build string names a CUDA build (True), a CPU one (False), or neither (None)."""
    build = (package.build or "").lower()
    if "cuda" in build:
        return True
    if "cpu" in build:
        return False
    return None


def runs_gpu_code(package: Package) -> bool:
    if package.db == "conda":
        return package.name in CONDA_PACKAGES and cuda_build(package) is not False
    return package.name in PYTHON_DISTS
