"""engine/node_cgroup.py: a GPU container under runc's systemd cgroup driver loses /dev/nvidia* when systemd re-applies
its device rules, unless /dev/char links name the NVIDIA devices (nvidia-docker#1650, nvidia-container-toolkit#48).

The launch spec is the Network Operator's GPU/RDMA test pod (tests/job/specs/real/SOURCES.md); node facts are the
committed fixture with the state node/device_cgroup.py reads (tests/node/test_device_cgroup.py reads it from real
layouts)."""

from __future__ import annotations

import dataclasses
import os

import pytest
from engine_facts import by_id, committed_facts, ids, matrix, node, unknown_rules, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job.parse import load_job_spec

RULE = "NODE-SYSTEMD-DEVICE-CGROUP"
POD = os.path.join(os.path.dirname(__file__), "job", "specs", "real", "network-operator-rdma-gpu-test-pod1.yml")
RDMA_ONLY = os.path.join(os.path.dirname(__file__), "job", "specs", "real", "rdma-shared-dev-plugin-test-hca-pod.yaml")


def _node(**state):
    base = node("inbox-6.8-open-570")
    return dataclasses.replace(base, state=dataclasses.replace(base.state, **state))


@pytest.fixture(scope="module")
def image():
    return with_nccl(committed_facts("bookworm"), "2.21.5")


def _run(image, node_facts, spec=POD):
    return evaluate(image, node_facts, matrix(), job=load_job_spec(spec)[0])


def test_systemd_driver_without_char_links_warns(image):
    found = by_id(_run(image, _node(containerd_systemd_cgroup=True, nvidia_char_links=())), RULE)
    assert found.severity == "warning" and "NVML: Unknown Error" in found.predicted_error
    assert any("create-dev-char-symlinks" in fix for fix in found.fixes)


def test_links_or_cgroupfs_keep_the_devices(image):
    assert RULE not in ids(_run(image, _node(containerd_systemd_cgroup=True, nvidia_char_links=("195:0",))))
    assert RULE not in ids(_run(image, _node(containerd_systemd_cgroup=False, nvidia_char_links=())))
    # a pod that asks for no GPU is not affected
    assert RULE not in ids(_run(image, _node(containerd_systemd_cgroup=True, nvidia_char_links=()), RDMA_ONLY))


def test_unknown_driver_or_links_are_asked(image):
    for state in ({"containerd_systemd_cgroup": None, "nvidia_char_links": ()}, {"containerd_systemd_cgroup": True}):
        result = _run(image, _node(**state))
        assert RULE not in ids(result) and RULE in unknown_rules(result)
