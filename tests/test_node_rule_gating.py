"""Rules whose mechanism is on the node alone (nvidia_uvm, the driver's user-space libraries, peer memory) are gated on
whether the image runs GPU code (facts.GPU_WORKLOAD), in its three states: known to (the rule decides), known not to
(the rule does not apply: quiet), not known (a finding conditional on "the image uses CUDA", never silence).

The node is probed from a fixture root laid out as an Ubuntu 22.04 host lays it out, with nvidia_uvm not loaded and no
/dev/nvidia-uvm (as on the ParallelCluster p4d nodes of https://github.com/NVIDIA/pyxis/issues/81, fixed by
`modprobe nvidia_uvm`); the image is the real Debian bookworm rdma image's committed facts."""

from __future__ import annotations

import dataclasses
import os
import shutil

import pytest
from engine_facts import committed_facts, matrix, with_nccl

from imgcheck.engine import evaluate, facts
from imgcheck.engine.context import Ctx
from imgcheck.model.image import Package
from imgcheck.node.probe import probe

FIXTURES = os.path.join(os.path.dirname(__file__), "node", "fixtures")
UVM = "NODE-NVIDIA-UVM-MISSING"
GPU_USE = facts.GPU_WORKLOAD.name


@pytest.fixture(scope="module")
def uvm_missing_node(tmp_path_factory):
    root = tmp_path_factory.mktemp("uvm") / "inbox-ubuntu2204"
    shutil.copytree(os.path.join(FIXTURES, "inbox-ubuntu2204"), root, symlinks=True)
    shutil.rmtree(root / "sys/module/nvidia_uvm")
    os.unlink(root / "dev/nvidia-uvm")
    node = probe(str(root))
    assert (node.gpu.uvm_loaded, node.gpu.uvm_device) == (False, False) and node.gpu.driver_version
    return node


def _unread(image):
    """The image's CUDA, NCCL and packages not read (a facts file that does not list them, an unread layer)."""
    for fact in (facts.CUDA, facts.NCCL, facts.PACKAGES):
        image = fact.blank(image, None, None)[0]
    return image


def _state(image, node):
    return facts.GPU_WORKLOAD.state(Ctx(image, node, matrix(), None))


def test_image_known_to_use_cuda_gets_the_finding(uvm_missing_node):
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    assert _state(image, uvm_missing_node) is facts.State.KNOWN
    found = {f.id: f for f in evaluate(image, uvm_missing_node, matrix()).findings}
    assert UVM in found and not found[UVM].assumes


def test_torch_alone_counts_as_gpu_use(uvm_missing_node):
    base = committed_facts("bookworm")
    image = dataclasses.replace(base, packages=(*base.packages, Package(name="torch", version="2.5.1", db="python")))
    found = {f.id: f for f in evaluate(image, uvm_missing_node, matrix()).findings}
    assert UVM in found and not found[UVM].assumes


def test_image_known_not_to_use_the_gpu_is_quiet(uvm_missing_node):
    image = committed_facts("bookworm")  # read: rdma userspace, no CUDA, no NCCL, no torch
    assert _state(image, uvm_missing_node) is facts.State.ABSENT
    result = evaluate(image, uvm_missing_node, matrix())
    assert UVM not in {f.id for f in result.findings} and UVM not in {u.rule for u in result.unknowns}


def test_unread_image_gets_a_conditional_finding_and_the_question(uvm_missing_node):
    image = _unread(committed_facts("bookworm"))
    assert _state(image, uvm_missing_node) is facts.State.UNKNOWN
    result = evaluate(image, uvm_missing_node, matrix())
    found = {f.id: f for f in result.findings}
    assert UVM in found, "never silent when whether the image uses CUDA is unknown"
    assert found[UVM].assumes[0].startswith("the image uses CUDA") and GPU_USE in found[UVM].assumed_facts
    asked = next(u for u in result.unknowns if u.rule == UVM)
    assert GPU_USE in asked.gated_by


def test_unread_image_on_a_healthy_node_says_nothing_wrong():
    node = probe(os.path.join(FIXTURES, "inbox-ubuntu2204"))
    result = evaluate(_unread(committed_facts("bookworm")), node, matrix())
    assert UVM not in {f.id for f in result.findings}


def test_efa_profile_without_cuda_listed_pyxis_81(uvm_missing_node):
    """The image as the held-out case gave it: only libfabric listed (efa-installer), CUDA/NCCL not listed."""
    from imgcheck.model.image_io import parse_image_facts

    image = parse_image_facts(
        {
            "reference": "shivanshupurohit/gpt-neox:76",
            "libfabric": {"version": None, "path": "/opt/amazon/efa/lib/libfabric.so.1", "builtin_providers": ["efa"]},
        },
        "pyxis-81",
    )
    found = {f.id: f for f in evaluate(image, uvm_missing_node, matrix()).findings}
    assert UVM in found and found[UVM].assumes


def test_node_gpus_of_a_gdr_class_decide_no_gdr_without_asking_about_the_image():
    """NODE-GPU-NO-GDR's mechanism is the GPU's class: the probed node's H100s support GPUDirect RDMA, so with the
    image's GPU use unread the rule is decided on the node, not asked ("if so, the other facts show no problem")."""
    node = probe(os.path.join(FIXTURES, "inbox-ubuntu2204"))
    image = committed_facts("bookworm")
    for fact in (facts.CUDA, facts.NCCL):
        image = fact.blank(image, None, None)[0]
    # a library that registers GPU memory with the NIC (the catalog gpu_memory_registrars): a GPUDirect workload
    mooncake = Package(name="mooncake-transfer-engine", version="0.3.4", db="python")
    image = dataclasses.replace(image, packages=(*image.packages, mooncake))
    assert _state(image, node) is facts.State.UNKNOWN and image.rdma.libibverbs is not None
    result = evaluate(image, node, matrix())
    said = {f.id for f in result.findings} | {u.rule for u in result.unknowns}
    assert "NODE-GPU-NO-GDR" not in said
