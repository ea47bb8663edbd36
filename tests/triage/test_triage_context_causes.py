"""Causes chosen by what the log (or the launch spec given with it) shows around the failing line: NVLS multicast
refused in a container, pyxis taking a squashfs file name for a registry image."""

from __future__ import annotations

import os

from imgcheck.triage import triage

HERE = os.path.dirname(__file__)
JOB_SPECS = os.path.join(HERE, "..", "job", "specs")
# pie-project/pie#500: NVLS 'invalid argument' in a pod without /dev/nvidia-caps (the log itself shows no container)
PIE_500 = os.path.join(HERE, "logs", "d7f-pie-500-nvls-invalid-argument-container.log")
# NVIDIA/nccl#1488: the same 'invalid argument' after a Fabric Manager restart without GPU reset, on bare metal
NCCL_1488 = os.path.join(HERE, "logs", "nccl-1488-nvls-fm-restart.log")


def _causes(report):
    d = report.diagnoses[0]
    assert d.signature == "NCCL-NVLS-CUDA"
    return [c.id for c in d.causes]


def test_nvls_refused_in_a_container_names_the_containers_devices_first():
    ids = _causes(triage([PIE_500], job=os.path.join(JOB_SPECS, "compose-gpu.yaml")))
    assert ids[0] == "container-lacks-multicast-devices"


def test_nvls_without_container_evidence_keeps_the_fabric_state_first_and_offers_the_container():
    ids = _causes(triage([PIE_500]))
    assert ids[:2] == ["fabric-manager-state", "container-lacks-multicast-devices"]
    ids = _causes(triage([NCCL_1488]))
    assert ids[0] == "fabric-manager-state"


def test_pyxis_squashfs_name_without_path_is_the_import_failures_cause(tmp_path):
    report = triage([os.path.join(HERE, "logs", "d7f-pyxis-127-sqsh-name-without-path.log")])
    d = report.diagnoses[0]
    assert (d.signature, d.causes[0].id) == ("PYXIS-IMPORT-FAILED", "squashfs-name-taken-as-registry-ref")
    # the same log with the name as a path (pyxis opens it as a file): not this mistake
    ok = tmp_path / "ok.log"
    text = open(os.path.join(HERE, "logs", "d7f-pyxis-127-sqsh-name-without-path.log"), encoding="utf-8").read()
    ok.write_text(text.replace(" hello-world.sqsh", " ./hello-world.sqsh"), encoding="utf-8")
    d = triage([str(ok)]).diagnoses[0]
    assert d.signature == "PYXIS-IMPORT-FAILED" and d.causes[0].id != "squashfs-name-taken-as-registry-ref"


# NVIDIA/gdrcopy#139: GDRCopy's sanity test prints "CUDA error: CUDA_ERROR_INVALID_DEVICE" after gdr_pin_buffer failed
GDRCOPY_139 = os.path.join(HERE, "logs", "d7g-gdrcopy-139-pin-einval-gpu-without-gpudirect-rdma.log")


def test_cuda_error_takes_its_cause_from_the_component_named_just_before(tmp_path):
    # the whole log: GDRCopy's failed pin is recognised itself (its catalog), and the CUDA error it causes is not
    # reported as a device-index fault; the near~ cause stays for a GDRCopy call no catalog format names
    d = triage([GDRCOPY_139]).diagnoses[0]
    assert (d.signature, d.causes[0].id) == ("GDRCOPY-PIN-FAILED", "gpu-without-gpudirect-rdma")
    # the CUDA line alone (no component named before it): the generic cause of the code, GDRCopy not guessed
    alone = tmp_path / "alone.log"
    alone.write_text(open(GDRCOPY_139, encoding="utf-8").read().splitlines()[2] + "\n", encoding="utf-8")
    d = triage([str(alone)]).diagnoses[0]
    assert d.signature == "CUDA-INVALID-DEVICE-ORDINAL" and d.causes[0].id != "gdrcopy-call-failed-before"
    # the same lines in another input than the CUDA line are not near it
    first = tmp_path / "a.log"
    first.write_text("".join(open(GDRCOPY_139, encoding="utf-8").readlines()[:2]), encoding="utf-8")
    d = triage([str(first), str(alone)]).diagnoses[0]
    assert d.causes[0].id != "gdrcopy-call-failed-before"
