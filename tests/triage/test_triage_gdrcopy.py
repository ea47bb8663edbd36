"""GDRCopy's messages (data/triage/gdrcopy_messages.json and the consumers' catalogs, classes in msgcat2_classes.json)
on the real gdrcopy thread logs, alone and joined with node facts that decide the cause."""

from __future__ import annotations

import dataclasses
import os

from engine_facts import node

from imgcheck.model.node import Gpu
from imgcheck.model.node_io import dump_node_facts
from imgcheck.triage import triage

LOGS = os.path.join(os.path.dirname(__file__), "logs")
PIN_EINVAL = os.path.join(LOGS, "d7g-gdrcopy-139-pin-einval-gpu-without-gpudirect-rdma.log")
PIN_241 = os.path.join(LOGS, "d7g-gdrcopy-305-gdrdrv-2.4.1-pin-fails-driver-560.log")
NO_DEV = os.path.join(LOGS, "d7g-gdrcopy-234-gdr-open-fails-no-dev-gdrdrv-node.log")


def _facts_file(tmp_path, **gpu):
    facts = node("inbox-6.8-open-570")
    facts = dataclasses.replace(facts, gpu=dataclasses.replace(facts.gpu, **gpu))
    path = tmp_path / "node.json"
    path.write_text(dump_node_facts(facts), encoding="utf-8")
    return str(path)


def _causes(report):
    return [c.id for c in report.diagnoses[0].causes]


def test_cuda_invalid_device_next_to_a_failed_pin_is_not_a_device_ordinal():
    report = triage([PIN_EINVAL])
    assert report.first_failure is not None and report.first_failure.signature == "GDRCOPY-PIN-FAILED"
    assert "CUDA-INVALID-DEVICE-ORDINAL" not in [d.signature for d in report.diagnoses]


def test_pin_failure_on_a_geforce_node_blames_the_gpu_class(tmp_path):
    facts = _facts_file(tmp_path, gpus=(Gpu(index=0, name="GeForce RTX 2080 Ti", gpu_class="consumer"),))
    assert _causes(triage([PIN_EINVAL], node_facts=facts))[0] == "gpu-without-gpudirect-rdma"


def test_pin_failure_on_a_datacenter_node_blames_the_gdrdrv_release(tmp_path):
    facts = _facts_file(tmp_path, gpus=(Gpu(index=0, name="NVIDIA A100-SXM4-80GB", gpu_class="datacenter"),))
    causes = _causes(triage([PIN_241], node_facts=facts))
    assert causes[0] == "gdrdrv-release-defect"
    assert "gpu-without-gpudirect-rdma" not in causes[:1]


def test_open_failure_with_module_loaded_and_no_device_node(tmp_path):
    facts = _facts_file(tmp_path, gdrdrv_loaded=True, gdrdrv_device=False)
    assert _causes(triage([NO_DEV], node_facts=facts))[0] == "gdrdrv-device-node-missing"


def test_open_failure_with_device_node_present_does_not_blame_it(tmp_path):
    facts = _facts_file(tmp_path, gdrdrv_loaded=True, gdrdrv_device=True, gdrdrv_device_mode="666")
    assert _causes(triage([NO_DEV], node_facts=facts))[0] != "gdrdrv-device-node-missing"


def test_open_failure_with_module_not_loaded(tmp_path):
    facts = _facts_file(tmp_path, gdrdrv_loaded=False, gdrdrv_device=False)
    assert _causes(triage([NO_DEV], node_facts=facts))[0] == "gdrdrv-not-loaded"
