"""Triage causes promoted by the NCCL release a log names, from fixes traced to their first release
(catalogs/nccl_fix_ranges.json, catalogs/nccl_known_issues.json): the lines are NCCL's own formats."""

from __future__ import annotations

from imgcheck.triage.api import triage


def _top(lines: str, tmp_path):
    log = tmp_path / "rank0.log"
    log.write_text(lines)
    return triage([str(log)])


def causes_of(result, sig):
    for d in result.diagnoses:
        if d.signature == sig:
            return [(c.id, c.status) for c in sorted(d.causes, key=lambda c: c.order)]
    raise AssertionError(f"{sig} not found in {[d.signature for d in result.diagnoses]}")


def test_progress_thread_spin_is_promoted_for_an_affected_release(tmp_path):
    # 2.21.5 has the spin (2.19.1..2.26.1); the line is NVIDIA/nccl src/proxy.cc's INFO format
    affected = _top(
        "node1:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
        "node1:1:9 [0] NCCL INFO transport/net.cc:1271 -> 6 [Progress Thread]\n",
        tmp_path,
    )
    assert causes_of(affected, "NCCL-PROXY-PROGRESS-ERROR")[0][0] == "nccl-progress-spin"
    fixed = _top(
        "node1:1:1 [0] NCCL INFO NCCL version 2.26.2+cuda12.8\n"
        "node1:1:9 [0] NCCL INFO transport/net.cc:1271 -> 6 [Progress Thread]\n",
        tmp_path,
    )
    assert causes_of(fixed, "NCCL-PROXY-PROGRESS-ERROR")[0][0] == "network-transfer-error"


def test_shm_map_failure_names_the_close_crash_only_for_its_releases(tmp_path):
    line = "node1:1:2 [0] misc/shmutils.cc:84 NCCL WARN Could not map /dev/shm/nccl-AbCdEf size 9637888, error: Bus error\n"
    old = _top("node1:1:1 [0] NCCL INFO NCCL version 2.17.1+cuda12.0\n" + line, tmp_path)
    states = dict(causes_of(old, "NCCL-SHM-SEGMENT"))
    assert states["nccl-shm-close-crash"] == "supported"
    new = _top("node1:1:1 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n" + line, tmp_path)
    assert causes_of(new, "NCCL-SHM-SEGMENT")[-1] == ("nccl-shm-close-crash", "unlikely")  # false: moved last


def test_cuda_failure_in_alloc_names_cumem_host_numa_for_its_releases(tmp_path):
    # NVIDIA/nccl@v2.26.3-1's notes: cuMem host allocations (2.24.3 on, driver >= 12.6) fail under Docker's seccomp
    line = "node1:1:2 [0] include/alloc.h:57 NCCL WARN Cuda failure 2 'out of memory'\n"
    hit = causes_of(_top("node1:1:1 [0] NCCL INFO NCCL version 2.26.2+cuda12.8\n" + line, tmp_path), "NCCL-CUDA-OOM")
    # in range; whether the job set NCCL_CUMEM_HOST_ENABLE=0 is unknown without the image: kept second, not moved last
    assert hit[1] == ("cumem-host-numa-container", "unknown")
    off = _top(
        "node1:1:1 [0] NCCL INFO NCCL version 2.26.2+cuda12.8\n"
        "node1:1:1 [0] NCCL INFO NCCL_CUMEM_HOST_ENABLE set by environment to 0.\n" + line,
        tmp_path,
    )
    assert dict(causes_of(off, "NCCL-CUDA-OOM"))["cumem-host-numa-container"] == "unlikely"
    fixed = _top("node1:1:1 [0] NCCL INFO NCCL version 2.26.3+cuda12.8\n" + line, tmp_path)
    assert dict(causes_of(fixed, "NCCL-CUDA-OOM"))["cumem-host-numa-container"] == "unlikely"


