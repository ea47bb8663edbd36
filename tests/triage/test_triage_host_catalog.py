"""The catalog-built signatures (triage/host_catalog.py): host/container-runtime messages, CUDA error codes at the
image/host boundary, and a cause class for every NCCL WARN format (data/triage/nccl_causes.json)."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest

from imgcheck.knowledge import shipped
from imgcheck.triage import host_catalog, triage
from imgcheck.triage.signatures import load_signatures

HERE = Path(__file__).parent


def _data(name: str) -> dict:
    return json.loads(resources.files("imgcheck.data.triage").joinpath(name).read_text("utf-8"))


def _first(tmp_path: Path, lines: list[str]):
    log = tmp_path / "job.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return triage([str(log)])


def test_catalog_loads_with_unique_ids_that_do_not_shadow_hand_written_signatures():
    ids = [c.signature.id for c in host_catalog.catalog()]
    assert len(ids) == len(set(ids))
    hand = {s.id for s in load_signatures().signatures}
    assert not hand & set(ids)
    extended = host_catalog.extend(load_signatures())
    assert len(extended.by_id()) == len(hand) + len(ids)
    for c in host_catalog.catalog():
        assert c.signature.patterns and c.signature.causes and c.signature.source
        assert all(o in hand for o in c.overrides), c.signature.id  # overrides name real catch-alls


@pytest.mark.parametrize("entry", host_catalog.catalog(), ids=lambda c: c.signature.id)
def test_each_sample_is_matched_by_its_own_signature(entry):
    for sample in entry.samples:
        assert any(p.search(sample) for p in entry.signature.patterns), sample


def test_every_boundary_cuda_code_has_a_signature_with_the_runtime_names_and_texts():
    have = {c.signature.id for c in host_catalog.catalog()}
    boundary = [r for r in shipped().rows("cuda_driver_errors") if r.get("container_meaning")]
    assert len(boundary) >= 9
    for row in boundary:
        assert f"CUDA-ERR-{row['code']}" in have
    runtime = {r["code"]: r for r in _data("cuda_runtime_errors.json")["rows"]}
    assert len(runtime) > 100  # every cudaError_t code of CUDA 11.8 / 12.9 / 13.0
    assert runtime[804]["name"] == "cudaErrorCompatNotSupportedOnDevice"
    assert "forward compatibility was attempted on non supported HW" in runtime[804]["texts"]
    sig = next(c.signature for c in host_catalog.catalog() if c.signature.id == "CUDA-ERR-804")
    for line in (
        "[[Forward compatibility was attempted on non supported HW (CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) cuInit()=804]]",
        "torch: cudaErrorCompatNotSupportedOnDevice",
    ):
        assert any(p.search(line) for p in sig.patterns), line
    assert "host driver is too old" in sig.causes[0].next  # the forward-compat docs' fix, not a generic one
    assert not any(p.search("errno 8040 in unrelated text") for p in sig.patterns)


def test_every_nccl_warn_format_in_a_class_is_matched_by_that_class():
    classes = _data("nccl_cause_classes.json")["classes"]
    rows = _data("nccl_causes.json")["rows"]
    messages = {m["format"]: m for m in _data("nccl_messages.json")["messages"] if m["level"] == "WARN"}
    assert len(rows) > 700 and len({r["format"] for r in rows}) == len(rows)
    sigs = {c.signature.id: c.signature for c in host_catalog.catalog()}
    spec = re.compile(r"%[-+ #0-9.*]*[hlLzjt]*([diouxXeEfgGcsp%])")
    fill = {"s": "mlx5_0", "c": "x", "p": "0x7f00", "f": "1.5", "e": "1.5", "g": "1.5", "%": "%"}
    checked = 0
    for r in rows:
        assert r["class"] in classes and r["format"] in messages
        if len("".join(spec.split(r["format"])[::2]).strip()) < host_catalog._MIN_FIXED:
            continue
        line = "host:1:2 [0] src/x.cc:1 NCCL WARN " + spec.sub(
            lambda m: fill.get(m.group(1), "3"), r["format"].split("\n")[0]
        )
        sig = sigs[host_catalog.PREFIX_NCCL + r["class"].upper()]
        assert any(p.search(line) for p in sig.patterns), (r["class"], r["format"])
        checked += 1
    assert checked > 650


@pytest.mark.parametrize(
    "case",
    _data_cases := json.loads((HERE / "host_lines.json").read_text())["cases"],
    ids=lambda c: c["url"].rsplit("/", 3)[-3],
)
def test_public_log_lines_are_named_with_their_cause(tmp_path, case):
    report = _first(tmp_path, case["lines"])
    assert report.first_failure is not None and report.first_failure.signature == case["first"], case["url"]
    assert report.diagnoses[0].causes[0].id == case["cause"]


def test_a_hand_written_signature_keeps_its_line_and_a_generic_catch_all_yields(tmp_path):
    ib = _first(tmp_path, ["h:1:2 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : No device found."])
    assert [d.signature for d in ib.diagnoses] == ["NET-IB-NO-DEVICE"]
    topo = _first(tmp_path, ["h:1:2 [0] graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found."])
    # the graph-file signature written from NCCL's loader keeps its line; the catch-all NCCL-TOPO-ERROR yields
    assert [d.signature for d in topo.diagnoses] == ["NCCL-GRAPH-FILE"]


def test_an_nccl_class_defers_to_a_hand_written_failure_of_the_same_writer(tmp_path):
    lines = [
        "h:238:1313 [0] transport/net_ib.cc:139 NCCL WARN communicator encountered a fatal error (detected in ncclIbTest)",
        "h:238:1219 [0] transport/net_ib.cc:180 NCCL WARN NET/IB : mlx5_ib0:1 async fatal event on QP (0x7f69f01519a8): "
        "local access violation work queue error",
    ]
    report = _first(tmp_path, lines)
    assert report.first_failure.signature == "NET-IB-ASYNC-EVENT"
    assert not any(d.signature.startswith(host_catalog.PREFIX_NCCL) for d in report.diagnoses)


def test_every_libibverbs_message_of_every_rdma_core_release_is_named():
    """libibverbs_messages.json (tools/host/gen_libibverbs_messages.py over every rdma-core tag): each message,
    rendered, is matched by the signature the data names; only harmless ones are left out, each with a reason."""
    doc = _data("libibverbs_messages.json")
    sigs = host_catalog.extend(load_signatures()).by_id()
    spec = re.compile(r"%[-+ #0-9.*]*(?:hh|h|ll|l|L|z|j|t)?([diouxXcsp%])")
    for row in doc["messages"]:
        line = spec.sub(lambda m: "7" if m.group(1) in "diouxX" else "mlx5_0", row["format"])
        assert any(p.search(line) for p in sigs[row["signature"]].patterns), row["format"]
    assert len(doc["messages"]) >= 18
    assert all(r["why"].startswith("harmless") for r in doc["left_out"])


def test_a_cause_class_note_names_the_site_and_the_setting_read_there(tmp_path):
    line = "h:1:2 [0] transport/net_ib.cc:139 NCCL WARN communicator encountered a fatal error (detected in ncclIbTest)"
    report = _first(tmp_path, [line])
    assert report.first_failure.signature == "NCCL-WARN-IB-ASYNC-EVENT"
    note = next(n for n in report.notes if n.startswith("NCCL-WARN-IB-ASYNC-EVENT:"))
    assert "src/transport/net_ib/common.cc" in note and "NCCL_IB_RETURN_ASYNC_EVENTS" in note


def test_a_warning_the_process_carries_on_after_is_advisory_alone(tmp_path):
    """A socket-only NCCL job run as non-root in a default container prints libibverbs' memlock warning and works:
    alone the warning is advice, not a located failure (exit 0)."""
    for line in (
        "libibverbs: Warning: RLIMIT_MEMLOCK is 65536 bytes.",
        "NOTE: The SHMEM allocation limit is set to the default of 64MB.  This may be",
        "h:1:2 [0] misc/gdrwrap.cc:1 NCCL WARN GDRCOPY disabled: libgdrapi.so version 0 is not supported",
    ):
        report = _first(tmp_path, [line])
        assert report.verdict in ("advisory_only", "no_known_signature"), line
        assert report.first_failure is None


def test_nccl_cuda_failure_operation_not_supported_names_vgpu_without_unified_memory(tmp_path):
    line = "h:1:2 [0] misc/cudawrap.cc:1 NCCL WARN Cuda failure 'operation not supported'"
    report = _first(tmp_path, [line])
    assert report.first_failure.signature == "NCCL-CUDA-FAILURE"
    assert report.diagnoses[0].causes[0].id == "vgpu-or-vmm-unsupported"


def test_a_watchdog_timeout_after_the_warn_does_not_hide_it(tmp_path):
    lines = [
        "h:7:8 [0] graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found.",
        "[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds "
        "before timing out.",
    ]
    report = _first(tmp_path, lines)
    assert "NCCL-GRAPH-FILE" in [d.signature for d in report.diagnoses]


def test_nvml_blocked_by_the_os_names_the_gpu_pv_guest_only_when_the_log_shows_one(tmp_path):
    """NVML_ERROR_OPERATING_SYSTEM (nvml.h): the device cgroup in a container, the GPU-PV guest's driver files when
    the log shows a WSL2 / GPU-PV path (the dxgkrnl-dkms#7 layout: nvidia-smi run from /usr/lib/wsl/lib)."""
    line = "Failed to initialize NVML: GPU access blocked by the operating system"
    plain = _first(tmp_path, [line])
    assert plain.first_failure.signature == "HOST-NVML-OS-BLOCKED"
    assert plain.diagnoses[0].causes[0].id == "device-cgroup-blocks"
    guest = _first(tmp_path, ["$ /usr/lib/wsl/lib/nvidia-smi", line])
    assert guest.diagnoses[0].causes[0].id == "gpu-pv-guest-driver-files"


def test_wsl_dxcore_messages_name_the_windows_driver_or_the_driver_store(tmp_path):
    """libnvidia-container src/dxcore.c: an adapter below WDDM 2.8 is skipped (the Windows driver is too old); a
    DriverStore folder without the NVIDIA libraries is skipped (the guest lacks the files)."""
    old = _first(tmp_path, ["Found a WDDM adapter running a driver with pre-WDDM 2.8 . Skipping it."])
    assert old.first_failure.signature == "HOST-NVC-WSL-DXCORE"
    assert old.diagnoses[0].causes[0].id == "windows-driver-too-old"
    empty = _first(tmp_path, ["No Nvidia Libraries found in /usr/lib/wsl/drivers/nv_dispi.inf_amd64_0123456789abcdef"])
    assert empty.diagnoses[0].causes[0].id == "driver-store-files-missing"


def test_the_runtime_hook_failing_to_load_libnvidia_ml_blames_the_host_not_a_missing_runtime(tmp_path):
    """The hook printed it (libnvidia-container src/driver.c dlopens the host's libnvidia-ml.so.1), so the runtime
    is in use: the host has no driver. The same library missing in a container started without the runtime is the
    other cause."""
    hook = _first(
        tmp_path,
        [
            "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: "
            "cannot open shared object file: no such file or directory: unknown."
        ],
    )
    assert hook.diagnoses[0].causes[0].id in ("host-has-no-driver", "host-driver-not-installed")
    inside = _first(tmp_path, ["ImportError: libcuda.so.1: cannot open shared object file: No such file or directory"])
    assert inside.diagnoses[0].causes[0].id == "driver-not-in-container"


def test_triton_libcuda_assert_names_the_loader_cache_not_a_missing_driver_first(tmp_path):
    """Triton's libcuda_dirs (third_party/nvidia/backend/driver.py) asserts when `ldconfig -p` lists no libcuda.so.1:
    the usual cause is a driver mounted outside the ld.so.conf directories, then no driver at all."""
    report = _first(tmp_path, ["AssertionError: libcuda.so cannot found!"])
    assert report.first_failure.signature == "HOST-TRITON-LIBCUDA-NOT-FOUND"
    assert [c.id for c in report.diagnoses[0].causes][:2] == [
        "libcuda-dir-not-in-ldcache",
        "no-gpu-driver-in-container",
    ]
