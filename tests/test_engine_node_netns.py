"""engine/node_netns.py: RDMA devices seen from a container's own network namespace.

Launch specs are real (tests/job/specs/real/SOURCES.md): the shared RDMA device plugin's example pod (its only network
is the CNI's) and the Network Operator's GPU/RDMA test pod (a Multus network). The node is the committed InfiniBand
fixture, and the same node with its ports on an Ethernet link layer (RoCE) as calico#8482's node had them."""

from __future__ import annotations

import dataclasses
import os

import pytest
from engine_facts import by_id, committed_facts, ids, matrix, node, unknown_rules, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job.parse import load_job_spec

REAL = os.path.join(os.path.dirname(__file__), "job", "specs", "real")
EXCLUSIVE = "NODE-RDMA-NETNS-EXCLUSIVE"
ROCE = "JOB-ROCE-POD-NO-NETDEV"


def _spec(name):
    return load_job_spec(os.path.join(REAL, name))[0]


SHARED_POD = "rdma-shared-dev-plugin-test-hca-pod.yaml"
MULTUS_POD = "network-operator-rdma-gpu-test-pod1.yml"


def _node(mode="shared", link_layer=None):
    base = node("inbox-6.8-open-570")
    devices = base.rdma.devices
    if link_layer:
        devices = tuple(
            dataclasses.replace(
                d,
                link_layer=link_layer,
                ports=tuple(dataclasses.replace(p, link_layer=link_layer) for p in d.ports),
            )
            for d in devices
        )
    return dataclasses.replace(
        base,
        state=dataclasses.replace(base.state, rdma_netns_mode=mode),
        rdma=dataclasses.replace(base.rdma, devices=devices),
    )


@pytest.fixture(scope="module")
def image():
    return with_nccl(committed_facts("bookworm"), "2.21.5")


def _run(image, node_facts, job):
    return evaluate(image, node_facts, matrix(), job=job)


def test_exclusive_mode_hides_shared_plugin_devices_from_the_pod(image):
    found = by_id(_run(image, _node("exclusive"), _spec(SHARED_POD)), EXCLUSIVE)
    assert found.severity == "error"
    assert "rdma/hca_shared_devices_a" in found.mechanism
    assert any("shared" in fix for fix in found.fixes)
    # shared mode (the default) shows every device in every namespace
    assert EXCLUSIVE not in ids(_run(image, _node("shared"), _spec(SHARED_POD)))
    # the mode not read: asked, never silent
    asked = _run(image, _node(None), _spec(SHARED_POD))
    assert EXCLUSIVE in unknown_rules(asked) and EXCLUSIVE not in ids(asked)


def test_exclusive_mode_with_a_multus_network_asks_whether_it_moves_a_device(image):
    result = _run(image, _node("exclusive"), _spec(MULTUS_POD))
    assert EXCLUSIVE not in ids(result) and EXCLUSIVE in unknown_rules(result)
    reason = next(u.reason for u in result.unknowns if u.rule == EXCLUSIVE)
    assert "rdma-net-ipam" in reason


def test_host_network_pod_sees_the_node_namespace(image):
    pod = dataclasses.replace(_spec(SHARED_POD), host_network=True)
    result = _run(image, _node("exclusive", "Ethernet"), pod)
    assert EXCLUSIVE not in ids(result) + unknown_rules(result)
    assert ROCE not in ids(result) + unknown_rules(result)


def test_roce_pod_with_only_the_cni_network_has_no_gids(image):
    """calico-8482: shared plugin, Calico only, RoCE: every GID zero in the pod; IB works; macvlan works."""
    found = by_id(_run(image, _node("shared", "Ethernet"), _spec(SHARED_POD)), ROCE)
    assert found.severity == "error" and "RTR" in found.predicted_error
    assert any("macvlan" in fix for fix in found.fixes)
    # InfiniBand ports are addressed by LID: the same pod works
    assert ROCE not in ids(_run(image, _node("shared", "InfiniBand"), _spec(SHARED_POD)))
    # a Multus network: whether it is on the RoCE NIC is not in the spec, so it is asked
    multus = _run(image, _node("shared", "Ethernet"), _spec(MULTUS_POD))
    assert ROCE not in ids(multus) and ROCE in unknown_rules(multus)
    # the netns mode does not change the GID mechanism; exclusive mode is the other rule's (no device at all)
    assert ROCE in ids(_run(image, _node(None, "Ethernet"), _spec(SHARED_POD)))
    exclusive = _run(image, _node("exclusive", "Ethernet"), _spec(SHARED_POD))
    assert EXCLUSIVE in ids(exclusive) and ROCE not in ids(exclusive)
