"""ENV-CUDA-SHIM-PRELOADED: a CUDA-intercepting shim (catalog cuda_intercept_shims, read from HAMi-core's hook
table) preloaded into a process that runs NCCL. The LD_PRELOAD value is HAMi-core's own README's
(https://github.com/Project-HAMi/HAMi-core/blob/8f3a89c67b037d8fdfe6c4cd4d8c4f0cd6504811/README.md:
`-e LD_PRELOAD=/libvgpu/build/libvgpu.so`)."""

from __future__ import annotations

from engine_facts import committed_facts, matrix, node, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import parse_job_spec

RULE = "ENV-CUDA-SHIM-PRELOADED"
MATRIX = matrix()
NODE = node("mofed-23.10-open-550-peermem")


def _run(env, job=None):
    return evaluate(with_nccl(committed_facts("bookworm"), "2.28.9", env=env), NODE, MATRIX, job=job)


def test_hami_libvgpu_in_the_launch_is_named_with_what_it_hooks():
    (run,) = parse_job_spec(
        "docker run --gpus all -e CUDA_DEVICE_MEMORY_LIMIT=2g -e LD_PRELOAD=/libvgpu/build/libvgpu.so img", "cmd"
    )
    (f,) = [f for f in _run({}, run).findings if f.id == RULE]
    assert f.severity == "warning" and "HAMi-core" in f.title and "libvgpu.so" in f.title
    assert "cuGetProcAddress" in f.mechanism and "cuMemCreate" in f.mechanism
    assert any("NCCL_CUMEM_ENABLE=0" in fix for fix in f.fixes)


def test_other_preloads_and_no_preload_are_decided():
    for env in ({"LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"}, {}):
        result = _run(env)
        assert not [f for f in result.findings if f.id == RULE]
        assert not [u for u in result.unknowns if u.rule == RULE], env
