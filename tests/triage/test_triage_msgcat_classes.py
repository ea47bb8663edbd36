"""Cause classes of the issue-32 catalogs (msgcat): Open MPI / PRRTE / PMIx help topics and CUDA support lines
(mpi_causes.json), Open MPI's UCX glue (ompi_ucx_messages.json), pyxis and enroot errors (pyxis_enroot_messages.json),
and the hand-entered families of msgcat_classes.json (nvidia-smi not found, mlx5 firmware command failures). Every
mapped row's rendered format is matched by the signature it names; real lines from public threads get their class
and mechanism; ordinary lines stay clean."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from imgcheck.triage import host_catalog, triage
from imgcheck.triage.signatures import load_signatures

SPEC = re.compile(r"%[-+ #0-9.*]*(?:hh|h|ll|l|L|z|j|t)?([diouxXcspm%])")
CATALOGS = (
    "mpi_causes.json",
    "ompi_ucx_messages.json",
    "pyxis_enroot_messages.json",
    "k8s_driver_manager_messages.json",
    "xid_messages.json",
    "gpud_reasons.json",
)


def _data(name: str) -> dict:
    return json.loads(resources.files("imgcheck.data.triage").joinpath(name).read_text("utf-8"))


@pytest.fixture(scope="module")
def sigs():
    return host_catalog.extend(load_signatures()).by_id()


def _render(fmt: str) -> str:
    def one(m: re.Match[str]) -> str:
        return "7" if m.group(1) in "diouxX" else "0x7f12" if m.group(1) == "p" else "mlx5_0"

    return SPEC.sub(one, fmt.split("\n")[0])


@pytest.mark.parametrize("name", CATALOGS)
def test_every_mapped_format_compiles_and_its_signature_matches_it(sigs, name):
    doc = _data(name)
    checked = 0
    for row in doc["messages"]:
        for pick in row.get("signatures", ()):
            sig = sigs[pick["signature"]]
            assert sig.causes, pick["signature"]
            re.compile(pick["regex"])
            line = _render(row["format"]) if "xid" not in row else f"NVRM: Xid (PCI:0000:18:00): {row['xid']}, pid=7"
            if row.get("component") == "enroot" and not line.startswith("mkdir"):
                line = "[ERROR] " + line
            if "%s" in row["format"] and row["format"].startswith("mkdir"):
                line = "mkdir: cannot create directory '/run/enroot': Permission denied"
            if pick["signature"] == "HOST-OMPI-UCX-DEVICE-MATCH":
                continue  # argument conditions (support level values): test_triage_msgcat.py renders them
            assert any(p.search(line) for p in sig.patterns), (name, row["format"], pick["signature"])
            checked += 1
    assert checked >= min(25, len(doc["messages"]))


def test_coverage_counts_are_those_of_the_walk():
    mpi = _data("mpi_causes.json")
    assert mpi["components"]["open-mpi"]["releases"][-1].startswith("5.0")
    assert mpi["coverage"]["formats"] >= 1500 and mpi["coverage"]["mapped"] >= 150
    assert sum(mpi["left_out"].values()) == mpi["coverage"]["left_out"]
    ucx = _data("ompi_ucx_messages.json")
    assert ucx["releases"][0] == "3.0.0" and ucx["formats"] >= 100 and ucx["mapped"] >= 30
    pe = _data("pyxis_enroot_messages.json")
    assert pe["coverage"]["formats"] >= 200 and pe["coverage"]["mapped"] >= 60
    # the runtime path the mkdir row stands for is read from enroot.in at each tag
    assert pe["enroot_runtime_paths"]["4.1.2"]["ENROOT_RUNTIME_PATH"] == "${XDG_RUNTIME_DIR}/enroot"


@pytest.mark.parametrize(
    ("text", "signature", "cause"),
    [
        # CliMA/slurm-buildkite#54: ranks bound to one GPU each, CUDA IPC between them
        (
            "clima.gps.caltech.edu:3667226] Failed to register remote memory, rc=-1",
            "MPI-CUDA-IPC",
            "ranks-see-different-gpus",
        ),
        # open-mpi/ompi#6171: UCX built without --enable-mt under MPI_THREAD_MULTIPLE
        (
            "[pge328:67669] ../../../../../openmpi-3.1.2/ompi/mca/pml/ucx/pml_ucx.c:226 Error: UCP worker does not "
            "support MPI_THREAD_MULTIPLE",
            "OMPI-UCX-NO-THREAD-MULTIPLE",
            "ucx-built-without-mt",
        ),
        # NVIDIA/pyxis#12: enroot's default runtime path /run/enroot not writable by the job user
        (
            "slurmstepd: pyxis: importing docker image ...\n"
            "slurmstepd: error: pyxis: child 12004 failed with error code: 1\n"
            "slurmstepd: error: pyxis: failed to import docker image\n"
            "slurmstepd: error: pyxis: printing contents of log file ...\n"
            "slurmstepd: error: pyxis:     mkdir: cannot create directory '/run/enroot': Permission denied\n",
            "ENROOT-RUNTIME-PATH",
            "runtime-path-default-not-writable",
        ),
        # NVIDIA/cuda-python#2724: a CI container without NVIDIA_VISIBLE_DEVICES
        (
            "+ nvidia-smi\n/__w/_temp/e57682ae-6d73-4df9-b0fd-fc623ab194cc.sh: line 1: nvidia-smi: command not found\n"
            "##[error]Process completed with exit code 127.",
            "NVIDIA-SMI-NOT-FOUND",
            "container-without-gpu-request",
        ),
        # openucx/ucx#6049 (the dmesg line alone): the device's UAR budget used up
        (
            "[2605244.823409] mlx5_core 0000:61:00.0: mlx5_cmd_check:795:(pid 53945): ALLOC_UAR(0x802) op_mod(0x0) "
            "failed, status limits exceeded(0x8), syndrome (0x5a7939)",
            "MLX5-FW-COMMAND-FAILED",
            "uar-limit",
        ),
    ],
)
def test_a_real_line_gets_its_class_and_mechanism(tmp_path, text, signature, cause):
    log = tmp_path / "job.log"
    log.write_text(text + "\n", encoding="utf-8")
    report = triage([str(log)])
    assert report.first_failure is not None and report.first_failure.signature == signature
    d = next(d for d in report.diagnoses if d.signature == signature)
    assert d.causes[0].id == cause


def test_ordinary_lines_stay_clean(tmp_path):
    log = tmp_path / "job.log"
    log.write_text(
        "slurmstepd: pyxis: importing docker image: nvcr.io#nvidia/pytorch:24.01-py3\n"
        "slurmstepd: pyxis: imported docker image: nvcr.io#nvidia/pytorch:24.01-py3\n"
        "mkdir: cannot create directory '/tmp/run1': File exists\n"
        "[INFO] Querying registry for permission grant\n"
        "nvidia-smi found at /usr/bin/nvidia-smi\n"
        "mlx5_core 0000:61:00.0: firmware version: 20.31.1014\n",
        encoding="utf-8",
    )
    report = triage([str(log)])
    assert not report.diagnoses, [d.signature for d in report.diagnoses]


def test_driver_manager_host_mofed_defect_is_read_from_the_code_and_quoted_by_the_cause():
    doc = _data("k8s_driver_manager_messages.json")
    assert doc["host_mofed_waits_on_flag"] == ["0.9.0"]
    assert doc["host_mofed_wait_check"]["0.9.1"] == "module" and doc["host_mofed_wait_check"]["0.8.1"] == "module"
    assert doc["gpu_operator_with_flag_wait"] == ["25.10.0"]
    entry = next(m for m in _data("msgcat_classes.json")["messages"] if m["id"] == "K8S-DRIVER-MANAGER-MOFED-WAIT")
    text = entry["causes"][0]["text"]
    assert "0.9.0" in text and "25.10.0" in text and "0.9.1" in text


def test_driver_manager_wait_line_names_the_release_defect_first(tmp_path):
    # NVIDIA/k8s-driver-manager#123 (the Go release's logrus line)
    log = tmp_path / "driver-manager.log"
    log.write_text("msg=Waiting for MOFED to be installed..\n", encoding="utf-8")
    report = triage([str(log)])
    assert report.first_failure is not None and report.first_failure.signature == "K8S-DRIVER-MANAGER-MOFED-WAIT"
    assert report.diagnoses[0].causes[0].id == "driver-manager-host-mofed-check-inverted"


def test_ucp_ep_create_stays_with_the_ucx_signature_and_a_modex_failure_is_the_peers(tmp_path):
    # openucx/ucx#4480: UCX-ERROR reads ucp_ep_create's "Destination is unreachable" (transport selection)
    log = tmp_path / "a.log"
    log.write_text(
        "[clx-orion-077:12459] pml_ucx.c:385  Error: ucp_ep_create(proc=96) failed: Destination is unreachable\n"
    )
    assert triage([str(log)]).first_failure.signature == "UCX-ERROR"
    log.write_text("[node1:1234] pml_ucx.c:117  Error: Failed to receive UCX worker address: Not found (-13)\n")
    assert triage([str(log)]).first_failure.signature == "OMPI-UCX-MODEX"


def test_every_xid_the_driver_defines_has_a_class_or_a_reason():
    doc = _data("xid_messages.json")
    assert doc["releases"][0].startswith("515.") and len(doc["releases"]) >= 15
    mapped = {r["xid"] for r in doc["messages"]}
    left = {n for v in doc["left_out"].values() for n in v}
    assert not mapped & left
    assert len(mapped | left) == doc["coverage"]["formats"] >= 130
    assert {13, 31, 48, 74, 79, 94, 119, 154} <= mapped  # the Xids GPU jobs report most


@pytest.mark.parametrize(
    ("text", "signature", "cause"),
    [
        # stas00/ml-engineering compute/accelerator/nvidia/debug.md: the row-remapper Xid (hand-written ECC signature)
        (
            "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to "
            "activate.",
            "GPU-XID-ECC",
            None,
        ),
        # pastebin.com/NGng33SB: an older driver's Xid line without "PCI:"
        (
            "Nov 22 18:29:55 hostname kernel: [ 966.503025] NVRM: Xid (0000:01:00): 31, Ch 0000000b, engmask "
            "00000120, intr 10000000",
            "GPU-XID-31",
            None,
        ),
        (
            "NVRM: Xid (PCI:0000:18:00): 119, pid=1, Timeout after 6s of waiting for RPC response from GPU0 GSP!",
            "XID-GSP",
            "gsp-firmware-fault",
        ),
        ("NVRM: Xid (PCI:0000:18:00): 45, pid=1, Ch 00000010", "XID-APP-FAULT", "process-killed-consequence"),
        ("Failed to initialize NVML: Insufficient Permissions", "NVIDIA-SMI-GPU-ACCESS", "device-node-permissions"),
        ("No devices were found", "NVIDIA-SMI-GPU-ACCESS", "no-gpu-visible"),
        # leptonai/gpud#1151: gpud's status JSON on an H100 HGX whose Fabric Manager service was not running
        (
            '        "reason": "NVIDIA-H100-80GB-HBM3 checked fabric state; fabric manager found but not active",',
            "GPUD-FABRIC-MANAGER-UNHEALTHY",
            "fm-service-not-running",
        ),
    ],
)
def test_xid_and_nvml_lines_get_their_class(tmp_path, text, signature, cause):
    log = tmp_path / "dmesg.txt"
    log.write_text(text + "\n", encoding="utf-8")
    report = triage([str(log)])
    assert report.first_failure is not None and report.first_failure.signature == signature
    if cause:
        assert report.diagnoses[0].causes[0].id == cause


# NVIDIA/pyxis#61 (the description): the image has no /bin/bash; the pyxis lines around it are consequences
PYXIS_61 = """pyxis: importing docker image ...
slurmstepd: error: pyxis: container start failed with error code: 1
slurmstepd: error: pyxis: printing contents of log file ...
slurmstepd: error: pyxis:     enroot-switchroot: failed to execute: /bin/bash: No such file or directory
slurmstepd: error: pyxis: couldn't start container
slurmstepd: error: pyxis: if the image has an unusual entrypoint, try using --no-container-entrypoint
slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1
"""
# NVIDIA/pyxis#4 (slurmd.log of the description): pyxis's own runtime directory
PYXIS_4 = """[2019-09-24T10:10:06.901] [321.0] error: pyxis: couldn't mkdir /run/pyxis/100005: No such file or directory
[2019-09-24T10:10:06.901] [321.0] error: spank: required plugin spank_pyxis.so: init_post_opt() failed with rc=-1
"""


@pytest.mark.parametrize(
    ("text", "signature", "cause"),
    [
        (PYXIS_61, "ENROOT-EXEC-FAILED", "command-not-in-image"),
        (PYXIS_4, "ENROOT-RUNTIME-PATH", "pyxis-runtime-path"),
    ],
)
def test_a_pyxis_log_names_the_enroot_line_before_pyxis_wrappers(tmp_path, text, signature, cause):
    log = tmp_path / "slurm.log"
    log.write_text(text, encoding="utf-8")
    report = triage([str(log)])
    assert report.first_failure is not None and report.first_failure.signature == signature
    d = next(d for d in report.diagnoses if d.signature == signature)
    assert d.causes[0].id == cause
