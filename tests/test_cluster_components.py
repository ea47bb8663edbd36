"""The cluster's NVIDIA GPU components as node facts, and CLUSTER-DEVICE-PLUGIN-GPU-UNSUPPORTED.

The GB10 node is the DGX Spark of https://github.com/NVIDIA/gpu-operator/issues/1794 (GPU Operator v25.3.x: the
device plugin failed with 'error getting device memory: Not Supported'; fixed by GPU Operator v25.10.0 /
k8s-device-plugin v0.17.4). Versions in the catalogs come from the upstream trees (tools/upstreams/gen_k8s_components.py):
the fix commit is first released in v0.17.4 (backport) and v0.18.0, and GPU Operator v25.3.2 deploys v0.17.3."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import committed_facts, matrix, with_nccl

from imgcheck.engine import evaluate
from imgcheck.engine.cluster_components import RULE, is_fixed
from imgcheck.engine.evaluate import evaluate_node
from imgcheck.engine.node_only import NODE_ONLY_IMAGE
from imgcheck.model.node import Gpu, NodeFacts, NodeGpu
from imgcheck.model.node_io import parse_node_facts
from imgcheck.node.k8s import facts_from_node

GB10 = NodeGpu(driver_version="580.95.05", kernel_module="open", gpus=(Gpu(index=0, name="NVIDIA GB10"),))
H100 = NodeGpu(driver_version="580.95.05", gpus=(Gpu(index=0, name="NVIDIA H100 80GB HBM3"),))


def _node(gpu: NodeGpu, components: dict[str, str] | None) -> NodeFacts:
    return NodeFacts(name="dgx-spark", arch="arm64", gpu=gpu, cluster_components=components)


def _said(node: NodeFacts, image=NODE_ONLY_IMAGE):
    result = evaluate_node(image, node, matrix()) if image is NODE_ONLY_IMAGE else evaluate(image, node, matrix())
    return {f.id: f for f in result.findings}, {u.rule: u.reason for u in result.unknowns}


def test_operator_release_maps_to_its_device_plugin_and_is_decided():
    found, _ = _said(_node(GB10, {"gpu-operator": "v25.3.2"}))
    assert RULE in found and "v0.17.3" in found[RULE].title and "GPU Operator v25.3.2" in found[RULE].mechanism
    for fixed in ({"gpu-operator": "v25.3.4"}, {"gpu-operator": "v25.10.0"}, {"k8s-device-plugin": "v0.18.0"}):
        found, unknown = _said(_node(GB10, fixed))
        assert RULE not in found and RULE not in unknown, fixed


def test_a_stated_device_plugin_image_tag_decides():
    # the tag as public manifests deploy it (e.g. "nvcr.io/nvidia/k8s-device-plugin:v0.17.1" in many DaemonSets)
    found, _ = _said(_node(GB10, {"k8s-device-plugin": "v0.17.1"}))
    assert RULE in found and "v0.17.4" in found[RULE].fixes[0]


def test_unknown_version_on_an_affected_gpu_asks():
    found, unknown = _said(_node(GB10, None))
    assert RULE not in found and "cluster_components" in unknown[RULE] and "GB10" in unknown[RULE]


def test_a_gpu_no_release_fails_on_is_quiet_even_without_versions():
    found, unknown = _said(_node(H100, None))
    assert RULE not in found and RULE not in unknown


def test_a_cpu_image_is_not_concerned_and_a_gpu_image_is():
    node = _node(GB10, {"gpu-operator": "v25.3.2"})
    cpu = committed_facts("bookworm")  # read: no CUDA, no NCCL, no torch
    assert RULE not in _said(node, cpu)[0] and RULE not in _said(node, cpu)[1]
    assert RULE in _said(node, with_nccl(cpu, "2.27.7"))[0]


@pytest.mark.parametrize(
    ("version", "fixed"),
    [("v0.17.3", False), ("v0.17.4", True), ("v0.16.2", False), ("v0.18.0", True), ("v0.20.0", True), ("v1.0.0", True)],
)
def test_fixed_per_release_line(version, fixed):
    assert is_fixed(version, ["v0.17.4", "v0.18.0", "v0.19.0", "v0.20.0"]) is fixed


def test_facts_file_field_round_trips():
    doc = {"name": "n1", "cluster_components": {"k8s-device-plugin": "v0.17.1"}}
    assert parse_node_facts(doc, "t").cluster_components == {"k8s-device-plugin": "v0.17.1"}
    assert parse_node_facts({"name": "n1"}, "t").cluster_components is None


def _k8s_node(images):
    # the shape of the Kubernetes Node API's status.images (NodeStatus.images: ContainerImage{names, sizeBytes};
    # https://kubernetes.io/docs/reference/kubernetes-api/cluster-resources/node-v1/)
    return {
        "metadata": {"name": "gpu-1", "labels": {"nvidia.com/gpu.product": "NVIDIA-GB10"}},
        "status": {"nodeInfo": {"architecture": "arm64"}, "images": images},
    }


def test_status_images_give_the_component_release():
    images = [
        {
            "names": [
                "nvcr.io/nvidia/k8s-device-plugin@sha256:" + "a" * 64,
                "nvcr.io/nvidia/k8s-device-plugin:v0.17.3",
            ],
            "sizeBytes": 180000000,
        },
        {"names": ["nvcr.io/nvidia/gpu-operator:v25.3.2"], "sizeBytes": 90000000},
    ]
    facts = facts_from_node(_k8s_node(images))
    assert facts.cluster_components == {"k8s-device-plugin": "v0.17.3", "gpu-operator": "v25.3.2"}


def test_several_releases_on_the_node_are_unknown_not_guessed():
    images = [
        {"names": ["nvcr.io/nvidia/k8s-device-plugin:v0.17.1"]},
        {"names": ["nvcr.io/nvidia/k8s-device-plugin:v0.18.0"]},
    ]
    facts = facts_from_node(_k8s_node(images))
    assert facts.cluster_components is None
    assert "v0.17.1, v0.18.0" in facts.unknown["cluster_components"]
    node = dataclasses.replace(facts, gpu=GB10)
    assert "v0.17.1, v0.18.0" in _said(node)[1][RULE]
