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
