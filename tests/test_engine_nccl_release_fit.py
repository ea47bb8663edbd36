"""NCCL release knowledge tied to its symptom and decided from facts (issue 32): later fixes ranked by fit, not by
version proximity; the derived cuMem state (engine/nccl_effective.py); the rows this issue added (2.27.3's bootstrap
accept retry, 2.18.3's DGX H800 performance fix, 2.29.2's fatal NVLS multicast bind). Built from the committed facts
of a real Debian image and the committed node facts."""

from __future__ import annotations

import dataclasses

from engine_facts import committed_facts, matrix, node, run, with_nccl

from imgcheck.engine import nccl_effective, nccl_releases
from imgcheck.engine.context import Ctx
from imgcheck.model.node import STACK_NONE, Gpu

LATER = "NCCL-RELEASE-LATER-FIX"
KNOWN = "NCCL-RELEASE-KNOWN-ISSUE"
H100 = "mofed-23.10-open-550-peermem"  # 2 H100 SXM (NVLink board parts), driver 550 (CUDA 12.4), two mlx5 ports
A100_470 = "mofed-5.8-470-peermem"  # 8 A100, driver 470 (CUDA 11.4)


def _gpus(n, names):
    return dataclasses.replace(
        n, gpu=dataclasses.replace(n.gpu, gpus=tuple(Gpu(index=i, name=m) for i, m in enumerate(names)))
    )


def _ctx(version, node_facts, env=None):
    return Ctx(with_nccl(committed_facts("bookworm"), version, env=env), node_facts, matrix())


def _text(result, rule):
    return " ".join(
        [f"{f.title} {f.mechanism}" for f in result.findings if f.id == rule]
        + [u.reason for u in result.unknowns if u.rule == rule]
    )


# --- the derived cuMem state (nccl_params default_history, nccl_features cumem_default) ---------------------------


def test_cumem_is_decided_from_the_release_default_and_the_driver():
    h100 = node(H100)
    assert nccl_effective.cumem(_ctx("2.17.1", h100)).on is False  # no cuMem path before 2.18.1
    assert nccl_effective.cumem(_ctx("2.18.1", h100)).on is False  # default 0 in 2.18
    on = nccl_effective.cumem(_ctx("2.26.2", h100))
    assert on.on is True and "auto (-2)" in on.why  # default -2, driver 550 reports CUDA 12.4
    # a driver for CUDA 11.4 (470) fails ncclIsCuMemSupported's 12.0 check
    assert nccl_effective.cumem(_ctx("2.26.2", node(A100_470))).on is False


def test_cumem_follows_the_setting_over_the_default():
    h100 = node(H100)
    assert nccl_effective.cumem(_ctx("2.26.2", h100, env={"NCCL_CUMEM_ENABLE": "0"})).on is False
    assert nccl_effective.cumem(_ctx("2.18.1", h100, env={"NCCL_CUMEM_ENABLE": "1"})).on is True


def test_cumem_in_2_19_to_2_23_also_needs_gpudirect_rdma_gpus():
    # 2.19.3's ncclIsCuMemSupported also reads GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED: no GPUDirect RDMA, no cuMem
    assert nccl_effective.cumem(_ctx("2.21.5", node(H100))).on is True
    geforce = _gpus(node(H100), ["NVIDIA GeForce RTX 4090"])
    assert nccl_effective.cumem(_ctx("2.21.5", geforce)).on is False
    assert nccl_effective.cumem(_ctx("2.26.2", geforce)).on is True  # 2.24.3 dropped that check


def test_cumem_without_the_driver_is_asked_with_the_fact_it_needs():
    n = node(H100)
    bare = dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, driver_version=None, cuda_driver_version=None))
    derived = nccl_effective.cumem(_ctx("2.26.2", bare))
    assert derived.on is None and derived.fact == "node.gpu.driver_version"


# --- ranking by fit -----------------------------------------------------------------------------------------------


