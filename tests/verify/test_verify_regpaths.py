"""Issue 34: the verifier's new registrations and the labels that name their rows without the old mislabels.

The C verifier is built and run here (no RDMA device, no GPU): it calls ibv_fork_init as NCCL does and says
whether it holds CAP_IPC_LOCK. Registration results on a device are the verifier's JSON filled in by hand,
the only way to reach those paths without hardware; each case names the row it stands for.
"""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess

import pytest

from imgcheck.engine.emit import finding as emit_finding
from imgcheck.matrix import load_matrix
from imgcheck.model.report import Evidence
from imgcheck.verify import regrows
from imgcheck.verify.join import CONFIRMED, CONTRADICTED, NOT_TESTABLE, check_from_finding, observations
from imgcheck.verify.result import (
    Bar1Sweep,
    DeviceList,
    DeviceResult,
    DmabufProbe,
    GpuBuffer,
    GpuResult,
    Memlock,
    MemlockProbe,
    Registration,
    Step,
    Sysfs,
    VerifierOutput,
    parse_output,
)

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "registration-errors.md")
MIB = 1 << 20
ENOTSUPP = 524


def reg(memory, label, call, err=0, length=4 * MIB):
    name = errno.errorcode.get(err) if err != ENOTSUPP else None
    return Registration(memory, label, call, 7, "", "why", True, err == 0, err, name, None, length)


def device(*regs, sweep=None, probe=None):
    probe_dmabuf = DmabufProbe(True, True, 9, "EBADF")
    return DeviceResult("mlx5_0", Step(True), Step(True), tuple(regs), probe_dmabuf, sweep, probe)


def out(*devices, memlock=-1, cap=False, gdr=1):
    gpu = GpuResult(
        status="tested",
        driver_api_version=12040,
        device_count=1,
        attributes={"gpu_direct_rdma_supported": gdr, "gpu_direct_rdma_with_cuda_vmm_supported": 1},
        buffers=(GpuBuffer("gpu:cuMemAlloc"), GpuBuffer("gpu:cuMemCreate", gpu_direct_rdma_capable_flag=True)),
    )
    return VerifierOutput(
        schema_version=1,
        cap_ipc_lock=cap,
        memlock=Memlock(memlock, memlock),
        sysfs=Sysfs(class_infiniband=("mlx5_0",), dev_infiniband=("uverbs0",)),
        devices=DeviceList(True, count=1),
        gpu=gpu,
        device_results=tuple(devices),
    )


@pytest.fixture(scope="module")
def table_rows():
    with open(DOC) as fh:
        return set(re.findall(r"^\| `(RE-[A-Z0-9-]+)` \|", fh.read(), flags=re.M))


def row(r, dev, o):
    return regrows.explain(r, dev, o).row


