"""glibc's heap-consistency aborts (GLIBC-HEAP-CORRUPTION, every text in tests/triage/test_triage_process_catalog.py)
on public lines: generic, so an earlier concrete failure stays first; its NCCL cause (NVLS with several NIC ports per
GPU, 2.18.1..2.22.3) is promoted only on the log's own facts."""

from __future__ import annotations

from imgcheck.triage.api import triage

SIG = "GLIBC-HEAP-CORRUPTION"


def _triage(tmp_path, lines: str):
    log = tmp_path / "rank0.log"
    log.write_text(lines)
    return triage([str(log)])


def _causes(report) -> list[tuple[str, str]]:
    (d,) = [d for d in report.diagnoses if d.signature == SIG]
    return [(c.id, c.status) for c in sorted(d.causes, key=lambda c: c.order)]


def test_public_glibc_abort_lines_are_named(tmp_path):
    # ysh329/OpenCL-101#3 (https://github.com/ysh329/OpenCL-101/issues/3), verbatim: the pre-2.26 format
    old = _triage(tmp_path, "*** Error in `./bandwidth': double free or corruption (!prev): 0x000000001c5dd650 ***\n")
    assert old.first_failure is not None and old.first_failure.signature == SIG
    assert _causes(old)[0][0] == "native-library-defect"
    # NVIDIA/nccl#726 (https://github.com/NVIDIA/nccl/issues/726), verbatim: nccl-tests' failure, then glibc's abort
    summit = _triage(
        tmp_path,
        "c11n14: Test NCCL failure common.cu:951 'internal error / '\n"
        " .. c11n14 pid 2435872: Test failure common.cu:842\n"
        "corrupted double-linked list\n",
    )
    assert SIG in [d.signature for d in summit.diagnoses]
    # the abort names the check, not the culprit: the test's own earlier failure stays first
    assert summit.first_failure is not None and summit.first_failure.signature != SIG


# NCCL's own INFO formats (src/transport/nvls.cc 'NVLS multicast support is %savailable on dev %d'; net_ib.cc's
# 'NET/IB : Using' list with device:port) around the abort NVIDIA/nccl#1043 reports for 2.18.5 and 2.19.3
def _nvls_log(version: str, ports: str) -> str:
    return (
        f"node1:12:12 [0] NCCL INFO NCCL version {version}+cuda12.2\n"
        f"node1:12:30 [0] NCCL INFO NET/IB : Using {ports} [RO]; OOB eth0:10.2.131.182<0>\n"
        "node1:12:30 [0] NCCL INFO NVLS multicast support is available on dev 0\n"
        "free(): invalid next size (fast)\n"
    )


def test_nvls_multi_nic_cause_is_promoted_on_its_release_with_nvls_and_a_dual_port_nic(tmp_path):
    dual = "[0]mlx5_0:1/IB [1]mlx5_0:2/IB"
    assert _causes(_triage(tmp_path, _nvls_log("2.19.3", dual)))[0] == ("nccl-nvls-multi-nic", "supported")
    fixed = _causes(_triage(tmp_path, _nvls_log("2.22.3", dual)))
    assert fixed[0][0] == "native-library-defect" and fixed[-1] == ("nccl-nvls-multi-nic", "unlikely")
    # one port per device: the names cannot tell two functions of one card apart, so it is not promoted
    single = _causes(_triage(tmp_path, _nvls_log("2.19.3", "[0]mlx5_0:1/IB [1]mlx5_1:1/IB")))
    assert single[0][0] == "native-library-defect" and ("nccl-nvls-multi-nic", "unknown") in single