def test_a_fitting_fix_beats_a_closer_version():
    # NCCL 2.17.1 on DGX H800: 2.18.1's fixes are nearer, but 2.18.3's "Fix performance for DGX H800" is the one
    # whose condition (the GPU model) the node decides
    h800 = _gpus(node(H100), ["NVIDIA H800"] * 8)
    fixes = nccl_releases._candidates(_ctx("2.17.1", h800))
    assert fixes[0].row["entry"] == "2.18.3#8"
    assert any(nccl_releases._version_key(f.row["release"]) < (2, 18, 3) for f in fixes[1:])
    result = run(with_nccl(committed_facts("bookworm"), "2.17.1"), h800)
    perf = [f for f in result.findings if f.id == LATER and "DGX H800" in f.title]
    assert perf and perf[0].severity == "info"
    # on H100 the same fix is decided false and not listed at all
    h100 = nccl_releases._candidates(_ctx("2.17.1", node(H100)))
    assert "2.18.3#8" not in {f.row["entry"] for f in h100}
    # a release with the fix has nothing of it to say
    assert "DGX H800" not in _text(run(with_nccl(committed_facts("bookworm"), "2.18.3"), h800), LATER)


def test_among_workload_fixes_the_worse_symptom_heads_not_the_nearer_release():
    fixes = [f for f in nccl_releases._candidates(_ctx("2.25.1", node(H100))) if not f.decided]
    keys = [f.fit() for f in fixes]
    assert keys == sorted(keys)
    # equal fit: a crash or corruption comes before a hang of the same release or a nearer one
    for a, b in zip(fixes, fixes[1:], strict=False):
        if a.fit()[:4] == b.fit()[:4]:
            worse, other = nccl_releases._symptom(a.row, a.trace), nccl_releases._symptom(b.row, b.trace)
            assert nccl_releases._severity(worse) <= nccl_releases._severity(other)


# --- rows added for issue 32 ----------------------------------------------------------------------------------------


def test_bootstrap_accept_retry_is_named_for_releases_with_the_magic_check_only():
    # 2.27.3: accept() retries when reading the 8-byte magic fails; the magic check is first in 2.16.2
    def entries(version):
        return {f.row["entry"] for f in nccl_releases._candidates(_ctx(version, node(H100)))}

    assert "2.27.3#54" in entries("2.25.1")
    assert "2.27.3#54" not in entries("2.14.3") | entries("2.27.3")
    # its trigger is the network's: asked by name in the finding that lists the workload's fixes
    result = run(with_nccl(committed_facts("bookworm"), "2.25.1"), node(H100))
    asked = [c for f in result.findings if f.id == LATER for c in f.unshown]
    assert any("foreign TCP connection" in c for c in asked)


def test_nvls_multicast_bind_failure_is_fatal_from_2_29_on_nvlink_boards():
    h200 = node("doca-24.10-open-580-peermem")  # 8 H200 SXM
    result = run(with_nccl(committed_facts("bookworm"), "2.29.7"), h200)
    hits = [f for f in result.findings if f.id == KNOWN and "NVLS multicast bind" in f.title]
    assert hits and hits[0].severity == "warning"
    assert any("NCCL_NVLS_ENABLE=0" in fix for fix in hits[0].fixes)
    # 2.28.9 still falls back without NVLS; NCCL_NVLS_ENABLE=0 avoids it
    assert "NVLS multicast bind" not in _text(run(with_nccl(committed_facts("bookworm"), "2.28.9"), h200), KNOWN)
    off = run(with_nccl(committed_facts("bookworm"), "2.29.7", env={"NCCL_NVLS_ENABLE": "0"}), h200)
    assert "NVLS multicast bind" not in _text(off, KNOWN)


def test_nvls_multicast_issue_without_gpu_facts_is_asked():
    n = node("doca-24.10-open-580-peermem")
    bare = dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, gpus=()))
    # 2.29.3: from 2.29.7 the vendor-stated PXN hang (a finding on this IB node) would take the rule's one outcome kind
    result = run(with_nccl(committed_facts("bookworm"), "2.29.3"), bare)
    asked = [u for u in result.unknowns if u.rule == KNOWN and "NVLS multicast bind" in u.reason]
    assert asked and "gpu-nvlink:board" in asked[0].reason


