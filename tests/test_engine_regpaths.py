"""Issue 34: the corrections to docs/registration-errors.md, each decided from the cited source.

- MLNX 4.9 ... 5.1-2.3.7.1 run the peer-memory fallback after `out:`, so a memlock failure of a peer-claimed
  GPU buffer still registers; from 5.1-2.5.8.0 the fallback comes first and the memlock ENOMEM is returned
  (knneth/mlnx-ofa_kernel@5f821295 vs @8dabf983 drivers/infiniband/core/umem.c).
- /sys/kernel/mm/memory_peers is gone from 24.04-0.6.6.0 (knneth/mlnx-ofa_kernel@37c98fe7 peer_mem.c).
- CUMEM-OLD-DRIVER is for NCCL >= 2.24.3 only (2.19 - 2.23 use cuMem only with the VMM GDR attribute).
- NCCL_NET_GDR_LEVEL=LOC chooses host staging: no "no GPUDirect path" warning.
- a distribution kernel whose ib_core shows the peer-memory API is decided by that, not by the word "inbox".
"""

from __future__ import annotations

import pytest
from engine_facts import by_id, committed_facts, ids, node, replace_in, run, unknown_rules, with_nccl

from imgcheck.knowledge import stack as stack_k
from imgcheck.model.node import KernelModule


@pytest.fixture(scope="module")
def bookworm():
    return committed_facts("bookworm")


def _mofed(release: str, **changes):
    n = replace_in(node("mofed-5.8-proprietary-535-peermem"), "rdma.ofed_version", release)
    n = replace_in(n, "limits.memlock_kib", 8192)
    for path, value in changes.items():
        n = replace_in(n, path, value)
    return n


@pytest.mark.parametrize(
    "release, counted",
    [("4.9-4.1.7.0", False), ("5.1-2.3.7.1", False), ("5.1-2.5.8.0", True), ("5.8-3.0.7.0", True)],
)
def test_memlock_counts_gpu_buffers_from_5_1_2_5_8_0(bookworm, release, counted):
    f = by_id(run(with_nccl(bookworm, "2.21.5"), _mofed(release)), "MEMLOCK-TOO-LOW")
    if counted:
        assert "GPU buffers registered through nvidia-peermem count too" in f.mechanism
        assert ">= 5.1-2.5.8.0" in f.mechanism
    else:
        assert "do not fail on it here" in f.mechanism and "only host buffers fail" in f.mechanism
        assert "< 5.1-2.5.8.0" in f.mechanism


def test_memlock_dmabuf_buffers_not_counted(bookworm):
    n = replace_in(node("inbox-6.8-open-570"), "limits.memlock_kib", 8192)
    f = by_id(run(with_nccl(bookworm, "2.21.5"), n), "MEMLOCK-TOO-LOW")
    assert "through DMA-BUF here" in f.mechanism and "not counted" in f.mechanism


def test_memlock_host_staging_counts_everything(bookworm):
    image = with_nccl(bookworm, "2.21.5", env={"NCCL_NET_GDR_LEVEL": "LOC"})
    f = by_id(run(image, _mofed("5.8-3.0.7.0")), "MEMLOCK-TOO-LOW")
    assert "Every data buffer is host memory here" in f.mechanism


@pytest.mark.parametrize(
    "release, present", [("23.10-3.2.2.0", True), ("24.04-0.6.6.0", False), ("24.07-0.6.1.0", False)]
)
def test_memory_peers_gone_from_24_04(release, present):
    n = replace_in(node("mofed-5.8-proprietary-535-peermem"), "rdma.ofed_version", release)
    n = replace_in(n, "rdma.peer_memory_api", None)
    value, why = stack_k.memory_peers_api(run.__globals__["matrix"](), n)
    assert value is present, why


def test_nccl_2_22_on_mofed_24_04_is_decided_not_unknown(bookworm):
    n = replace_in(node("mofed-5.8-proprietary-535-peermem"), "rdma.ofed_version", "24.04-0.6.6.0")
    n = replace_in(n, "rdma.peer_memory_api", None)
    result = run(with_nccl(bookworm, "2.22.3"), n)
    assert "GDR-NCCL-LEGACY-MEMORY-PEERS" in ids(result)
    assert "GDR-NCCL-LEGACY-MEMORY-PEERS" not in unknown_rules(result)