@pytest.mark.parametrize(
    "registration, kw, want",
    [
        # DMA-BUF 524 is the exporter refusing the attach, not the peer-memory row
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_dmabuf_mr", ENOTSUPP), {}, "RE-ENOTSUPP-DMABUF-ATTACH"),
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2", ENOTSUPP), {}, "RE-ENOTSUPP-524"),
        # ENOMEM under a large finite limit (4 MiB registered, 64 GiB allowed) is not memlock
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2", errno.ENOMEM), {"memlock": 64 << 30}, "RE-ENOMEM-P2P"),
        (reg("host", "base", "ibv_reg_mr", errno.ENOMEM), {"memlock": 64 << 30}, "RE-ENOMEM-PIN"),
        (reg("host", "base", "ibv_reg_mr", errno.ENOMEM), {"memlock": 64 * 1024}, "RE-ENOMEM-MEMLOCK"),
        # with CAP_IPC_LOCK held, the limit cannot refuse anything
        (reg("host", "base", "ibv_reg_mr", errno.ENOMEM), {"memlock": 64 * 1024, "cap": True}, "RE-ENOMEM-PIN"),
        # a GeForce EFAULT is "no GPUDirect on this GPU"
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2", errno.EFAULT), {"gdr": 0}, "RE-EFAULT-NOGDR-GPU"),
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2", errno.EFAULT), {}, "RE-EFAULT-DECLINED"),
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2", errno.EIO), {}, "RE-EIO-P2P"),
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2", errno.EBUSY), {}, "RE-EBUSY-P2P"),
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2", errno.ENODEV), {}, "RE-ENODEV-P2P"),
        (
            reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_dmabuf_mr", errno.ENOMEM),
            {"memlock": 64 * 1024},
            "RE-DMABUF-ENOMEM",
        ),
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_dmabuf_mr", errno.EBADF), {}, "RE-DMABUF-EBADF"),
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_dmabuf_mr", errno.EFAULT), {}, "RE-DMABUF-EFAULT"),
        (reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_dmabuf_mr", errno.EPROTONOSUPPORT), {}, "RE-EOPNOTSUPP-DMABUF"),
    ],
)
def test_labels(registration, kw, want, table_rows):
    dev = device(registration)
    assert row(registration, dev, out(dev, **kw)) == want
    assert want in table_rows


def test_bar1_sweep_refusal_after_chunks_is_declined_for_bar1(table_rows):
    failure = reg("gpu:cuMemAlloc", "bar1-sweep", "ibv_reg_mr_iova2", errno.EFAULT)
    sweep = Bar1Sweep("gpu:cuMemAlloc", 4 * MIB, 1 << 30, registered=60, registered_bytes=240 * MIB, failure=failure)
    dev = device(reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_mr_iova2"), sweep=sweep)
    o = out(dev)
    match = regrows.explain(failure, dev, o)
    assert match.row == "RE-EFAULT-DECLINED" and "BAR1" in match.meaning and "240 MiB" in match.meaning
    assert any(m.row == "RE-EFAULT-DECLINED" for _, _, m in regrows.explain_all(o))
    obs = [x for x in observations(o) if "BAR1 sweep" in x.id]
    assert obs and obs[0].severity == "warning" and "60 chunks" in obs[0].message


def probe_dev(soft, above_err, cap_dropped=True):
    regs = (
        reg("host", "memlock-below", "ibv_reg_mr", 0, length=soft // 2),
        reg("host", "memlock-above", "ibv_reg_mr", above_err, length=soft + 4 * MIB),
    )
    return device(probe=MemlockProbe("tested", None, 1000, True, cap_dropped, regs))


def test_memlock_probe_labels_as_the_image_user_without_ipc_lock():
    soft = 8 * MIB
    dev = probe_dev(soft, errno.ENOMEM)
    o = out(dev, memlock=soft, cap=True)  # the verifier started with CAP_IPC_LOCK, the probe dropped it
    above = dev.memlock_probe.registrations[1]
    assert row(above, dev, o) == "RE-ENOMEM-MEMLOCK"
    zero = device(
        probe=MemlockProbe("tested", None, 1000, True, True, (reg("host", "memlock-above", "ibv_reg_mr", errno.EPERM),))
    )
    assert row(zero.memlock_probe.registrations[0], zero, out(zero, memlock=0, cap=True)) == "RE-EPERM-MEMLOCK0"


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


def memlock_finding(matrix, kib):
    return emit_finding(
        matrix,
        "MEMLOCK-TOO-LOW",
        [Evidence("node.limits.memlock_kib", kib)],
        memlock_kib=kib,
        reg_fn="ibv_reg_mr_iova2",
        gpu_words="w",
    )


def test_memlock_too_low_is_checked_live(matrix):
    soft = 8 * MIB
    f = memlock_finding(matrix, soft // 1024)
    assert check_from_finding(f, out(probe_dev(soft, errno.ENOMEM), memlock=soft)).status == CONFIRMED
    assert check_from_finding(f, out(probe_dev(soft, 0), memlock=soft)).status == CONTRADICTED
    # unlimited in the container (verify's default): not the node's limit, said so
    check = check_from_finding(f, out(probe_dev(soft, errno.ENOMEM), memlock=-1))
    assert check.status == NOT_TESTABLE and "--memlock default" in check.detail
    untested = device(probe=MemlockProbe("not testable", "RLIMIT_MEMLOCK is unlimited: no registration can exceed it"))
    check = check_from_finding(f, out(untested, memlock=soft))
    assert check.status == NOT_TESTABLE and "unlimited" in check.detail


def test_memlock_zero_uses_the_probe(matrix):
    f = emit_finding(matrix, "REG-MEMLOCK-ZERO", [Evidence("node.limits.memlock_kib", 0)], reg_fn="ibv_reg_mr")
    dev = device(
        reg("host", "base", "ibv_reg_mr"),  # with CAP_IPC_LOCK the normal case registers
        probe=MemlockProbe(
            "tested", None, 1000, True, True, (reg("host", "memlock-above", "ibv_reg_mr", errno.EPERM),)
        ),
    )
    check = check_from_finding(f, out(dev, memlock=0, cap=True))
    assert check.status == CONFIRMED and "without CAP_IPC_LOCK" in check.observed


# ------------------------------------------------------------------ the real verifier, built here


@pytest.fixture(scope="module")
def verifier_doc(tmp_path_factory):
    from imgcheck.verify.build import build

    try:
        path = build(str(tmp_path_factory.mktemp("vf") / "imgcheck-verifier"))
    except Exception as exc:  # no compiler: the build tests say so
        pytest.skip(f"verifier not built: {exc}")
    env = dict(os.environ, IMGCHECK_VERIFY_GPU="0")
    res = subprocess.run([path], capture_output=True, text=True, env=env, timeout=60)
    return res.stdout


def test_verifier_reports_fork_init_and_ipc_lock(verifier_doc):
    doc = json.loads(verifier_doc)
    assert isinstance(doc["cap_ipc_lock"], bool | None)
    o = parse_output(verifier_doc)
    if o.libibverbs.opened is None:
        pytest.skip("no libibverbs on this machine")
    assert o.fork_init is not None and o.fork_init.symbol_available
    assert o.fork_init.rc == 0  # NCCL ignores the result; the call itself must not fail on a stock libibverbs
    assert o.fork_init.status in ("enabled", "unneeded", "disabled", None)
    assert any(x.id == "ibv_fork_init" for x in observations(o))


def test_forced_pcie_dmabuf_refusal_names_the_c2c_case():
    """The verifier exports each GPU buffer a second time with the PCIe mapping NCCL >= 2.26.2 asks for."""
    r = reg("gpu:cuMemAlloc", "base+ro+pcie", "ibv_reg_dmabuf_mr", ENOTSUPP)
    dev = device(reg("gpu:cuMemAlloc", "base+ro", "ibv_reg_dmabuf_mr"), r)
    match = regrows.explain(r, dev, out(dev))
    assert match.row == "RE-ENOTSUPP-DMABUF-ATTACH" and "forced PCIe mapping" in match.meaning


def test_data_direct_refusals_are_their_row(table_rows):
    """NCCL >= 2.27.3 registers with mlx5dv_reg_dmabuf_mr(DATA_DIRECT) on Data Direct devices."""
    for err, words in ((errno.EINVAL, "no Data Direct device"), (errno.EOPNOTSUPP, "unaligned")):
        r = reg("gpu:cuMemAlloc", "base+ro+data-direct", "mlx5dv_reg_dmabuf_mr", err)
        dev = device(r)
        match = regrows.explain(r, dev, out(dev))
        assert match.row == "RE-DATA-DIRECT" and words in match.meaning
    assert "RE-DATA-DIRECT" in table_rows


def test_verifier_reports_the_mlx5dv_api(verifier_doc):
    o = parse_output(verifier_doc)
    if o.libibverbs.opened is None:
        pytest.skip("no libibverbs on this machine")
    assert o.mlx5dv is not None  # asked for, as NCCL does; whether the image's libmlx5 has MLX5_1.25 is reported
    if o.mlx5dv.opened is None:
        assert not o.mlx5dv.reg_dmabuf_mr and not o.mlx5dv.get_data_direct_sysfs_path


def test_bar1_sweep_enomem_counts_what_it_kept_registered():
    """The sweep keeps its MRs, and MLNX >= 5.1-2.5.8.0 counts peer-memory GPU MRs against memlock: an ENOMEM
    after two 4 MiB chunks under an 8 MiB limit is memlock, not the GPU driver."""
    failure = reg("gpu:cuMemAlloc", "bar1-sweep", "ibv_reg_mr_iova2", errno.ENOMEM)
    sweep = Bar1Sweep("gpu:cuMemAlloc", 4 * MIB, 1 << 30, registered=2, registered_bytes=8 * MIB, failure=failure)
    dev = device(sweep=sweep)
    assert row(failure, dev, out(dev, memlock=8 * MIB)) == "RE-ENOMEM-MEMLOCK"
    assert row(failure, dev, out(dev, memlock=64 << 30)) == "RE-ENOMEM-P2P"


def test_host_failures_name_fork_protection_when_it_is_on():
    import dataclasses

    from imgcheck.verify.result import ForkInit

    dev = device(reg("host", "base", "ibv_reg_mr", errno.ENOMEM))
    on = dataclasses.replace(out(dev), fork_init=ForkInit(True, 0, None, "enabled"))
    off = dataclasses.replace(out(dev), fork_init=ForkInit(True, 0, None, "unneeded"))
    assert "RE-FORK-MADVISE" in regrows.explain(dev.registrations[0], dev, on).meaning
    assert "RE-FORK-MADVISE" not in regrows.explain(dev.registrations[0], dev, off).meaning
