"""GPUDirect RDMA rules: peer memory, the NCCL <= 2.22.3 memory_peers check, DMA-BUF, cuMem on old drivers."""

from __future__ import annotations

import pytest
from engine_facts import by_id, committed_facts, ids, node, replace_in, run, unknown_rules, with_nccl


@pytest.fixture(scope="module")
def bookworm():
    return committed_facts("bookworm")


@pytest.fixture(scope="module")
def bullseye():
    return committed_facts("bullseye")


def test_inbox_kernel_with_proprietary_driver_has_no_gdr(bookworm):
    result = run(with_nccl(bookworm, "2.21.5"), node("inbox-5.15-proprietary-535"))
    f = by_id(result, "GDR-PEERMEM-MISSING")
    assert f.severity == "warning" and f.confidence == "verified"
    assert f.predicted_error == "NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'"
    assert "open GPU kernel modules" in " ".join(f.fixes)
    assert "inbox" in f.title and "proprietary" in f.title
    ev = {e.fact: e.value for e in f.evidence}
    assert ev["image.nccl.version"] == "2.21.5" and ev["node.gpu.kernel_module"] == "proprietary"
    assert "pip wheel" in ev["image.nccl.selection"]


def test_inbox_kernel_with_open_driver_uses_dmabuf(bookworm):
    result = run(with_nccl(bookworm, "2.21.5"), node("inbox-6.8-open-570"))
    assert not {"GDR-PEERMEM-MISSING", "DMABUF-UNSUPPORTED", "GDR-NCCL-LEGACY-MEMORY-PEERS"} & set(ids(result))
    assert not [r for r in unknown_rules(result) if r.startswith(("GDR", "DMABUF"))]


def test_mlnx_node_without_peermem(bookworm):
    n = replace_in(node("mofed-5.8-proprietary-535-peermem"), "gpu.peermem.loaded", False)
    f = by_id(run(with_nccl(bookworm, "2.21.5"), n), "GDR-PEERMEM-MISSING")
    assert "modprobe nvidia-peermem" in f.fixes[0]
    assert "inbox" not in f.title


def test_peermem_from_another_driver_build(bookworm):
    n = replace_in(node("mofed-5.8-proprietary-535-peermem"), "gpu.peermem.version", "535.54.03")
    f = by_id(run(with_nccl(bookworm, "2.21.5"), n), "GDR-PEERMEM-MISSING")
    assert f.confidence == "hypothesis"
    assert f.predicted_error == "NCCL WARN Call to ibv_reg_mr_iova2 failed with error Bad address"


def test_unknown_kernel_module_makes_gdr_unknown(bookworm):
    n = replace_in(node("inbox-5.15-proprietary-535"), "gpu.kernel_module", None)
    result = run(with_nccl(bookworm, "2.21.5"), n)
    assert "GDR-PEERMEM-MISSING" in unknown_rules(result)
    reason = next(u.reason for u in result.unknowns if u.rule == "GDR-PEERMEM-MISSING")
    assert "gpu.kernel_module" in reason


@pytest.mark.parametrize("nccl, expect", [("2.21.5", True), ("2.22.3", True), ("2.23.4", False), ("2.27.3", False)])
def test_nccl_up_to_2_22_3_misses_peermem_on_doca_without_memory_peers(bookworm, nccl, expect):
    result = run(with_nccl(bookworm, nccl), node("doca-24.10-proprietary-570-peermem"))
    assert ("GDR-NCCL-LEGACY-MEMORY-PEERS" in ids(result)) is expect
    if expect:
        f = by_id(result, "GDR-NCCL-LEGACY-MEMORY-PEERS")
        assert (
            f.predicted_error == "NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'"
            and "2.23.4" in " ".join(f.fixes)
        )
    assert "GDR-PEERMEM-MISSING" not in ids(result)


def test_legacy_check_is_moot_when_dmabuf_works(bookworm):
    # open modules + DOCA 24.10 + rdma-core 44: NCCL uses DMA-BUF and never asks for peer memory
    result = run(
        with_nccl(bookworm, "2.21.5"),
        node(
            "doca-24.10-open-580-peermem",
        ),
    )
    assert "GDR-NCCL-LEGACY-MEMORY-PEERS" not in ids(result)


def test_legacy_check_fine_on_mofed_with_memory_peers(bookworm):
    result = run(with_nccl(bookworm, "2.18.3"), node("mofed-5.8-proprietary-535-peermem"))
    assert not {"GDR-NCCL-LEGACY-MEMORY-PEERS", "GDR-PEERMEM-MISSING"} & set(ids(result))


