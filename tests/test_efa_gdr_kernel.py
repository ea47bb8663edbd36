"""EFA-GDR-NVIDIA-P2P: GPUDirect RDMA over EFA decided from the kernel, the NVIDIA module's flavour and release and
the EFA driver's release, not from peermem/dma-buf prerequisites.

The node facts are the ones aws/aws-parallelcluster#6015 and awslabs/amazon-eks-ami#1494 state (p4d, A100, Amazon
Linux 2 kernel 5.10.205 after the symbol_get change, proprietary 535 driver: broken; the open modules with EFA
1.29.0 / driver 2.6.0: working), the 580 ABI change from amzn-drivers commit 47cf9fe, and distribution kernels whose
names carry no stable patch level (asked, never decided)."""

from __future__ import annotations

import pytest

from imgcheck.engine.evaluate import evaluate_node
from imgcheck.engine.node_only import NODE_ONLY_IMAGE
from imgcheck.matrix import load_matrix
from imgcheck.model.node_io import parse_node_facts

MATRIX = load_matrix()
RULE = "EFA-GDR-NVIDIA-P2P"


def _node(kernel: str, driver: str, flavour: str | None, efa: str | None = None) -> object:
    modules = {"efa": {"version": efa, "out_of_tree": True}} if efa else {}
    doc = {
        "name": "p4d-alinux2",
        "kernel": {"release": kernel},
        "rdma": {
            "stack": "inbox",
            "modules": modules,
            "devices": [{"name": f"rdmap{n}s27", "driver": "efa"} for n in (16, 32, 144, 160)],
        },
        "gpu": {
            "driver_version": driver,
            "kernel_module": flavour,
            "gpus": [{"index": i, "name": "NVIDIA A100-SXM4-40GB", "gpu_class": "datacenter"} for i in range(8)],
        },
    }
    return parse_node_facts(doc, "test")


def _said(node) -> dict:
    result = evaluate_node(NODE_ONLY_IMAGE, node, MATRIX)
    return {**{u.rule: u for u in result.unknowns}, **{f.id: f for f in result.findings}}


def test_proprietary_module_on_a_kernel_with_the_symbol_get_change_is_decided():
    found = _said(_node("5.10.205-195.804.amzn2.x86_64", "535.104.12", "proprietary"))[RULE]
    assert found.severity == "error" and "5.10.195" in found.mechanism and "proprietary" in found.title
    assert any("open kernel modules" in f for f in found.fixes)
    # the same node before the kernel update works
    assert RULE not in {
        f.id
        for f in evaluate_node(
            NODE_ONLY_IMAGE, _node("5.10.192-183.736.amzn2.x86_64", "535.104.12", "proprietary"), MATRIX
        ).findings
    }


@pytest.mark.parametrize(
    "driver,efa,decided",
    [
        ("535.104.12", "2.6.0g", False),  # plain exports, but EFA 2.6.0 bridges them through efa_nv_peermem
        ("535.104.12", "2.5.0g", True),  # plain exports and no bridge
        ("550.54.15", "2.5.0g", False),  # the open module exports nvidia_p2p_* GPL-only from 550.40.07
        ("535.161.08", "2.5.0g", False),  # ... and from 535.146.02 in the 535 branch
    ],
)
def test_open_module_works_with_gpl_exports_or_the_efa_bridge(driver, efa, decided):
    said = _said(_node("5.10.205-195.804.amzn2.x86_64", driver, "open", efa))
    assert (RULE in said and said[RULE].__class__.__name__ == "Finding") is decided
    if decided:
        assert "2.6.0" in said[RULE].mechanism and "efa_nv_peermem" in said[RULE].mechanism


def test_an_unknown_efa_driver_with_the_open_module_is_asked():
    u = _said(_node("5.10.205-195.804.amzn2.x86_64", "535.104.12", "open"))[RULE]
    assert "/sys/module/efa/version" in u.reason


def test_580_page_tables_need_an_efa_driver_that_reads_v2():
    old = _said(_node("6.1.109-118.189.amzn2023.x86_64", "580.65.06", "open", "2.17.1g"))[RULE]
    assert "2.17.3" in old.title or "2.17.3" in old.mechanism
    assert "v2" in old.title or "ABI v2" in old.title
    new = _said(_node("6.1.109-118.189.amzn2023.x86_64", "580.65.06", "open", "2.17.3g"))
    assert RULE not in new or new[RULE].__class__.__name__ != "Finding"


def test_distribution_kernel_numbering_is_asked_not_decided():
    u = _said(_node("5.15.0-91-generic", "535.104.12", "proprietary"))[RULE]
    assert "distribution" in u.reason
