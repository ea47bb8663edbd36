"""An NGC PyTorch row taken from an image's own Env says what that Env says, and is checkable (issue 32).

tests/data/ngc_env/ holds the stack lines of real images' Env as public files recorded them. For each, the
base_images row of the month (NVIDIA_PYTORCH_VERSION) must carry the same NCCL, rdma-core, UCX, HPC-X, CUDA,
forward-compat libcuda and torch, and the engine must get libibverbs facts of that rdma-core from it."""

from __future__ import annotations

import os
import re

import pytest
from recommend_helpers import matrix

from imgcheck.recommend.convert import facts_of_row

HERE = os.path.dirname(os.path.abspath(__file__))
ENV_DIR = os.path.join(os.path.dirname(HERE), "data", "ngc_env")
# `export K=V` and Apptainer's `export K="${K:-"V"}"`
LINE = re.compile(r'^export (\w+)=(?:"\$\{\1:-"(.*)"\}"|(\S+))$')


def read_env(path: str) -> dict[str, str]:
    env = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            m = LINE.match(line.strip())
            if m:
                env[m.group(1)] = m.group(2) if m.group(2) is not None else m.group(3)
    return env


def _cuda(version: str) -> str:
    """CUDA_VERSION=12.3.2.001 -> 12.3.2 (the row keeps major.minor.patch)."""
    return ".".join(version.split(".")[:3])


FILES = sorted(f for f in os.listdir(ENV_DIR) if f.endswith(".env"))


@pytest.mark.parametrize("name", FILES)
def test_row_says_what_the_image_env_says(name):
    env = read_env(os.path.join(ENV_DIR, name))
    m = matrix()
    (row,) = [
        r
        for r in m.rows("base_images")
        if r["image"] == "nvcr.io/nvidia/pytorch" and r["release"] == env["NVIDIA_PYTORCH_VERSION"]
    ]
    assert row["evidence"] == "image-env" and row["confidence"] == "reported"
    assert row["nccl"] == env["NCCL_VERSION"]
    assert row["rdma_core"] == env["RDMACORE_VERSION"]
    # NVIDIA's MOFED_VERSION "5.4-rdmacore39.0" names its upstream rdma-core build, not MLNX_OFED
    assert env["MOFED_VERSION"].endswith(f"rdmacore{env['RDMACORE_VERSION']}")
    assert row["rdma_flavor"] == "inbox" and row["mlnx_ofed"] is None
    assert row["ucx"] == env["OPENUCX_VERSION"] and row["hpcx"] == env["HPCX_VERSION"]
    assert row["cuda"] == _cuda(env["CUDA_VERSION"])
    assert row["cuda_compat_driver"] == env["CUDA_DRIVER_VERSION"]
    assert row["framework_version"] == env["PYTORCH_VERSION"]

    (facts,) = facts_of_row(row, m)  # one reading: the flavor is known
    lib = facts.rdma.libibverbs
    assert lib is not None and lib.rdma_core == env["RDMACORE_VERSION"]
    assert [n.version for n in facts.nccl] == [env["NCCL_VERSION"]]
    assert facts.cuda.compat_driver == env["CUDA_DRIVER_VERSION"]
