"""vf_verbs.h and vf_cuda.h declare only what the verifier calls; these tests prove them against the
real headers (rdma-core's verbs.h, NVIDIA's cuda.h) with _Static_assert, so a hand-written prototype,
struct layout or constant that is wrong fails here instead of corrupting memory on a GPU node."""

from __future__ import annotations

import os
import subprocess

import pytest

from imgcheck.verify.build import CSRC as VF_CSRC

HERE = os.path.join(os.path.dirname(__file__), "csrc")


def _syntax_check(source: str, *includes: str) -> subprocess.CompletedProcess:
    args = ["gcc", "-std=gnu11", "-fsyntax-only", "-I", str(VF_CSRC)]
    for inc in includes:
        args += ["-I", inc]
    return subprocess.run(args + [os.path.join(HERE, source)], capture_output=True, text=True)


def test_verbs_declarations_match_rdma_core(gcc):
    if not os.path.exists("/usr/include/infiniband/verbs.h"):
        pytest.skip("rdma-core's verbs.h is not installed (apt-get install libibverbs-dev)")
    proc = _syntax_check("check_verbs.c")
    assert proc.returncode == 0, proc.stderr


def test_cuda_declarations_match_cuda_h(gcc):
    try:
        import nvidia.cuda_runtime as cr  # the nvidia-cuda-runtime-cu12 wheel ships cuda.h
    except ImportError:
        pytest.skip("NVIDIA's cuda.h is not installed (pip install nvidia-cuda-runtime-cu12)")
    include = os.path.join(list(cr.__path__)[0], "include")
    if not os.path.exists(os.path.join(include, "cuda.h")):
        pytest.skip(f"no cuda.h in {include}")
    proc = _syntax_check("check_cuda.c", include)
    assert proc.returncode == 0, proc.stderr
