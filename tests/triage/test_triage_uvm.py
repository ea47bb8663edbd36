"""cudaErrorUnknown (999) in every form a framework prints it names /dev/nvidia-uvm first, and the node's facts decide
it: nvidia_uvm not loaded confirms it, loaded with its device node present moves it last. The log is the real
nccl-tests output of https://github.com/NVIDIA/pyxis/issues/81 (fixed on the host by `modprobe nvidia_uvm`); the
node is probed from a fixture root laid out as an Ubuntu 22.04 host lays it out."""

from __future__ import annotations

import os
import shutil

import pytest

from imgcheck.model.node_io import dump_node_facts
from imgcheck.node.probe import probe
from imgcheck.triage import triage

HERE = os.path.dirname(__file__)
LOG = os.path.join(HERE, "logs", "pyxis-81-uvm-unknown-error.log")
ROOT = os.path.join(HERE, "..", "node", "fixtures", "inbox-ubuntu2204")


def _node_file(tmp_path, uvm: bool) -> str:
    root = tmp_path / "root"
    shutil.copytree(ROOT, root, symlinks=True)
    if not uvm:
        shutil.rmtree(root / "sys/module/nvidia_uvm")
        os.unlink(root / "dev/nvidia-uvm")
    path = tmp_path / "node.json"
    path.write_text(dump_node_facts(probe(str(root))))
    return str(path)


def _first(report):
    d = report.diagnoses[0]
    return d.signature, [c.id for c in d.causes]


def test_nccl_tests_unknown_error_names_uvm():
    signature, causes = _first(triage([LOG]))
    assert signature == "CUDA-UNKNOWN-ERROR" and causes[0] == "nvidia-uvm-missing"


def test_node_without_uvm_confirms_and_with_uvm_demotes(tmp_path):
    missing = triage([LOG], node_facts=_node_file(tmp_path / "a", uvm=False))
    sig, causes = _first(missing)
    assert sig == "CUDA-UNKNOWN-ERROR" and causes[0] == "nvidia-uvm-missing"
    assert missing.diagnoses[0].causes[0].status != "unknown"
    healthy = triage([LOG], node_facts=_node_file(tmp_path / "b", uvm=True))
    _, causes = _first(healthy)
    assert causes[0] != "nvidia-uvm-missing" and causes[-1] == "nvidia-uvm-missing"


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: CUDA error: unknown error",  # pytorch c10/cuda/CUDAException.cpp
        "NCCL WARN Cuda failure 999 'unknown error'",  # nccl src/include/checks.h (2.19 on)
        "RuntimeError: cuda runtime error (30) : unknown error at /pytorch/aten/src/THC/THCGeneral.cpp:50",
        "E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error",
    ],
)
def test_every_form_of_code_999(tmp_path, line):
    log = tmp_path / "rank.log"
    log.write_text(line + "\n")
    signature, causes = _first(triage([str(log)]))
    assert signature == "CUDA-UNKNOWN-ERROR" and "nvidia-uvm-missing" in causes


def test_no_cuda_capable_device_with_uvm_missing_promotes_it(tmp_path):
    log = tmp_path / "rank.log"
    log.write_text("RuntimeError: CUDA error: no CUDA-capable device is detected\n")
    report = triage([str(log)], node_facts=_node_file(tmp_path, uvm=False))
    signature, causes = _first(report)
    assert signature == "CUDA-NO-DEVICE" and causes[0] == "nvidia-uvm-missing"
