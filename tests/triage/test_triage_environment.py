"""Causes ranked by the environment the log shows, and enumerated by the errno / CUDA error the line prints
(issue 32 round 6). Every log is a real excerpt (tests/triage/logs/README.md gives its URL)."""

from __future__ import annotations

import os

from imgcheck.triage import triage
from imgcheck.triage.conditions import parse_condition
from imgcheck.triage.context import ContextAccumulator
from imgcheck.triage.evidence import log_socket_iface_virtual
from imgcheck.triage.logparse import parse_line
from imgcheck.triage.predicates import Facts

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "logs")


def log(name: str) -> str:
    return os.path.join(HERE, name)


def causes(name: str) -> dict[str, tuple[int, str]]:
    d = triage([log(name)]).diagnoses[0]
    return {c.id: (c.order, c.status) for c in d.causes}


def context(name: str) -> ContextAccumulator:
    acc = ContextAccumulator()
    with open(log(name), encoding="utf-8") as fh:
        for i, raw in enumerate(fh, 1):
            acc.feed(parse_line(raw, name, i))
    return acc


class _Line:
    def __init__(self, line: str) -> None:
        self.line = line


def test_sigbus_in_nccl_code_is_dev_shm_whatever_frames_show():
    # jax-toolbox#183: gdb's SIGBUS in ncclShmOpen; pipedream#76: UCX's "Caught signal 7" with libnccl frames, in a
    # container whose host name is Docker's default (the container ID)
    for name in (
        "d7e-jax-toolbox-183-ncclshmopen-sigbus-small-shm.log",
        "d7e-pipedream-76-docker-bus-error-nccl-shm.log",
    ):
        got = causes(name)
        assert got["dev-shm-sigbus"] == (1, "supported"), name
    r = triage([log("d7e-pipedream-76-docker-bus-error-nccl-shm.log")])
    assert r.context.in_container is True and "8d6bf97c3bf4" in r.context.in_container_why


def test_shm_errno_decides_between_permission_and_size():
    got = causes("d7e-pytorch-37004-dev-shm-permission-denied.log")  # shm_open: Permission denied
    assert got["dev-shm-permission"] == (1, "supported")
    assert got["dev-shm-too-small"][1] == "unlikely"
    got = causes("nccl-525-shm-fallocate.log")  # posix_fallocate: No space left on device
    assert got["dev-shm-permission"][1] == "unlikely"
    assert got["dev-shm-too-small"][1] != "unlikely"


def test_errno_condition_is_unknown_on_a_line_without_errno():
    cond = parse_condition("errno:EACCES|EPERM", "test", set())
    old_form = "include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-b79 (size 4460544)"
    assert cond.evaluate(_Line(old_form))[0] is None  # type: ignore[arg-type]
    assert cond.evaluate(_Line("NCCL WARN Call to shm_open failed : Permission denied"))[0] is True  # type: ignore[arg-type]
    assert cond.evaluate(_Line("Call to posix_fallocate failed : No space left on device"))[0] is False  # type: ignore[arg-type]
    lenient = parse_condition("?!log.single_node", "test", {"log.single_node"})
    assert lenient.unless_false


def test_loopback_connection_closed_on_one_host_is_not_a_dead_peer():
    # nccl-tests#217: one rank, NCCL_SOCKET_IFNAME=lo, "Connection closed by remote peer localhost<56086>"
    got = causes("d7e-nccl-tests-217-endpoint-security-closes-loopback-sockets.log")
    assert got["local-connection-interfered"] == (1, "supported")
    for ruled_out in ("socket-iface-virtual", "first-rank-died", "host-oom"):
        assert got[ruled_out][1] == "unlikely", ruled_out


def test_a_bridge_subnet_alone_is_not_a_container():
    # a Tencent VM's eth0 is 172.17.0.14: Docker's bridge subnet, but no container is shown
    acc = context("d7d-nccl-1231-net-plugin-dlerror-harmless-negative.log")
    ctx = acc.summary()
    assert "eth0:172.17.0.14" in ctx.socket_addrs
    assert log_socket_iface_virtual(Facts(image=None, node=None, log=ctx))[0] is False


def test_nic_without_busid_from_detection_is_the_nccl_defect():
    got = causes("d7e-nccl-1125-usb-network-device-topology.log")
    assert got["nccl-non-pci-nic-busid"] == (1, "supported")
    assert got["topo-file-malformed"][1] == "unlikely"


def test_error_35_without_a_loaded_driver_library_leads_with_injection():
    got = causes("d7e-nvidia-docker-24-device-nodes-without-driver-libraries.log")
    assert got["driver-libs-not-injected"][0] == 1
    assert got["node-driver-too-old"][1] != "supported"


def test_cuda_failure_names_the_quoted_error_not_a_gpu_fault_without_xid():
    got = causes("d7e-pytorch-130414-torch-2.3-nccl-2.12-invalid-resource-handle.log")
    assert got["invalid-resource-handle"] == (1, "supported")
    assert got["gpu-fault"][1] != "supported" and got["gpu-fault"][0] > 1


def test_undefined_symbol_quoted_form():
    r = triage([log("d7e-nccl-1784-undefined-ncclcommwindowregister-old-system-libnccl.log")])
    assert r.first_failure is not None and r.first_failure.signature == "LD-UNDEFINED-NCCL-SYMBOL"


def test_a_library_path_outside_a_stack_trace_is_not_a_frame():
    # nccl#1784's `ls -lh .../libnccl.so.2 -> libnccl.so.2.23.4` names libnccl but is no crash frame
    ctx = context("d7e-nccl-1784-undefined-ncclcommwindowregister-old-system-libnccl.log").summary()
    assert ctx.nccl_frame_line is None
    ctx = context("d7e-jax-toolbox-183-ncclshmopen-sigbus-small-shm.log").summary()
    assert ctx.sigbus_line and ctx.shm_frame_line and "ncclShmOpen" in ctx.shm_frame_line


# The prefixes launchers and collectors put before a line (kubectl logs --timestamps, mpirun --tag-output with a
# colour code, srun -l, torchrun's [rankN]:, Slurm's error prefix): the same line must give the same answer.
PREFIXES = (
    "2024-05-01T10:00:00.123456789Z ",
    "[1,3]<stderr>:\x1b[31m",
    "3: ",
    "[rank3]:",
    "srun: error: ",
)


def test_a_line_keeps_its_signature_and_cause_under_launcher_prefixes(tmp_path):
    for name, sig, cause in (
        ("d7e-pytorch-37004-dev-shm-permission-denied.log", "NCCL-SHM-SEGMENT", "dev-shm-permission"),
        ("d7e-nccl-1784-undefined-ncclcommwindowregister-old-system-libnccl.log", "LD-UNDEFINED-NCCL-SYMBOL", None),
    ):
        with open(log(name), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
        for i, prefix in enumerate(PREFIXES):
            path = tmp_path / f"{i}-{name}"
            path.write_text("".join(prefix + ln + "\n" for ln in lines), encoding="utf-8")
            r = triage([str(path)])
            assert r.first_failure is not None and r.first_failure.signature == sig, (name, prefix)
            if cause:
                assert r.diagnoses[0].causes[0].id == cause, (name, prefix)
