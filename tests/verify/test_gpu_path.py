"""The verifier's CUDA path, driven by a stand-in libcuda.so.1 (csrc/stub_libcuda.c).

This machine has no GPU: these tests only prove the code path is compiled, finds its entry points,
names CUDA errors and allocates/frees in order. Real GPU memory registration (peer memory, DMA-BUF)
remains untested here, and the verifier says so itself when libcuda is absent."""

from __future__ import annotations

import os
import subprocess

from imgcheck.verify.join import observations
from imgcheck.verify.result import parse_output


def _run(verifier: str, libdir: str | None, mode: str = "ok"):
    env = {"PATH": "/usr/bin:/bin", "STUB_CUDA_MODE": mode}
    if libdir:
        env["LD_LIBRARY_PATH"] = libdir
    proc = subprocess.run([verifier], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    return parse_output(proc.stdout)


def _stub(compile_c) -> str:
    path = compile_c("stub_libcuda.c", "-shared", "-fPIC", out="libcuda.so.1")
    return os.path.dirname(path)


def test_without_libcuda_it_says_not_testable_here(verifier):
    out = _run(verifier, None)
    assert out.gpu.status == "no-libcuda"
    assert "libcuda.so.1" in out.gpu.detail
    gpu = [o for o in observations(out) if o.id == "gpu"]
    assert gpu and "not testable here" in gpu[0].message


def test_cuinit_failure_is_named(verifier, compile_c):
    out = _run(verifier, _stub(compile_c), mode="nodevice")
    assert out.gpu.status == "no-gpu"
    assert out.gpu.init.code == 100 and out.gpu.init.name == "CUDA_ERROR_NO_DEVICE"
    assert out.gpu.driver_api_version == 12040


def test_both_allocation_kinds_run_and_report_dmabuf_export(verifier, compile_c):
    out = _run(verifier, _stub(compile_c))
    assert out.gpu.status == "tested"
    assert out.gpu.attributes["dma_buf_supported"] == 1
    kinds = {b.memory: b for b in out.gpu.buffers}
    assert set(kinds) == {"gpu:cuMemAlloc", "gpu:cuMemCreate"}
    for b in kinds.values():
        assert b.alloc.code == 0
        assert b.dmabuf_export.name == "CUDA_ERROR_NOT_SUPPORTED"
    # no RDMA device here, so nothing was registered, and the report says why
    assert out.device_results == ()
    assert any("not registered" in o.message for o in observations(out) if o.id == "gpu")