def test_weak_cas_proxy_hang_is_named_on_arm64_and_dropped_on_amd64():
    # 2.29.3: "Fixes CAS usage in case of weak failure which was causing a hang on ARM"; the weak compare-exchange
    # loop is first in 2.28.9 (src/proxy.cc), and only load-linked/store-conditional CPUs fail it spuriously
    image = with_nccl(committed_facts("bookworm"), "2.29.2")
    arm = dataclasses.replace(image, platform="linux/arm64")
    named = [f for f in run(arm, node(H100)).findings if f.id == LATER and "weak failure" in f.title]
    assert named and named[0].severity == "info" and any("proxy thread" in c for c in named[0].unshown)
    assert "2.29.3#1" not in {f.row["entry"] for f in nccl_releases._candidates(Ctx(image, node(H100), matrix()))}
    older = dataclasses.replace(with_nccl(committed_facts("bookworm"), "2.28.7"), platform="linux/arm64")
    assert "2.29.3#1" not in {f.row["entry"] for f in nccl_releases._candidates(Ctx(older, node(H100), matrix()))}


def test_fp8_symmetric_kernel_init_failure_is_named_on_hopper_for_2_27_3_to_2_27_6():
    # 2.27.7's only source change: ncclInitKernelsForDevice ignores every cudaFuncGetAttributes failure; the check
    # that failed init is first in 2.27.3 (the symmetric kernels)
    def entries(version, n):
        return {f.row["entry"] for f in nccl_releases._candidates(_ctx(version, n))}

    assert "2.27.7#1" in entries("2.27.3", node(H100))
    assert "2.27.7#1" not in entries("2.27.3", node(A100_470)) | entries("2.26.2", node(H100))
    assert "2.27.7#1" not in entries("2.27.7", node(H100))


def _l40s(p2p):
    # 8 L40S (PCIe, no NVLink) on a 570 driver (CUDA 12.8), as SkyRL#108's nodes; p2p: the probe's peer-access reading
    # (no RDMA NICs: the NIC-fusion issue of the same releases would otherwise be this rule's finding, and the engine
    # keeps one outcome kind per rule)
    n = _gpus(node("inbox-6.8-open-570"), ["NVIDIA L40S"] * 8)
    return dataclasses.replace(
        n, gpu=dataclasses.replace(n.gpu, p2p=p2p), rdma=dataclasses.replace(n.rdma, devices=(), stack=STACK_NONE)
    )


def test_cumem_host_shm_issue_is_decided_when_the_derived_cumem_and_the_probes_p2p_show_it():
    # cumem_host_shm_without_p2p needs cuMem on (2.26.2's default -2 with a CUDA 12.8 driver: decided, not asked)
    # and GPUs without peer access (the probe's reading)
    image = with_nccl(committed_facts("bookworm"), "2.26.2")
    hits = [
        f for f in run(image, _l40s(False)).findings if f.id == KNOWN and "cuMemImportFromShareableHandle" in f.title
    ]
    assert hits and hits[0].severity == "warning" and not hits[0].unshown
    # peer access not probed: asked by its fact, never a warning
    asked = run(image, _l40s(None))
    assert not [f for f in asked.findings if f.id == KNOWN and "cuMemImportFromShareableHandle" in f.title]
    assert any(
        "node.gpu.p2p" in u.facts and "cumem_host_shm_without_p2p" in u.reason
        for u in asked.unknowns
        if u.rule == KNOWN
    )
    # cuMem off by the setting: the condition is decided false and the issue is not listed
    off = run(with_nccl(committed_facts("bookworm"), "2.26.2", env={"NCCL_CUMEM_ENABLE": "0"}), _l40s(False))
    assert "cuMemImportFromShareableHandle" not in _text(off, KNOWN)
