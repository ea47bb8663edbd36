"""GPU-memory registration by libraries other than NCCL (catalog gpu_memory_registrars): Mooncake, NVSHMEM and
DeepEP fail at registration where NCCL stages through host memory. The image is the committed real Debian bookworm
rdma-core userspace with the library's Python distribution as the extractor names it (canonical name, version from
`{name}-{version}.dist-info`); the nodes are the committed engine node fixtures."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import SITE, by_id, committed_facts, ids, node, replace_in, run, unknown_rules, with_nccl

from imgcheck.model.image import Package

RULE = "GDR-REGISTRAR-FAILS-WITHOUT-GDR"


@pytest.fixture(scope="module")
def bookworm():
    return committed_facts("bookworm")


def with_dist(image, name, version):
    path = f"{SITE}/{name.replace('-', '_')}-{version}.dist-info/METADATA"
    return dataclasses.replace(image, packages=image.packages + (Package(name, version, "python", path),))


def no_peermem(name):
    return replace_in(node(name), "gpu.peermem.loaded", False)


def test_mooncake_without_peermem_or_dmabuf_fails_at_registration(bookworm):
    """MLNX_OFED node, proprietary GPU modules (no DMA-BUF export), nvidia-peermem not loaded."""
    image = with_dist(bookworm, "mooncake-transfer-engine", "0.3.12")
    f = by_id(run(image, no_peermem("mofed-5.8-proprietary-535-peermem")), RULE)
    assert f.severity == "error"
    assert "Mooncake Transfer Engine (mooncake-transfer-engine 0.3.12)" in f.title
    assert f.predicted_error == "Failed to register memory"  # RdmaContext::registerMemoryRegionInternal
    assert "proprietary kernel modules" in f.mechanism and "nvidia-peermem is not loaded" in f.mechanism
    ev = {e.fact: e.value for e in f.evidence}
    assert ev["node.gpu.peermem.loaded"] is False


def test_nvshmem_and_deepep_are_named_together(bookworm):
    image = with_dist(with_dist(bookworm, "nvidia-nvshmem-cu12", "3.2.5"), "deep-ep", "1.1.0")
    f = by_id(run(image, no_peermem("mofed-5.8-proprietary-535-peermem")), RULE)
    assert "NVSHMEM (nvidia-nvshmem-cu12 3.2.5)" in f.title and "DeepEP (deep-ep 1.1.0)" in f.title
    assert f.predicted_error == "mem registration failed"


def test_peer_memory_loaded_decides_it(bookworm):
    image = with_dist(bookworm, "mooncake-transfer-engine", "0.3.12")
    result = run(image, node("mofed-5.8-proprietary-535-peermem"))
    assert RULE not in ids(result) and RULE not in unknown_rules(result)


def test_dmabuf_usable_without_peermem_asks_which_build(bookworm):
    """Open GPU modules on a 6.8 inbox kernel: DMA-BUF works, no peer memory. A Mooncake built WITH_NVIDIA_PEERMEM
    still calls ibv_reg_mr and fails; one built without it registers through ibv_reg_dmabuf_mr: asked, not guessed."""
    image = with_dist(bookworm, "mooncake-transfer-engine", "0.3.12")
    result = run(image, node("inbox-6.8-open-570"))
    assert RULE not in ids(result)
    reason = next(u.reason for u in result.unknowns if u.rule == RULE)
    assert "WITH_NVIDIA_PEERMEM" in reason


def test_nccl_alone_is_gdr_peermem_missing_not_this_rule(bookworm):
    result = run(with_nccl(bookworm, "2.21.5"), no_peermem("mofed-5.8-proprietary-535-peermem"))
    assert "GDR-PEERMEM-MISSING" in ids(result)
    assert RULE not in ids(result) and RULE not in unknown_rules(result)


def test_unknown_peermem_state_is_asked(bookworm):
    image = with_dist(bookworm, "mooncake-transfer-engine", "0.3.12")
    n = replace_in(node("mofed-5.8-proprietary-535-peermem"), "gpu.peermem.loaded", None)
    assert RULE in unknown_rules(run(image, n))


def test_node_rules_name_the_registrar_as_the_workload(bookworm):
    """The node-side GPUDirect rules say which path of the image they evaluate: the registrar, not a generic one."""
    image = with_dist(bookworm, "mooncake-transfer-engine", "0.3.12")
    result = run(image, no_peermem("mofed-5.8-proprietary-535-peermem"))
    f = by_id(result, "NODE-DMABUF-UNAVAILABLE")
    workload = next(e.value for e in f.evidence if e.fact == "workload.path")
    assert workload.startswith("Mooncake Transfer Engine (mooncake-transfer-engine 0.3.12)")
