"""verify and docs/registration-errors.md: each failed registration is labelled with the table row that
explains it, and the REG-* findings become checks.

No RDMA device or GPU exists here. The real verifier (and the stand-in libcuda of test_gpu_path.py) drives
the paths that do not need them; registration results on a device are the verifier's JSON schema filled in
by hand (the only way to reach those paths without hardware), one per row.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess

import pytest

from imgcheck.engine.emit import finding as emit_finding
from imgcheck.matrix import load_matrix
from imgcheck.model.report import Evidence
from imgcheck.verify import regrows
from imgcheck.verify.join import CONFIRMED, CONTRADICTED, NO_DEVICE, NOT_TESTABLE, check_from_finding, observations
from imgcheck.verify.result import (
    DeviceList,
    DeviceResult,
    DmabufProbe,
    GpuBuffer,
    GpuResult,
    Memlock,
    Registration,
    Step,
    Sysfs,
    VerifierOutput,
    parse_output,
)

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "registration-errors.md")
NAMES = {0: None, 1: "EPERM", 12: "ENOMEM", 14: "EFAULT", 22: "EINVAL", 95: "EOPNOTSUPP", 524: None}
UNLIMITED = -1


def reg(memory, label, call, err=0):
    return Registration(
        memory, label, call, 7, "LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ", "why", True, err == 0, err, NAMES.get(err), None
    )


def device(*regs, dmabuf_supported=False):
    probe = DmabufProbe(
        True, dmabuf_supported, 9 if dmabuf_supported else 95, "EBADF" if dmabuf_supported else "EOPNOTSUPP"
    )
    return DeviceResult("mlx5_0", Step(True), Step(True), tuple(regs), probe)


def out(*devices, memlock=UNLIMITED, vmm_gdr=1, dma_buf=0, cumem_flag=True):
    gpu = GpuResult(
        status="tested",
        driver_api_version=12040,
        device_count=1,
        attributes={"dma_buf_supported": dma_buf, "gpu_direct_rdma_with_cuda_vmm_supported": vmm_gdr},
        buffers=(GpuBuffer("gpu:cuMemAlloc"), GpuBuffer("gpu:cuMemCreate", gpu_direct_rdma_capable_flag=cumem_flag)),
    )
    return VerifierOutput(
        schema_version=1,
        memlock=Memlock(memlock, memlock),
        sysfs=Sysfs(class_infiniband=("mlx5_0",), dev_infiniband=("uverbs0",)),
        devices=DeviceList(True, count=1),
        gpu=gpu,
        device_results=tuple(devices),
    )


def row_of(r, dev, o):
    return regrows.explain(r, dev, o).row


@pytest.fixture(scope="module")
def table_rows():
    with open(DOC) as fh:
        return set(re.findall(r"^\| `(RE-[A-Z0-9-]+)` \|", fh.read(), flags=re.M))


# ------------------------------------------------------------------ one case per row the verifier can see


def test_host_rows(table_rows):
    ok_base = reg("host", "base", "ibv_reg_mr_iova2")
    cases = [
        # RO rejected while the same call without RO works: the seed explanation on this node
        (device(ok_base, reg("host", "base+ro", "ibv_reg_mr_iova2", 22)), "RE-EINVAL-RO-BACKPORT"),
        # REMOTE_ATOMIC rejected while RO alone works
        (
            device(
                ok_base,
                reg("host", "base+ro", "ibv_reg_mr_iova2"),
                reg("host", "base+atomic+ro", "ibv_reg_mr_iova2", 22),
            ),
            "RE-FLAG-ATOMIC",
        ),
        (
            device(
                ok_base,
                reg("host", "base+ro", "ibv_reg_mr_iova2"),
                reg("host", "base+atomic+ro", "ibv_reg_mr_iova2", 95),
            ),
            "RE-FLAG-ATOMIC",
        ),
        (device(reg("host", "base", "ibv_reg_mr", 1)), "RE-EPERM-MEMLOCK0"),
        (device(reg("host", "base", "ibv_reg_mr", 12)), "RE-ENOMEM-PIN"),  # memlock unlimited
    ]
    for dev, want in cases:
        failed = [r for r in dev.registrations if not r.ok]
        assert row_of(failed[-1], dev, out(dev)) == want
        assert want in table_rows


def test_enomem_with_a_finite_limit_is_memlock():
    dev = device(reg("host", "base", "ibv_reg_mr", 12))
    match = regrows.explain(dev.registrations[0], dev, out(dev, memlock=8192 * 1024))
    assert match.row == "RE-ENOMEM-MEMLOCK" and "8192 KiB" in match.meaning


def test_gpu_rows(table_rows):
    cases = [
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2", 22), {}, "RE-EINVAL-PEER-DMAMAP"),
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2", 14), {}, "RE-EFAULT-DECLINED"),
        (
            reg("gpu:cuMemCreate", "base+ro", "ibv_reg_mr_iova2", 14),
            {"cumem_flag": False, "vmm_gdr": 0},
            "RE-EFAULT-CUMEM-FLAG",
        ),
        (reg("gpu:cuMemCreate", "base+ro", "ibv_reg_mr_iova2", 14), {"cumem_flag": True}, "RE-EFAULT-DECLINED"),
        (reg("gpu:cuMemAlloc", "base", "ibv_reg_mr", 12), {"memlock": 65536 * 1024}, "RE-ENOMEM-MEMLOCK"),
        (reg("gpu:cuMemAlloc", "base", "ibv_reg_mr", 12), {}, "RE-ENOMEM-P2P"),
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_dmabuf_mr", 22), {}, "RE-EINVAL-DMABUF"),
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_dmabuf_mr", 95), {}, "RE-EOPNOTSUPP-DMABUF"),
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2", 524), {}, "RE-ENOTSUPP-524"),
    ]
    # REMOTE_ATOMIC on GPU memory: the same buffer without it registers, so the flag is what is refused
    dev = device(
        reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2"),
        reg("gpu:cuMemAlloc", "base+atomic+ro", "ibv_reg_mr_iova2", 22),
    )
    assert row_of(dev.registrations[1], dev, out(dev)) == "RE-FLAG-ATOMIC"
    for r, kw, want in cases:
        dev = device(r)
        assert row_of(r, dev, out(dev, **kw)) == want, (r, kw)
        assert want in table_rows


def test_host_einval_without_an_ro_difference_is_the_page_size_row():
    """Issue 34: the page-size EINVAL row is returned when it happens (both host cases fail alike)."""
    dev = device(reg("host", "base", "ibv_reg_mr_iova2", 22), reg("host", "base+ro", "ibv_reg_mr_iova2", 22))
    match = regrows.explain(dev.registrations[1], dev, out(dev))
    assert match.row == "RE-EINVAL-PGSZ" and "WARN" in match.meaning


def test_unexplained_failure_is_said_plainly():
    dev = device(reg("host", "base", "ibv_reg_mr_iova2", 14))
    match = regrows.explain(dev.registrations[0], dev, out(dev))
    assert match.row is None
    assert match.words().startswith("not explained by docs/registration-errors.md")


def test_success_has_no_row():
    dev = device(reg("host", "base", "ibv_reg_mr"))
    assert regrows.explain(dev.registrations[0], dev, out(dev)) is None


def test_observations_name_the_row():
    dev = device(reg("host", "base", "ibv_reg_mr"), reg("gpu:cuMemCreate", "base+ro", "ibv_reg_mr_iova2", 14))
    errors = [o for o in observations(out(dev, vmm_gdr=0, cumem_flag=False)) if o.severity == "error"]
    assert len(errors) == 1
    assert "NCCL WARN Call to ibv_reg_mr_iova2 failed with error EFAULT" in errors[0].message
    assert "docs/registration-errors.md RE-EFAULT-CUMEM-FLAG" in errors[0].message


# ------------------------------------------------------------------ REG-* findings as checks


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


def path_finding(matrix, kind):
    return emit_finding(
        matrix,
        "REG-PATH",
        [Evidence("nccl.gpu_buffer_path", kind)],
        variant=kind,
        nccl="2.21.5",
        reg_fn="ibv_reg_mr_iova2",
        why="w",
        node_stack="mlnx_ofed 5.8-3.0.7.0",
    )


def test_reg_path_peer_memory(matrix):
    f = path_finding(matrix, "peer-memory")
    peer = device(reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2"))
    check = check_from_finding(f, out(peer))
    assert check.status == CONFIRMED
    # a peer-memory failure does not contradict the path; its row is named
    failing = device(reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2", 22))
    check = check_from_finding(f, out(failing))
    assert check.status == CONFIRMED and "RE-EINVAL-PEER-DMAMAP" in check.observed
    # DMA-BUF works after all: the engine's path was wrong
    dmabuf = device(reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_dmabuf_mr"), dmabuf_supported=True)
    assert check_from_finding(f, out(dmabuf, dma_buf=1)).status == CONTRADICTED


def test_reg_path_on_a_gpu_without_gpudirect(matrix):
    """NCCL stages through host memory when the GPU reports no GPUDirect RDMA, whatever the NIC side offers."""
    o = out(device(reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2")))
    o = dataclasses.replace(
        o, gpu=dataclasses.replace(o.gpu, attributes={**o.gpu.attributes, "gpu_direct_rdma_supported": 0})
    )
    assert check_from_finding(path_finding(matrix, "peer-memory"), o).status == CONTRADICTED
    assert check_from_finding(path_finding(matrix, "host-staging"), o).status == CONFIRMED


def test_reg_path_dmabuf(matrix):
    f = path_finding(matrix, "dmabuf")
    works = device(reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_dmabuf_mr"), dmabuf_supported=True)
    assert check_from_finding(f, out(works, dma_buf=1)).status == CONFIRMED
    probe_says_no = device(reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2"), dmabuf_supported=False)
    assert check_from_finding(f, out(probe_says_no, dma_buf=1)).status == CONTRADICTED


def test_reg_path_host_staging(matrix):
    f = path_finding(matrix, "host-staging")
    nothing = device(reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2", 14))
    assert check_from_finding(f, out(nothing)).status == CONFIRMED
    peer_works = device(reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2"))
    assert check_from_finding(f, out(peer_works)).status == CONTRADICTED


def test_reg_memlock_zero(matrix):
    f = emit_finding(matrix, "REG-MEMLOCK-ZERO", [], reg_fn="ibv_reg_mr_iova2")
    eperm = device(reg("host", "base", "ibv_reg_mr", 1))
    assert check_from_finding(f, out(eperm, memlock=0)).status == CONFIRMED
    enomem = device(reg("host", "base", "ibv_reg_mr", 12))
    assert check_from_finding(f, out(enomem, memlock=0)).status == CONTRADICTED
    ok = device(reg("host", "base", "ibv_reg_mr"))
    held = check_from_finding(f, out(ok, memlock=0))
    assert held.status == NOT_TESTABLE and "CAP_IPC_LOCK" in held.detail
    assert check_from_finding(f, out(eperm)).status == NOT_TESTABLE  # verify set its own (unlimited) limit


def test_reg_remote_atomic(matrix):
    f = emit_finding(matrix, "REG-REMOTE-ATOMIC", [], nccl="2.28.9", providers="irdma", reg_fn="ibv_reg_mr_iova2")
    rejected = device(reg("host", "base+ro", "ibv_reg_mr_iova2"), reg("host", "base+atomic+ro", "ibv_reg_mr_iova2", 95))
    assert check_from_finding(f, out(rejected)).status == CONFIRMED
    accepted = device(reg("host", "base+ro", "ibv_reg_mr_iova2"), reg("host", "base+atomic+ro", "ibv_reg_mr_iova2"))
    assert check_from_finding(f, out(accepted)).status == CONTRADICTED  # the hypothesis row must be updated


# ------------------------------------------------------------------ the real verifier on this machine


def test_real_verifier_without_devices_marks_reg_checks_not_testable(verifier, matrix):
    proc = subprocess.run([verifier], capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    seen = parse_output(proc.stdout)
    for f in (path_finding(matrix, "peer-memory"), emit_finding(matrix, "REG-MEMLOCK-ZERO", [], reg_fn="ibv_reg_mr")):
        check = check_from_finding(f, seen)
        assert check.status == NOT_TESTABLE and check.detail == NO_DEVICE


def test_real_verifier_reports_cumem_buffers_nccl_cannot_register(verifier, compile_c):
    """The stand-in libcuda reports GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 0: the verifier allocates the cuMem
    buffer without gpuDirectRDMACapable, as NCCL >= 2.24.3 would, and the report names row RE-EFAULT-CUMEM-FLAG."""
    libdir = os.path.dirname(compile_c("stub_libcuda.c", "-shared", "-fPIC", out="libcuda.so.1"))
    proc = subprocess.run(
        [verifier],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": libdir, "STUB_CUDA_MODE": "ok"},
    )
    assert proc.returncode == 0, proc.stderr
    seen = parse_output(proc.stdout)
    assert seen.gpu.attributes["gpu_direct_rdma_with_cuda_vmm_supported"] == 0
    assert {b.memory: b.gpu_direct_rdma_capable_flag for b in seen.gpu.buffers}["gpu:cuMemCreate"] is False
    warn = [o for o in observations(seen) if o.id == "gpu cuMem"]
    assert len(warn) == 1 and "RE-EFAULT-CUMEM-FLAG" in warn[0].message and "REG-CUMEM-VMM-GDR" in warn[0].message
