"""The generated message catalogs behind process_messages.json (glibc malloc, Gloo, EFA completion statuses) and the
CUDA error forms (cuda_error_forms.json): every generated message, rendered the way its code prints it, is named by
the signature its row gives, and nothing else takes the lines those signatures must not claim."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from imgcheck.triage import cuda_forms, host_catalog
from imgcheck.triage.signatures import Signature, load_signatures


def _data(name: str) -> dict:
    return json.loads(resources.files("imgcheck.data.triage").joinpath(name).read_text("utf-8"))


@pytest.fixture(scope="module")
def sigs() -> dict[str, Signature]:
    return host_catalog.extend(load_signatures()).by_id()


def _matches(sig: Signature, line: str) -> bool:
    return any(p.search(line) for p in sig.patterns)


def test_every_glibc_malloc_abort_message_in_both_print_forms(sigs):
    doc = _data("glibc_malloc_messages.json")
    assert doc["releases"] >= 26 and len(doc["messages"]) >= 50  # glibc 2.17 .. 2.42
    by_msg = {m["message"]: m for m in doc["messages"]}
    assert by_msg["free(): invalid pointer"]["first"] == "2.17"
    assert by_msg["malloc(): corrupted top size"]["first"] == "2.29"
    sig = sigs["GLIBC-HEAP-CORRUPTION"]
    for m in doc["messages"]:
        assert _matches(sig, m["message"]), m  # glibc >= 2.26: the message alone
        assert _matches(sig, f"*** Error in `python': {m['message']}: 0x00007f5c58000b20 ***"), m  # older
    assert not _matches(sig, "Segmentation fault (core dumped)")


def _render_gloo(row: dict) -> str:
    body = row["template"].replace("%s", "[10.1.2.3]:4567")
    if row["enforce"]:
        return f"[enforce fail at /opt/gloo/gloo/transport/tcp/device.cc:84] ifa != nullptr. {body}"
    return f"RuntimeError: [/opt/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:598] {body}"


def test_every_classified_gloo_message_is_named_by_its_class(sigs):
    doc = _data("gloo_messages.json")
    assert len(doc["messages"]) >= 40 and doc["left_out"]["templates"]
    classes = {r["signature"] for r in doc["messages"]}
    assert classes == {
        "GLOO-TCP-CONNECT",
        "GLOO-TCP-PEER-LOST",
        "GLOO-STORE-TIMEOUT",
        "GLOO-TCP-ADDRESS",
        "GLOO-TCP-SOCKET",
        "GLOO-COLLECTIVE-MISMATCH",
    }
    for row in doc["messages"]:
        assert _matches(sigs[row["signature"]], _render_gloo(row)), row["template"]
    # both eras of the connect failure: 'connect ADDR: ERR' (to 2023), 'SO_ERROR: ERR, remote=ADDR' after
    templates = {r["template"]: r for r in doc["messages"]}
    assert templates["connect %s: %s"]["signature"] == "GLOO-TCP-CONNECT"
    assert templates["SO_ERROR: %s, remote=%s"]["signature"] == "GLOO-TCP-CONNECT"
    # a short message is Gloo's only behind Gloo's own prefix
    assert not _matches(sigs["GLOO-TCP-CONNECT"], "curl: (7) connect: Connection refused")


def test_gloo_connect_to_a_loopback_address_leads_with_the_hostname_resolution(tmp_path):
    from imgcheck.triage import triage

    for line, first in (
        (
            "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] SO_ERROR: Connection refused, remote=[127.0.1.1]:3211",
            "gloo-peer-advertised-loopback",
        ),
        (
            "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] SO_ERROR: Connection refused, remote=[10.0.0.7]:3211",
            "gloo-peer-not-listening",
        ),
        (
            "[../third_party/gloo/gloo/transport/tcp/helpers.h:208] timed out connecting: SO_ERROR: Connection timed "
            "out, remote=[10.0.0.7]:3211",
            "gloo-wrong-interface-or-blocked",
        ),
    ):
        log = tmp_path / "rank.log"
        log.write_text(line + "\n")
        report = triage([str(log)])
        assert report.first_failure is not None and report.first_failure.signature == "GLOO-TCP-CONNECT"
        assert report.diagnoses[0].causes[0].id == first, line


def test_efa_unreachable_statuses_of_both_eras_and_not_the_previously_responsive_ones(sigs):
    doc = _data("efa_status_messages.json")
    assert set(doc["unreachable_statuses"]) == {"LOCAL_ERROR_UNREACH_REMOTE", "LOCAL_ERROR_UNRESP_REMOTE"}
    sig = sigs["EFA-PEER-UNREACHABLE"]
    named = [m for m in doc["messages"] if m["signature"]]
    rxr = [m for m in named if m["name"] == "IBV_WC_RESP_TIMEOUT_ERR"]
    assert rxr and all(set(m["efa_statuses"]) == set(doc["unreachable_statuses"]) for m in rxr)
    for m in named:
        line = m["text"].replace("%d", "20").replace("<strerror(20)>", "Not a directory")
        assert _matches(sig, line), m
    for m in doc["messages"]:
        if m["signature"] is None:
            assert not _matches(sig, m["text"]), m  # e.g. 'Unresponsive receiver (connection previously established)'
    # a verbs status other than RESP_TIMEOUT in the old form is not this class
    assert not _matches(sig, "rxr_cq_write_tx_error: err: 5, prov_err: Input/output error (5)")


@pytest.mark.parametrize("owner", [o["signature"] for o in _data("cuda_error_forms.json")["owners"]])
def test_every_cuda_error_form_names_the_owner_of_its_code(owner, sigs):
    doc = _data("cuda_error_forms.json")
    runtime = {r["code"]: r for r in _data("cuda_runtime_errors.json")["rows"]}
    spec = next(o for o in doc["owners"] if o["signature"] == owner)
    sig = sigs[owner]
    for code in spec["codes"]:
        row = runtime[code]
        for text in row["texts"]:
            lines = [
                f"THCudaCheck FAIL file=/pytorch/torch/csrc/cuda/Module.cpp line=33 error=10 : {text}",
                f"RuntimeError: cuda runtime error (10) : {text} at /pytorch/torch/csrc/cuda/Module.cpp:33",
                f"RuntimeError: CUDA error: {text}",
                f"h:1:1 [0] NCCL WARN Cuda failure {code} '{text}'",
                f"Test CUDA failure common.cu:892 '{text}'",
                f"cupy_backends.cuda.api.runtime.CUDARuntimeError: {row['name']}: {text}",
            ]
            for line in lines:
                assert _matches(sig, line), line
    assert len(doc["forms"]) == 6


def test_a_short_cuda_text_is_only_recognised_inside_a_form():
    pats = cuda_forms.owned_patterns()["CUDA-INVALID-DEVICE-ORDINAL"]
    assert not any(p.search("invalid device ordinal") for p in pats)
    assert not any(p.search("ValueError: invalid device ordinal requested by the user") for p in pats)
    assert any(re.search(p, "RuntimeError: CUDA error: invalid device ordinal") for p in pats)


def test_the_framework_form_leads_with_more_ranks_than_gpus_and_ncclS_form_with_task_isolation(tmp_path):
    from imgcheck.triage import triage

    for line, first in (
        (
            "THCudaCheck FAIL file=/pytorch/torch/csrc/cuda/Module.cpp line=59 error=101 : invalid device ordinal",
            "local-rank-mapping",
        ),
        ("h:1:1 [0] NCCL WARN Cuda failure 'invalid device ordinal'", "per-task-gpu-isolation"),
    ):
        log = tmp_path / "rank.log"
        log.write_text(line + "\n")
        report = triage([str(log)])
        assert report.diagnoses[0].signature == "CUDA-INVALID-DEVICE-ORDINAL"
        assert report.diagnoses[0].causes[0].id == first, line


def test_process_entries_have_samples_their_patterns_match():
    entries = {c.signature.id: c for c in host_catalog.catalog()}
    for m in _data("process_messages.json")["messages"]:
        c = entries[m["id"]]
        assert c.samples and c.signature.patterns, m["id"]
        assert all(_matches(c.signature, s) for s in c.samples), m["id"]


def test_heap_abort_with_an_nccl_older_than_the_gpu_leads_with_that(tmp_path):
    """log.nccl_older_than_gpu (the log's NCCL version vs nccl_gpu_generations) promotes the specific cause."""
    from imgcheck.triage import triage

    old = next(r for r in _data_matrix_rows() if "GB200" in r["pattern"])
    major, minor, _patch = (int(x) for x in old["nccl_min"].split("."))
    version = f"{major}.{minor - 1}.3"  # a release before the first one for GB200
    log = tmp_path / "rank0.log"
    log.write_text(
        "\n".join(
            [
                "# nccl-tests version 2.13.10 nccl-headers=0 nccl-library=0",
                "#  Rank  0 Group  0 Pid  77 on node1 device  0 [0x1b] NVIDIA GB200",
                f"node1:77:77 [0] NCCL INFO NCCL version {version}+cuda12.4",
                "free(): corrupted unsorted chunks",
            ]
        )
        + "\n"
    )
    report = triage([str(log)])
    d = next(d for d in report.diagnoses if d.signature == "GLIBC-HEAP-CORRUPTION")
    assert d.causes[0].id == "nccl-older-than-gpu"


def _data_matrix_rows() -> list[dict]:
    from imgcheck.knowledge import shipped

    return list(shipped().rows("nccl_gpu_generations"))


def test_every_mpich_ofi_setup_message_is_named_by_its_class(sigs):
    doc = _data("mpich_ofi_messages.json")
    assert len(doc["releases"]) >= 7 and len(doc["messages"]) >= 40 and doc["left_out"]["names"]
    spec = re.compile(r"%[-+ #0-9.*]*[hlLzjt]*([diouxXeEfgGcsp])")
    for row in doc["messages"]:
        body = spec.sub(lambda m: "1541" if m.group(1) in "diouxX" else "mlx5_0", row["text"])
        line = f"MPIDI_OFI_mpi_init_hook(1541): {body}"
        assert _matches(sigs[row["signature"]], line), row
    names = {r["name"] for r in doc["messages"]}
    assert {"ofid_addrinfo", "ofid_getinfo", "ofid_mr_reg", "ofid_ep", "ofid_avmap"} <= names
    # a data-path failure after start-up is left to the line that explains it
    assert "ofid_tsend" in doc["left_out"]["names"]


def test_every_signal_banner_form_and_the_abort_yields_to_the_line_that_explains_it(sigs, tmp_path):
    from imgcheck.triage import triage

    doc = _data("signal_banners.json")
    forms = {r["form"] for r in doc["messages"]}
    assert forms == {
        "ompi-stacktrace",
        "ucx-debug",
        "faulthandler",
        "shell-job",
        "glog-failure-handler",
        "torchrun-summary",
    }
    render = {
        "ompi-stacktrace": "[node1:186363] Signal: {text} ({num})",
        "ucx-debug": "[node1:77:0:77] Caught signal {num} ({text}: invalid operand)",
        "faulthandler": "Fatal Python error: {text}",
        "shell-job": "{text} (core dumped)",
        "glog-failure-handler": "*** {name} (@0x3e80000086b) received by PID 2155 (TID 0x7f16261d2740) from PID 2155; "
        "stack trace: ***",
        "torchrun-summary": "  traceback : Signal {num} ({name}) received by PID 3719",
    }
    for r in doc["messages"]:
        if r["signature"]:
            line = render[r["form"]].format(text=r["text"], num=r["number"], name=r["signal"])
            assert _matches(sigs[r["signature"]], line), r
    log = tmp_path / "rank.log"
    log.write_text(
        "free(): invalid pointer\n[node1:186363] *** Process received signal ***\n[node1:186363] Signal: Aborted (6)\n"
    )
    report = triage([str(log)])
    assert report.first_failure is not None and report.first_failure.signature == "GLIBC-HEAP-CORRUPTION"
    assert "PROCESS-SIGNAL-ABRT" in [d.signature for d in report.diagnoses]


def test_the_legacy_unknown_error_form_names_the_uvm_device_not_a_gpu_fault(tmp_path):
    """cudaErrorUnknown was 30 before CUDA 10.1 (999 after); THC prints the number it had."""
    from imgcheck.triage import triage

    log = tmp_path / "rank.log"
    log.write_text("RuntimeError: cuda runtime error (30) : unknown error at /pytorch/aten/src/THC/THCGeneral.cpp:50\n")
    report = triage([str(log)])
    assert report.diagnoses[0].signature == "CUDA-UNKNOWN-ERROR"
    assert report.diagnoses[0].causes[0].id == "nvidia-uvm-missing"