@pytest.mark.parametrize("nccl, fires", [("2.19.3", False), ("2.23.4", False), ("2.24.3", True), ("2.27.3", True)])
def test_cumem_old_driver_only_where_buffers_lack_the_flag(bookworm, nccl, fires):
    image = with_nccl(bookworm, nccl, cuda="12.8.1", compat="570.124.06")
    result = run(image, node("mofed-5.8-470-peermem"))
    assert ("CUMEM-OLD-DRIVER" in ids(result)) is fires
    assert "CUMEM-OLD-DRIVER" not in unknown_rules(result)


def test_gdr_level_loc_is_not_a_missing_gdr_path(bookworm):
    n = replace_in(node("mofed-5.8-proprietary-535-peermem"), "gpu.peermem.loaded", False)
    assert "GDR-PEERMEM-MISSING" in ids(run(with_nccl(bookworm, "2.21.5"), n))
    image = with_nccl(bookworm, "2.21.5", env={"NCCL_NET_GDR_LEVEL": "LOC"})
    result = run(image, n)
    assert "GDR-PEERMEM-MISSING" not in ids(result) and "GDR-PEERMEM-MISSING" not in unknown_rules(result)


def test_inbox_kernel_whose_ib_core_exports_the_peer_api(bookworm):
    """An Ubuntu-style kernel carrying the peer-memory patches: ib_core exports ib_register_peer_memory_client."""
    base = node("inbox-5.15-proprietary-535")
    no_api, why = stack_k.node_has_feature(run.__globals__["matrix"](), base, "peer_memory_api")
    assert no_api is False and "upstream ib_core" in why
    core = KernelModule(
        path="/lib/modules/5.15.0-25-generic/kernel/drivers/infiniband/core/ib_core.ko",
        symbol_crcs={"ib_register_peer_memory_client": "0x1a2b3c4d"},
    )
    patched = replace_in(base, "rdma.module_files", {"ib_core": core})
    ok, why = stack_k.node_has_feature(run.__globals__["matrix"](), patched, "peer_memory_api")
    assert ok is True and "exports ib_register_peer_memory_client" in why
    f = by_id(run(with_nccl(bookworm, "2.21.5"), patched), "GDR-PEERMEM-MISSING")
    assert "inbox" not in f.title  # the generic "load nvidia-peermem" answer, not "cannot load on inbox"
    loaded = replace_in(base, "gpu.peermem.loaded", True)
    assert stack_k.node_has_feature(run.__globals__["matrix"](), loaded, "peer_memory_api")[0] is True


# ---------------------------------------------------------------- REG-BAR1-SMALL (RE-EFAULT-DECLINED, trigger BAR1)

T4_BAR1 = 256 << 20  # Tesla T4, Mellanox/nv_peer_memory#101; the K40c's lspci shows the same [size=256M]
A100_BAR1 = 128 << 30


def _with_bar1(n, size, name=None):
    import dataclasses

    gpus = tuple(dataclasses.replace(g, bar1_bytes=size, name=name or g.name) for g in n.gpu.gpus)
    return replace_in(n, "gpu.gpus", gpus)


def test_small_bar1_on_the_peer_memory_path(bookworm):
    n = _with_bar1(node("mofed-5.8-proprietary-535-peermem"), T4_BAR1, "Tesla T4")
    f = by_id(run(with_nccl(bookworm, "2.21.5"), n), "REG-BAR1-SMALL")
    assert f.severity == "warning" and f.confidence == "reported"
    assert f.predicted_error == "NCCL WARN Call to ibv_reg_mr_iova2 failed with error Bad address"
    assert "256 MiB" in f.title and "Tesla T4" in f.title and "RE-EFAULT-DECLINED" in f.mechanism
    assert any(e.fact.endswith(".bar1_bytes") and e.value == T4_BAR1 for e in f.evidence)


