"""Fabric Manager, NVSwitch and NVLSM as node facts (issue 32): engine/fabric_manager.py and knowledge/fabric.py.

The node is gpu-operator#544's: driver 530.41.03 with nvidia-fabricmanager-530 530.30.02 on an NVSwitch board
(tests/fixtures/engine_nodes/README.md)."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import by_id, committed_facts, ids, matrix, node, replace_in, run, unknown_rules, with_nccl

from imgcheck.engine import facts
from imgcheck.knowledge.fabric import fabric_need
from imgcheck.model.node import Gpu

MISSING = "NODE-FABRIC-MANAGER-MISSING"
NOT_RUNNING = "NODE-FABRIC-MANAGER-NOT-RUNNING"
MISMATCH = "NODE-FABRIC-MANAGER-VERSION-MISMATCH"
NVLSM = "NODE-NVLSM-MISSING"
FABRIC_RULES = {MISSING, NOT_RUNNING, MISMATCH, NVLSM}


@pytest.fixture(scope="module")
def image():
    return with_nccl(committed_facts("bookworm"), "2.21.5")


def hgx(**fabric):
    n = node("hgx-h100-fm-530-mismatch")
    return dataclasses.replace(n, fabric=dataclasses.replace(n.fabric, **fabric))


def with_gpus(n, name: str, count: int):
    gpus = tuple(Gpu(index=i, name=name, pci_bus_id=f"00000000:{0x18 + i:02x}:00.0") for i in range(count))
    return replace_in(n, "gpu.gpus", gpus)


def fabric_said(result) -> set[str]:
    return (set(ids(result)) | set(unknown_rules(result))) & FABRIC_RULES


def test_fm_of_another_version_than_the_driver_is_named_with_both_versions(image):
    result = run(image, hgx())
    found = by_id(result, MISMATCH)
    assert found.severity == "error"
    assert "530.30.02" in found.predicted_error and "530.41.03" in found.predicted_error
    assert any("nvidia-fabricmanager-530=530.41.03" in fix for fix in found.fixes)
    # it was installed but did not start (the mismatch is why): both are said, nothing claims it is missing
    assert NOT_RUNNING in ids(result) and MISSING not in ids(result)


def test_matching_versions_and_a_running_fm_are_decided_fine(image):
    result = run(image, hgx(fm_version="530.41.03", fm_running=True))
    assert fabric_said(result) == set()


def test_no_fm_on_an_nvswitch_node_is_missing(image):
    result = run(image, hgx(fm_installed=False, fm_package=None, fm_version=None, fm_running=False))
    found = by_id(result, MISSING)
    assert "802" in found.predicted_error
    assert MISMATCH not in ids(result) and NOT_RUNNING not in ids(result)


def test_not_installed_on_the_host_with_processes_unseen_asks_instead_of_claiming(image):
    # the GPU Operator runs nv-fabricmanager in its driver container: no host package, yet it may run
    result = run(image, hgx(fm_installed=False, fm_package=None, fm_version=None, fm_running=None))
    assert MISSING not in ids(result)
    assert MISSING in unknown_rules(result)


def test_gpu_fabric_state_in_progress_says_registration_is_not_done(image):
    result = run(image, hgx(fm_version="530.41.03", fm_running=None, gpu_fabric_state="In Progress"))
    found = by_id(result, NOT_RUNNING)
    assert "In Progress" in found.title


def test_fm_facts_unknown_on_an_nvswitch_board_are_asked_not_silent(image):
    n = hgx(fm_installed=None, fm_package=None, fm_version=None, fm_running=None, fm_enabled=None)
    result = run(image, n)
    # "is it installed and running?" is asked once (MISSING); its version separately
    assert {MISSING, MISMATCH} <= set(unknown_rules(result)) and NOT_RUNNING not in unknown_rules(result)
    # installed, not known whether it runs: that is NOT-RUNNING's own question
    assert NOT_RUNNING in unknown_rules(run(image, hgx(fm_version="530.41.03", fm_running=None)))
    assert not set(ids(result)) & FABRIC_RULES


def test_the_gpu_models_decide_when_the_switches_were_not_read(image):
    # the held-out dstack#2348 / emmy#558 shape: only the GPUs are known
    n = hgx(nvswitch_pci=None, fm_installed=None, fm_package=None, fm_version=None, fm_running=None)
    assert fabric_need(n, matrix()).fabric_manager is True
    assert MISSING in unknown_rules(run(image, n))
    v100 = with_gpus(n, "Tesla V100-SXM3-32GB", 16)
    assert fabric_need(v100, matrix()).fabric_manager is True


def test_boards_without_nvswitch_are_decided_not_to_need_fm(image):
    n = hgx(nvswitch_pci=None, fm_installed=False, fm_running=False)
    for name, count in (("NVIDIA H100 80GB HBM3", 4), ("NVIDIA H100 PCIe", 8), ("NVIDIA L40S", 8)):
        need = fabric_need(with_gpus(n, name, count), matrix())
        assert need.fabric_manager is False, name
        assert fabric_said(run(image, with_gpus(n, name, count))) == set(), name
    # eight SXM GPUs without their switches: a VM of the shared-NVSwitch model (Fabric Manager runs outside it)
    assert fabric_need(hgx(nvswitch_pci=()), matrix()).fabric_manager is False


def test_nvlink5_boards_need_nvlsm_and_ib_umad(image):
    b200 = with_gpus(hgx(nvswitch_pci=None, fm_version="530.41.03", fm_running=True), "NVIDIA B200", 8)
    found = by_id(
        run(image, dataclasses.replace(b200, fabric=dataclasses.replace(b200.fabric, ib_umad_loaded=False))), NVLSM
    )
    assert "ib_umad" in found.title
    no_nvlsm = dataclasses.replace(b200, fabric=dataclasses.replace(b200.fabric, nvlsm_installed=False))
    assert "nvlsm" in by_id(run(image, no_nvlsm), NVLSM).title.lower()
    ok = dataclasses.replace(b200, fabric=dataclasses.replace(b200.fabric, nvlsm_installed=True))
    assert fabric_said(run(image, ok)) == set()
    assert NVLSM not in fabric_said(run(image, hgx()))  # H100's NVSwitches need no NVLSM


def test_gb200_compute_trays_do_not_run_fm(image):
    gb = with_gpus(hgx(nvswitch_pci=(), fm_installed=False, fm_running=False), "NVIDIA GB200", 4)
    assert fabric_need(gb, matrix()).fabric_manager is False
    assert fabric_said(run(image, gb)) == set()


def test_an_image_that_does_not_use_the_gpu_is_not_concerned():
    plain = committed_facts("bookworm")  # rdma userspace, no CUDA, NCCL or torch
    assert not set(ids(run(plain, hgx()))) & FABRIC_RULES


def test_catalog_patterns_pick_the_right_board():
    rows = matrix().rows("nvswitch_systems")
    import re

    def first(name):
        return next((r["system"] for r in rows if re.search(r["pattern"], name)), None)

    assert "B200" in first("NVIDIA B200")
    assert "GB200" in first("NVIDIA GB200")
    assert "H100" in first("NVIDIA H100 80GB HBM3") and first("NVIDIA H100 PCIe") is None
    assert first("NVIDIA H200 NVL") is None and "H200" in first("NVIDIA H200")
    assert "A100" in first("NVIDIA A100-SXM4-80GB") and first("NVIDIA A100-PCIE-40GB") is None
    assert first("Tesla V100-SXM2-32GB") is None  # DGX-1: direct NVLink, no NVSwitch


def test_an_unknown_board_is_asked_once_and_a_pcie_node_never(image):
    blank = replace_in(hgx(nvswitch_pci=None), "gpu.gpus", ())
    assert fabric_said(run(image, blank)) == {MISSING}  # one question: is this an NVSwitch system?
    a40 = with_gpus(hgx(nvswitch_pci=None, fm_installed=None, fm_running=None), "NVIDIA A40", 3)
    unread = dataclasses.replace(
        committed_facts("bookworm"), unknown={"nccl": "not read", "cuda": "not read"}
    )  # whether the image uses the GPU is unknown: a node without NVSwitch is fine whatever it is
    assert fabric_said(run(unread, a40)) == set()


def test_an_image_whose_gpu_components_are_not_read_is_asked_about_gpu_use_not_nccl():
    """Fabric Manager gates cuInit itself (802 until the fabric is up), so a plain CUDA program (gpu-burn) fails as
    NCCL does: with neither NCCL nor CUDA read, the finding assumes only that the image runs GPU code."""
    unread = facts.CUDA.blank(*facts.NCCL.blank(committed_facts("bookworm"), None, None))[0]
    assert unread.cuda is None and not unread.nccl
    result = run(unread, hgx(fm_installed=False, fm_package=None, fm_version=None, fm_running=False))
    found = by_id(result, MISSING)
    assert found.assumed_facts == (facts.GPU_WORKLOAD.name,), found.assumes
