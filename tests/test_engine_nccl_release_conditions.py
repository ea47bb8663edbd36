"""NCCL release rows connected to the facts they need (issue 32): a traced fix whose fact conditions hold is named
with what it still needs from the job (asked), a fact condition shown false drops it, and a known issue of a build
(sm_120 with an NCCL built before CUDA 12.8) is decided from the library's build string, for a pip wheel as for a
system libnccl."""

from __future__ import annotations

import dataclasses
import os

from engine_facts import committed_facts, matrix, node, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import load_job_spec
from imgcheck.model.node import Gpu

MATRIX = matrix()
LATER = "NCCL-RELEASE-LATER-FIX"
KNOWN = "NCCL-RELEASE-KNOWN-ISSUE"
NODE = "mofed-23.10-open-550-peermem"  # 8 H100, two mlx5 ports
REAL = os.path.join(os.path.dirname(__file__), "job", "specs", "real")


def _job(name):
    (job,) = load_job_spec(os.path.join(REAL, name))
    return job


def _gpus(n, names):
    return dataclasses.replace(
        n, gpu=dataclasses.replace(n.gpu, gpus=tuple(Gpu(index=i, name=m) for i, m in enumerate(names)))
    )


def _built_with(image, cuda):
    return dataclasses.replace(image, nccl=tuple(dataclasses.replace(c, cuda=cuda) for c in image.nccl))


def _named(result, rule, words):
    return [f for f in result.findings if f.id == rule and words in f.title]


# --- 2.7.3#8: crash in topology detection when the container sees a subset of the node's GPUs -------------------


def test_gpu_subset_fix_is_named_for_a_pod_given_one_of_the_nodes_gpus_and_asks_for_the_other_ranks():
    # Mellanox network-operator's RDMA test pod asks nvidia.com/gpu: 1 on an 8-GPU node: the container sees a subset
    image = with_nccl(committed_facts("bookworm"), "2.6.4", origin="library")
    result = evaluate(image, node(NODE), MATRIX, job=_job("network-operator-rdma-gpu-test-pod1.yml"))
    named = _named(result, LATER, "subset of GPUs")
    assert named and named[0].severity == "info"
    assert named[0].unshown and "other containers" in named[0].unshown[0]
    assert "container:gpu-subset" in named[0].mechanism


def test_gpu_subset_fix_drops_when_the_container_sees_every_gpu():
    # oobleck's start_container.sh: docker run --gpus all
    image = with_nccl(committed_facts("bookworm"), "2.6.4", origin="library")
    result = evaluate(image, node(NODE), MATRIX, job=_job("oobleck-start_container.sh"))
    assert not _named(result, LATER, "subset of GPUs")
    text = " ".join([u.reason for u in result.unknowns] + [f.mechanism for f in result.findings])
    assert "container:gpu-subset" not in text


def test_gpu_subset_fix_without_a_launch_is_counted_with_the_fact_it_needs():
    image = with_nccl(committed_facts("bookworm"), "2.6.4", origin="library")
    result = evaluate(image, node(NODE), MATRIX)
    assert not _named(result, LATER, "subset of GPUs")
    text = " ".join([u.reason for u in result.unknowns if u.rule == LATER] + [f.mechanism for f in result.findings])
    assert "container:gpu-subset" in text


def test_gpu_subset_fix_is_not_named_for_a_release_that_has_it():
    image = with_nccl(committed_facts("bookworm"), "2.7.3", origin="library")
    result = evaluate(image, node(NODE), MATRIX, job=_job("network-operator-rdma-gpu-test-pod1.yml"))
    assert not _named(result, LATER, "subset of GPUs")


# --- 2.8.4#1: alltoallv hang of 2.8.3's chunked send/recv schedule ------------------------------------------------


def test_alltoallv_hang_of_2_8_3_is_named_and_asks_for_the_collective():
    image = with_nccl(committed_facts("bookworm"), "2.8.3", origin="library")
    result = evaluate(image, node(NODE), MATRIX)
    listed = [f for f in result.findings if f.id == LATER and "alltoallv using point to point" in f.mechanism]
    assert listed and listed[0].severity == "info"
    assert any("ncclSend/ncclRecv" in c for c in listed[0].unshown)


def test_alltoallv_hang_is_not_named_before_the_code_existed_nor_after_the_fix():
    for version in ("2.7.8", "2.8.4"):
        image = with_nccl(committed_facts("bookworm"), version, origin="library")
        result = evaluate(image, node(NODE), MATRIX)
        assert not any("alltoallv using point to point" in f.mechanism for f in result.findings), version


# --- sm120_ptx_unroll_mismatch: NCCL built before CUDA 12.8 on a compute capability 12.0 GPU ---------------------

PRO6000 = ["NVIDIA RTX PRO 6000 Blackwell Workstation Edition"] * 2


def test_sm120_with_a_cuda_12_2_build_from_the_nvidia_nccl_wheel_is_a_warning():
    # nvidia-nccl-cu12 2.26.2 as torch 2.7.0 installs it; its build string says +cuda12.2 (NVIDIA/nccl#2418)
    image = _built_with(with_nccl(committed_facts("bookworm"), "2.26.2", origin="pip"), "12.2")
    result = evaluate(image, _gpus(node(NODE), PRO6000), MATRIX)
    named = [f for f in result.findings if f.id == KNOWN and "compute_90 PTX" in f.mechanism]
    assert named and named[0].severity == "warning"
    assert any("CUDA 12.8 or newer" in fix for fix in named[0].fixes)


