"""NVSHMEM's own peer-memory check (issue #32, DeepEP PR #151): NVSHMEM-PEERMEM-UNDETECTED decides from the
nvshmem_peer_detection rows (NVSHMEM's source per release), the image's NVSHMEM wheel and the node's peer-memory
facts; the committed node facts are real layouts (MLNX_OFED 5.8 with nvidia_peermem and memory_peers, DOCA 24.10
with nvidia_peermem and no /sys/kernel/mm/memory_peers, proprietary and open GPU modules)."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import committed_facts, matrix, node

from imgcheck.engine import evaluate
from imgcheck.model.image import Package

MATRIX = matrix()
RULE = "NVSHMEM-PEERMEM-UNDETECTED"
ROWS = MATRIX.rows("nvshmem_peer_detection")


def _image(version):
    image = committed_facts("bookworm")
    extra = (Package("nvidia-nvshmem-cu12", version, "python"),) if version else ()
    return dataclasses.replace(image, packages=image.packages + extra)


def _run(version, nd):
    result = evaluate(_image(version), nd, MATRIX)
    return [f for f in result.findings if f.id == RULE], [u for u in result.unknowns if u.rule == RULE]


def test_rows_change_once_from_memory_peers_to_the_module():
    kinds = [r["detection"] for r in ROWS]
    assert kinds[0] == "memory-peers-only" and set(kinds[1:]) == {"module-or-memory-peers"}
    assert all("/sys/module/nvidia_peermem/version" in r["checks"] for r in ROWS[1:])


# the DeepEP PR's layout: proprietary modules (no DMA-BUF), nvidia_peermem loaded, no memory_peers directory
DEEPEP_NODE = node("doca-24.10-proprietary-570-peermem")


def test_old_nvshmem_skips_its_transport_where_only_the_module_shows_peer_memory():
    (f,), _ = _run(ROWS[0]["release"], DEEPEP_NODE)
    assert f.severity == "error" and f.predicted_error.startswith("neither nv_peer_mem, or nvidia_peermem detected")
    assert "nvidia-nvshmem-cu12" in f.title and "proprietary" in f.mechanism


def test_fixed_nvshmem_and_a_node_with_memory_peers_are_clean():
    assert _run("3.3.9", DEEPEP_NODE) == ([], [])
    assert _run(ROWS[0]["release"], node("mofed-5.8-proprietary-535-peermem")) == (
        [],
        [],
    )  # memory_peers/nv_mem exists there
    assert _run(None, DEEPEP_NODE) == ([], [])  # no NVSHMEM in the image


@pytest.mark.parametrize("nd", [node("doca-24.10-open-580-peermem")])
def test_open_modules_leave_the_dmabuf_path_open_so_it_asks(nd):
    found, (u,) = _run(ROWS[0]["release"], nd)
    assert not found and "DMA-BUF" in u.reason
