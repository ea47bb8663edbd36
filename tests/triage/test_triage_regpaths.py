"""Issue 34: the registration paths' triage signatures, on lines in the format their printing site uses.

Each case names the row of docs/registration-errors.md and the cause a reader should check first.
"""

from __future__ import annotations

import pytest

from imgcheck.triage import triage

CASES = [
    # (row, lines, first signature, first cause)
    (
        "RE-ENOTSUPP-DMABUF-ATTACH",
        ["transport/net_ib/reg.cc:36 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Unknown error 524"],
        "IBV-REG-DMABUF-ENOTSUPP-524",
        "force-pcie-topology",
    ),
    (
        "RE-ENOTSUPP-DMABUF-ATTACH",
        ["[ 77.120001] NVRM: dma-buf attach failed: PCI topology not supported for dma-buf"],
        "IBV-REG-DMABUF-ENOTSUPP-524",
        "pci-topology",
    ),
    (
        "RE-ENOTSUPP-DMABUF-ATTACH",
        ["[ 77.120001] NVRM: dma-buf attach failed: importer unable to handle MMIO without struct page"],
        "IBV-REG-DMABUF-ENOTSUPP-524",
        "importer-without-p2p",
    ),
    (
        "RE-ENOTSUPP-524",
        ["misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr failed with error Unknown error 524"],
        "IBV-REG-MR-ENOTSUPP-524",
        "rm-not-supported",
    ),
    (
        "RE-EIO-P2P",
        ["misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Input/output error"],
        "IBV-REG-MR-GPU-ERRNO",
        "gpu-state-eio",
    ),
    (
        "RE-EBUSY-P2P",
        ["misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Device or resource busy"],
        "IBV-REG-MR-GPU-ERRNO",
        "state-in-use-ebusy",
    ),
    (
        "RE-ENODEV-P2P",
        ["misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error No such device"],
        "IBV-REG-MR-GPU-ERRNO",
        "gpu-not-found-enodev",
    ),
    (
        "RE-DMABUF-ENOMEM",
        ["misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Cannot allocate memory"],
        "IBV-REG-DMABUF-ERRNO",
        "dmabuf-enomem-not-memlock",
    ),
    (
        "RE-DMABUF-EBADF",
        ["misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Bad file descriptor"],
        "IBV-REG-DMABUF-ERRNO",
        "dmabuf-fd-ebadf",
    ),
    (
        "RE-DMABUF-EFAULT",
        ["misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Bad address"],
        "IBV-REG-DMABUF-ERRNO",
        "dmabuf-efault",
    ),
    (
        "RE-DATA-DIRECT",
        [
            "misc/mlx5dvwrap.cc:77 NCCL WARN NET/MLX5: Call to mlx5dv_reg_dmabuf_mr failed with error Operation not supported"
        ],
        "MLX5DV-REG-DMABUF",
        "data-direct-unsupported",
    ),
    (
        "RE-DMA-MAP",
        ["[ 8123.774120] __ib_umem_get: failed to map scatterlist, npages=512"],
        "UMEM-DMA-MAP-FAILED",
        "iommu-mapping",
    ),
    (
        "RE-EINVAL-NV-PEER-MEM",
        [
            "[ 912.004411] nv_mem nv_dma_map:295 nv_dma_map -- unexpected number of page table entries got=32, expected=16"
        ],
        "NV-PEER-MEM-LEGACY-ERROR",
        "page-table-entries",
    ),
    (
        "RE-EINVAL-NV-PEER-MEM",
        ["[ 912.004411] nv_mem nv_dma_map:280 nv_dma_map -- assumption of 64KB pages failed size_id=0"],
        "NV-PEER-MEM-LEGACY-ERROR",
        "page-size",
    ),
    (
        "RE-EFA-EINVAL-SYNC-MEMOPS",
        [
            "register_rail_mr_buffer:617 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 4. "
            "RC: -22, Error: Invalid argument"
        ],
        "OFI-REG-MR-FAILED",
        "sync-memops-cumem",
    ),
    (
        "RE-EFA-EFAULT",
        [
            "register_rail_mr_buffer:617 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 0. "
            "RC: -14, Error: Bad address"
        ],
        "OFI-REG-MR-FAILED",
        "cuda-without-dmabuf",
    ),
    (
        "RE-EFA-ENOMEM",
        [
            "register_rail_mr_buffer:617 NCCL WARN NET/OFI Unable to register memory (type = 1) for device 0. "
            "RC: -12, Error: Cannot allocate memory"
        ],
        "OFI-REG-MR-FAILED",
        "efa-enomem",
    ),
]


@pytest.mark.parametrize("row, lines, signature, first_cause", CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_row_signature_and_first_cause(tmp_path, row, lines, signature, first_cause):
    path = tmp_path / "rank0.log"
    path.write_text("\n".join(lines) + "\n")
    report = triage([str(path)])
    diagnosis = report.diagnoses[0]
    assert diagnosis.signature == signature, row
    assert diagnosis.causes[0].id == first_cause, [c.id for c in diagnosis.causes]


def test_ofi_registration_failure_outranks_the_generic_ofi_signature(tmp_path):
    path = tmp_path / "rank0.log"
    path.write_text(
        "register_rail_mr_buffer:617 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 4. "
        "RC: -22, Error: Invalid argument\n"
    )
    report = triage([str(path)])
    assert report.first_failure.signature == "OFI-REG-MR-FAILED"


def test_fork_protection_and_row_specific_memlock_text():
    from imgcheck.triage.signatures import load_signatures

    sigs = {s.id: s for s in load_signatures().signatures}
    assert "fork-protection-madvise" in [c.id for c in sigs["IBV-REG-MR-EINVAL"].causes]
    enomem = {c.id: c for c in sigs["IBV-REG-MR-ENOMEM"].causes}
    assert {"fork-protection-max-map-count", "dma-map"} <= set(enomem)
    assert "5.1-2.5.8.0" in enomem["memlock-gpu-buffers"].text
    efault = [c.id for c in sigs["IBV-REG-MR-EFAULT"].causes]
    assert {"bar1-exhausted", "mig-enabled", "vgpu-without-gpudirect"} <= set(efault)


def test_real_ofi_enomem_log_names_the_efa_row():
    """NVIDIA/nccl#563 (tests/triage/logs/nccl-563-ofi-register-enomem.log): an older plugin prints RC: 12."""
    import os

    here = os.path.dirname(__file__)
    report = triage([os.path.join(here, "logs", "nccl-563-ofi-register-enomem.log")])
    diagnosis = next(d for d in report.diagnoses if d.signature == "OFI-REG-MR-FAILED")
    assert diagnosis.causes[0].id == "efa-enomem"