def test_sm120_same_issue_for_a_system_libnccl():
    image = _built_with(with_nccl(committed_facts("bookworm"), "2.27.3", origin="library"), "12.4")
    result = evaluate(image, _gpus(node(NODE), PRO6000), MATRIX)
    assert [f for f in result.findings if f.id == KNOWN and "compute_90 PTX" in f.mechanism]


def test_sm120_build_cuda_unknown_asks_for_it():
    # a workstation without RDMA devices (the NIC-fusion known issue of 2.26.2 needs them; one finding of the rule
    # would take the place of this row's unknown)
    image = _built_with(with_nccl(committed_facts("bookworm"), "2.26.2", origin="pip"), None)
    n = _gpus(node(NODE), PRO6000)
    result = evaluate(image, dataclasses.replace(n, rdma=dataclasses.replace(n.rdma, devices=())), MATRIX)
    assert not [f for f in result.findings if f.id == KNOWN and "compute_90 PTX" in f.mechanism]
    asked = [u for u in result.unknowns if u.rule == KNOWN and "sm120_ptx_unroll_mismatch" in u.reason]
    assert asked and "image.nccl" in asked[0].facts


def test_sm120_issue_drops_for_a_cuda_12_8_build_an_h100_and_an_older_nccl():
    cases = [
        (_built_with(with_nccl(committed_facts("bookworm"), "2.26.2"), "12.8"), PRO6000),
        (_built_with(with_nccl(committed_facts("bookworm"), "2.26.2"), "12.2"), ["NVIDIA H100 80GB HBM3"] * 8),
        (_built_with(with_nccl(committed_facts("bookworm"), "2.25.1"), "12.2"), PRO6000),
    ]
    for image, gpus in cases:
        result = evaluate(image, _gpus(node(NODE), gpus), MATRIX)
        assert not [f for f in result.findings if f.id == KNOWN and "compute_90 PTX" in f.mechanism]
        assert not [u for u in result.unknowns if "sm120_ptx_unroll_mismatch" in u.reason]


def test_sm120_read_from_the_fat_binaries_when_inspect_read_them():
    # the SASS the library carries decides it before its build string: sm_90 only (the CUDA 12.x default before
    # 12.8) is the issue even when the build CUDA is not known; an sm_120 cubin is not
    base = _built_with(with_nccl(committed_facts("bookworm"), "2.26.2", origin="pip"), None)
    for sass, expected in (((70, 80, 90), True), ((80, 90, 100, 120), False)):
        image = dataclasses.replace(
            base, nccl=tuple(dataclasses.replace(c, sass_archs=sass, ptx_archs=(sass[-1],)) for c in base.nccl)
        )
        result = evaluate(image, _gpus(node(NODE), PRO6000), MATRIX)
        named = [f for f in result.findings if f.id == KNOWN and "compute_90 PTX" in f.mechanism]
        assert bool(named) is expected, sass


def test_sm120_for_nccl_known_only_from_torchs_pin_asks_for_the_build():
    # an image with torch 2.7.0 but no NCCL library read: the pin (nvidia-nccl-cu12==2.26.2) says the version and, by
    # the wheel's name, only the CUDA major: whether the build has sm_120 code is asked, never assumed
    pin = next(r for r in MATRIX.rows("torch_wheels") if r["torch"] == "2.7.0")
    image = _built_with(with_nccl(committed_facts("bookworm"), pin["nccl"], origin="torch-requirement"), "12")
    n = _gpus(node(NODE), PRO6000)
    result = evaluate(image, dataclasses.replace(n, rdma=dataclasses.replace(n.rdma, devices=())), MATRIX)
    assert not [f for f in result.findings if f.id == KNOWN and "compute_90 PTX" in f.mechanism]
    assert [u for u in result.unknowns if u.rule == KNOWN and "sm120_ptx_unroll_mismatch" in u.reason]


def test_a_link_layer_alone_does_not_give_a_fix_its_own_finding():
    # 2.24.3's IB crash (uninitialised connection metadata, traced to 2.20.3) needs transport:ib, which the IB node
    # shows, and merged ports, which no fact shows: it is listed among the fixes the job decides, not named alone
    image = with_nccl(committed_facts("bookworm"), "2.22.3", origin="library")
    result = evaluate(image, node(NODE), MATRIX)
    assert not _named(result, LATER, "uninitialized fields")
    # the listing names the first few fixes in its text and carries every one's conditions (more rows have a first
    # release since their fixing hunks were traced, so this one may be past the text's cut)
    listed = [f for f in result.findings if f.id == LATER and any("ports merged" in c for c in f.unshown)]
    assert listed and "the job's own" in listed[0].mechanism


def test_nvswitch_hidden_in_a_vm_is_named_for_board_gpus_and_asks_for_the_vm():
    # NCCL 2.7.5 on an HGX H100 node: 2.7.6's crash needs NVLink board GPUs (shown) and a VM hiding their NVSwitches
    image = with_nccl(committed_facts("bookworm"), "2.7.5", origin="library")
    named = _named(evaluate(image, node(NODE), MATRIX), LATER, "NVswitch is not visible inside a VM")
    assert named and any("VM" in c for c in named[0].unshown)
    # a PCIe model decides nothing: not named on its own
    result = evaluate(image, _gpus(node(NODE), ["NVIDIA L40S"] * 4), MATRIX)
    assert not _named(result, LATER, "NVswitch is not visible inside a VM")
