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