def test_dmabuf_with_old_rdma_core_in_the_image(bullseye):
    """bullseye's rdma-core 33.2 lacks ibv_reg_dmabuf_mr; NCCL 2.13 on an open-module node fails (nccl#778)."""
    f = by_id(run(with_nccl(bullseye, "2.13.4"), node("inbox-6.8-open-570")), "DMABUF-UNSUPPORTED")
    assert f.severity == "error" and f.confidence == "reported"
    assert f.predicted_error == "NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Operation not supported"
    assert "lacks ibv_reg_dmabuf_mr (first in rdma-core 34.0)" in f.mechanism
    lib_ev = next(e for e in f.evidence if e.fact == "image.rdma.libibverbs.has_reg_dmabuf_mr")
    assert lib_ev.value is False and lib_ev.path.endswith("libibverbs.so.1.11.33.2") and lib_ev.layer


def test_dmabuf_newer_nccl_falls_back(bullseye):
    f = by_id(run(with_nccl(bullseye, "2.21.5"), node("inbox-6.8-open-570")), "DMABUF-UNSUPPORTED")
    assert f.severity == "info" and f.predicted_error is None


def test_dmabuf_old_mlnx_ofed_kernel(bookworm):
    n = replace_in(node("mofed-23.10-open-550-peermem"), "rdma.ofed_version", "5.4-3.6.8.1")
    f = by_id(run(with_nccl(bookworm, "2.13.4"), n), "DMABUF-UNSUPPORTED")
    assert "5.4-3.6.8.1 < 5.5" in f.mechanism


def test_dmabuf_old_inbox_kernel(bookworm):
    n = replace_in(node("inbox-6.8-open-570"), "kernel.release", "5.10.0-28-amd64")
    f = by_id(run(with_nccl(bookworm, "2.13.4"), n), "DMABUF-UNSUPPORTED")
    assert "kernel 5.10.0-28-amd64 < 5.12" in f.mechanism


def test_dmabuf_not_tried_with_proprietary_driver_or_when_disabled(bullseye):
    assert "DMABUF-UNSUPPORTED" not in ids(run(with_nccl(bullseye, "2.13.4"), node("inbox-5.15-proprietary-535")))
    off = with_nccl(bullseye, "2.13.4", env={"NCCL_DMABUF_ENABLE": "0"})
    assert "DMABUF-UNSUPPORTED" not in ids(run(off, node("inbox-6.8-open-570")))
    assert "DMABUF-UNSUPPORTED" not in ids(run(with_nccl(bullseye, "2.12.12"), node("inbox-6.8-open-570")))


def test_cumem_on_r470_with_forward_compat(bookworm):
    image = with_nccl(bookworm, "2.27.3", cuda="12.8.1", compat="570.124.06")
    result = run(image, node("mofed-5.8-470-peermem"))
    f = by_id(result, "CUMEM-OLD-DRIVER")
    assert f.confidence == "hypothesis" and f.severity == "warning"
    assert f.predicted_error == "NCCL WARN Call to ibv_reg_mr_iova2 failed with error Invalid argument"
    assert any("NCCL_CUMEM_ENABLE=0" in fix for fix in f.fixes)
    assert any("NCCL_NET_GDR_LEVEL=LOC" in fix for fix in f.fixes)
    # relaxed ordering off in the image: the same failure would name ibv_reg_mr
    off = with_nccl(bookworm, "2.27.3", cuda="12.8.1", compat="570.124.06", env={"NCCL_IB_PCI_RELAXED_ORDERING": "0"})
    assert by_id(run(off, node("mofed-5.8-470-peermem")), "CUMEM-OLD-DRIVER").predicted_error.endswith(
        "ibv_reg_mr failed with error Invalid argument"
    )


def test_cumem_not_predicted_when_ruled_out(bookworm):
    n = node("mofed-5.8-470-peermem")
    assert "CUMEM-OLD-DRIVER" not in ids(run(with_nccl(bookworm, "2.18.3", cuda="12.2.2", compat="535.104.05"), n))
    off = with_nccl(bookworm, "2.27.3", cuda="12.8.1", compat="570.124.06", env={"NCCL_CUMEM_ENABLE": "0"})
    assert "CUMEM-OLD-DRIVER" not in ids(run(off, n))
    assert "CUMEM-OLD-DRIVER" not in ids(
        run(
            with_nccl(bookworm, "2.27.3", cuda="12.8.1", compat="570.124.06"), node("mofed-5.8-proprietary-535-peermem")
        )
    )
    no_pm = replace_in(n, "gpu.peermem.loaded", False)
    assert "CUMEM-OLD-DRIVER" not in ids(run(with_nccl(bookworm, "2.27.3", cuda="12.8.1", compat="570.124.06"), no_pm))


def test_gpu_image_without_nccl_is_unknown_not_silent(bookworm):
    import dataclasses

    image = dataclasses.replace(with_nccl(bookworm, "2.21.5"), nccl=())  # torch with NCCL linked statically
    result = run(image, node("inbox-5.15-proprietary-535"))
    for rule in ("GDR-PEERMEM-MISSING", "DMABUF-UNSUPPORTED", "CUMEM-OLD-DRIVER", "GDR-NCCL-LEGACY-MEMORY-PEERS"):
        assert rule in unknown_rules(result)
    assert all("NCCL" in u.reason for u in result.unknowns if u.rule.startswith("GDR"))