def test_large_bar1_is_fine_and_unread_bar1_is_unknown(bookworm):
    image = with_nccl(bookworm, "2.21.5")
    big = _with_bar1(node("mofed-5.8-proprietary-535-peermem"), A100_BAR1)
    result = run(image, big)
    assert "REG-BAR1-SMALL" not in ids(result) and "REG-BAR1-SMALL" not in unknown_rules(result)
    result = run(image, _with_bar1(node("mofed-5.8-proprietary-535-peermem"), None))  # facts without bar1_bytes
    assert "REG-BAR1-SMALL" in unknown_rules(result)
    assert "bar1_bytes" in next(u.reason for u in result.unknowns if u.rule == "REG-BAR1-SMALL")


def test_small_bar1_with_host_staging_or_dmabuf(bookworm):
    n = _with_bar1(node("mofed-5.8-proprietary-535-peermem"), T4_BAR1, "Tesla T4")
    loc = run(with_nccl(bookworm, "2.21.5", env={"NCCL_NET_GDR_LEVEL": "LOC"}), n)
    assert "REG-BAR1-SMALL" not in ids(loc) and "REG-BAR1-SMALL" not in unknown_rules(loc)
    dmabuf = run(with_nccl(bookworm, "2.21.5"), _with_bar1(node("inbox-6.8-open-570"), T4_BAR1, "Tesla T4"))
    assert "REG-BAR1-SMALL" in unknown_rules(dmabuf) and "REG-BAR1-SMALL" not in ids(dmabuf)


# ---------------------------------------------------------------- REG-DMABUF-FORCE-PCIE (RE-ENOTSUPP-DMABUF-ATTACH)


@pytest.mark.parametrize(
    "nccl, gpu, asked",
    [
        ("2.25.1", "NVIDIA GH200 480GB", False),  # before the force-PCIe mapping
        ("2.26.2", "NVIDIA GH200 480GB", True),
        ("2.27.3", "NVIDIA GB200", True),
        ("2.27.3", "NVIDIA A100-SXM4-80GB", False),  # PCIe-attached GPU: default mapping
    ],
)
def test_force_pcie_dmabuf_mapping_on_c2c_gpus(bookworm, nccl, gpu, asked):
    n = _with_bar1(node("inbox-6.8-open-570"), A100_BAR1, gpu)
    result = run(with_nccl(bookworm, nccl), n)
    assert "REG-DMABUF-FORCE-PCIE" not in ids(result)  # the PCIe path is not a node fact: never a verdict
    assert ("REG-DMABUF-FORCE-PCIE" in unknown_rules(result)) is asked
    if asked:
        reason = next(u.reason for u in result.unknowns if u.rule == "REG-DMABUF-FORCE-PCIE")
        assert "Unknown error 524" in reason and "nvidia-smi topo -m" in reason


def test_force_pcie_not_asked_on_the_peer_memory_path(bookworm):
    n = _with_bar1(node("mofed-5.8-proprietary-535-peermem"), A100_BAR1, "NVIDIA GH200 480GB")
    result = run(with_nccl(bookworm, "2.27.3"), n)
    assert "REG-DMABUF-FORCE-PCIE" not in unknown_rules(result)


# ---------------------------------------------------------------- REG-VGPU-GPUDIRECT (RE-EFAULT-DECLINED, trigger vGPU)


@pytest.mark.parametrize(
    "name, asked", [("NVIDIA A100-40C", True), ("GRID T4-16Q", True), ("NVIDIA A100-SXM4-80GB", False)]
)
def test_vgpu_types_raise_the_gpudirect_question(bookworm, name, asked):
    n = _with_bar1(node("mofed-5.8-proprietary-535-peermem"), A100_BAR1, name)
    result = run(with_nccl(bookworm, "2.21.5"), n)
    assert "REG-VGPU-GPUDIRECT" not in ids(result)
    assert ("REG-VGPU-GPUDIRECT" in unknown_rules(result)) is asked
    loc = run(with_nccl(bookworm, "2.21.5", env={"NCCL_NET_GDR_LEVEL": "LOC"}), n)
    assert "REG-VGPU-GPUDIRECT" not in unknown_rules(loc)  # host staging registers no GPU memory
