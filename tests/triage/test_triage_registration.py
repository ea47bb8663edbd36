"""Triage of registration errors (docs/registration-errors.md): real excerpts where public threads have them
(tests/triage/logs/README.md names each URL); lines built from the printk/NCCL format strings where no
public log exists yet, marked as such."""

from __future__ import annotations

import os

from imgcheck.triage import triage

HERE = os.path.dirname(__file__)


def _log(name):
    return os.path.join(HERE, "logs", name)


def _diag(report, sid):
    return next(d for d in report.diagnoses if d.signature == sid)


def test_peermem_that_does_not_load_is_named():
    report = triage([_log("nv-peer-memory-63-load-einval.log")])
    assert report.first_failure.signature == "PEERMEM-LOAD-EINVAL"
    assert [c.id for c in _diag(report, "PEERMEM-LOAD-EINVAL").causes][:1] == ["inbox-kernel"]


def test_invalid_context_diagnostic_is_advisory_and_harmless():
    report = triage([_log("nv-peer-memory-120-invalid-context.log")])
    d = _diag(report, "PEERMEM-INVALID-CONTEXT")
    assert d.causes[0].id == "harmless"
    assert report.first_failure is None or report.first_failure.signature != "PEERMEM-INVALID-CONTEXT"


def test_dmabuf_einval_is_not_the_old_kernel_case():
    report = triage([_log("mkernel-26-dmabuf-einval.log")])
    ids = [d.signature for d in report.diagnoses]
    assert "IBV-REG-DMABUF-EINVAL" in ids and "IBV-REG-DMABUF-EOPNOTSUPP" not in ids


def test_cumem_efault_offers_the_cumem_cause():
    report = triage([_log("mscclpp-657-cumem-efault.log")])
    d = _diag(report, "IBV-REG-MR-EFAULT")
    assert "cumem-without-rdma-flag" in [c.id for c in d.causes]


def test_einval_points_at_the_peer_memory_kernel_log():
    report = triage([_log("nccl-1842-einval.log")])
    d = _diag(report, "IBV-REG-MR-EINVAL")
    assert "peermem-kernel-log" in [c.id for c in d.causes]


def test_eperm_and_nv_dma_map_lines(tmp_path):
    # No public log has these yet: the lines are NCCL's "Call to %s failed with error %s" (misc/ibvwrap.cc) with
    # strerror(EPERM), and nvidia-peermem's peer_err format with nv_dma_map's message (nvidia-peermem.c:71, 313).
    log = tmp_path / "constructed.log"
    log.write_text(
        "host1:12:34 [0] misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error "
        "Operation not permitted\n"
        "[ 812.000001] nvidia-peermem nv_dma_map:313 ERROR nv_dma_map -- assumption of 64KB pages failed "
        "size_id=0\n"
    )
    report = triage([str(log)])
    ids = [d.signature for d in report.diagnoses]
    assert "IBV-REG-MR-EPERM" in ids and "IBV-REG-MR-EINVAL" not in ids
    assert _diag(report, "IBV-REG-MR-EPERM").causes[0].id == "memlock-zero"
    assert _diag(report, "PEERMEM-DMA-MAP-REFUSED").causes[0].id == "page-size"  # promoted by the line