# NVIDIA/nccl#1838 (https://github.com/NVIDIA/nccl/issues/1838), verbatim: 4x L4, NCCL 2.27.3+cu128; passes with
# NCCL_CUMEM_HOST_ENABLE=0. The version line is NCCL's own INFO format for the release the report names.
NCCL_1838 = (
    "9b405963aa12:774:774 [0] NCCL INFO NCCL version 2.27.3+cuda12.8\n"
    "[2025-09-09 23:51:24] 9b405963aa12:774:854 [0] transport/shm.cc:590 NCCL WARN Cuda failure 217 "
    "'peer access is not supported between these two devices'\n"
)
# hiyouga/EasyR1#579 (https://github.com/hiyouga/EasyR1/issues/579), verbatim: NCCL 2.27.3 through ProcessGroupNCCL
EASYR1_579 = (
    "(Runner pid=16018) torch.distributed.DistBackendError: NCCL error in: "
    "/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3699, unhandled cuda error (run with NCCL_DEBUG=INFO "
    "for details), NCCL version 2.27.3\n"
    "(Runner pid=16018) ncclUnhandledCudaError: Call to CUDA function failed.\n"
    "(Runner pid=16018) Last error:\n"
    "(Runner pid=16018) Cuda failure 217 'peer access is not supported between these two devices'\n"
)


def test_peer_access_failure_in_shm_names_cumem_host_buffers_first(tmp_path):
    causes = causes_of(_top(NCCL_1838, tmp_path), "CUDA-PEER-ACCESS-UNSUPPORTED")
    assert causes[0][0] == "nccl-cumem-host-no-p2p" and causes[1][0] == "no-p2p-path"
    causes = causes_of(_top(EASYR1_579, tmp_path), "CUDA-PEER-ACCESS-UNSUPPORTED")
    assert causes[0][0] == "nccl-cumem-host-no-p2p"


def test_peer_access_failure_keeps_the_p2p_cause_when_cumem_host_is_off_or_predates(tmp_path):
    off = NCCL_1838.replace(
        "[2025-09-09", "9b405963aa12:774:774 [0] NCCL INFO NCCL_CUMEM_HOST_ENABLE set by environment to 0.\n[2025-09-09"
    )
    assert causes_of(_top(off, tmp_path), "CUDA-PEER-ACCESS-UNSUPPORTED")[-1] == ("nccl-cumem-host-no-p2p", "unlikely")
    old = NCCL_1838.replace("2.27.3+cuda12.8", "2.23.4+cuda12.6")
    assert causes_of(_top(old, tmp_path), "CUDA-PEER-ACCESS-UNSUPPORTED")[-1] == ("nccl-cumem-host-no-p2p", "unlikely")
    # a P2P transport line (the legacy IPC path) is the no-P2P-path cause, not the cuMem host one
    # (the WARN line verbatim from ray-project/ray_lightning#24, whose NCCL was 2.7.8; the version line is set to an
    # affected release so that only the line's file decides)
    ipc = (
        "z-pc:909608:910337 [0] NCCL INFO NCCL version 2.27.3+cuda12.8\n"
        "z-pc:909608:910337 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is "
        "not supported between these two devices\n"
    )
    assert causes_of(_top(ipc, tmp_path), "CUDA-PEER-ACCESS-UNSUPPORTED")[0][0] == "no-p2p-path"


def test_nvls_out_of_memory_names_the_nvls_buffers_and_invalid_argument_keeps_the_fabric_manager(tmp_path):
    # NCCL's CUCHECK format at src/transport/nvls.cc with CUDA_ERROR_OUT_OF_MEMORY (2): the NVLS buffers
    oom = "node1:1:2 [0] transport/nvls.cc:158 NCCL WARN Cuda failure 2 'out of memory'\n"
    assert causes_of(_top(oom, tmp_path), "NCCL-NVLS-CUDA")[0] == ("nvls-buffers-out-of-memory", "supported")
    # NVIDIA/nccl#1488 (https://github.com/NVIDIA/nccl/issues/1488), verbatim: the fabric manager restarted
    inval = "node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'\n"
    causes = causes_of(_top(inval, tmp_path), "NCCL-NVLS-CUDA")
    assert causes[0][0] == "fabric-manager-state" and causes[-1] == ("nvls-buffers-out-of-memory", "unlikely")
