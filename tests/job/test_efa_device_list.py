"""libfabric's EFA provider and a wholesale /dev/infiniband: every release read (compat_matrix efa_device_list,
generated from efa_device_list_initialize at each tag) ends its device list at a device it cannot open, and
before 2.2.0 at any non-EFA device. The spec is a real Volcano manifest that mounts /dev/infiniband as a hostPath
(tests/job/specs/real/SOURCES.md); the node has EFA devices beside two mlx5 ones, as P6-B200 nodes do."""

from __future__ import annotations

import dataclasses
import os

from imgcheck.engine import evaluate
from imgcheck.job import load_job_spec
from imgcheck.matrix import load_matrix
from imgcheck.model.image_io import parse_image_facts
from imgcheck.model.node_io import parse_node_facts

MATRIX = load_matrix()
RULE = "JOB-EFA-DEVICE-LIST-ABORT"
SPEC = os.path.join(os.path.dirname(__file__), "specs", "real", "oci-volcano-BM.GPU.H100.8-nccl-test.yaml")
EFA = [{"name": f"rdmap{n}s0", "driver": "efa"} for n in (79, 80, 81, 82, 96, 97, 98, 99)]
MIXED = {
    "name": "p6-b200",
    "rdma": {"stack": "inbox", "devices": [*EFA, {"name": "ibp115s0f0", "driver": "mlx5_core"}]},
}
EFA_ONLY = {"name": "p5", "rdma": {"stack": "inbox", "devices": EFA}}


def image(libfabric: str | None) -> dict:
    return {
        "reference": "efa-image",
        "platform": "linux/amd64",
        "nccl": [{"version": "2.23.4", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.23.4"}],
        "libfabric": {"version": libfabric, "path": "/opt/amazon/efa/lib/libfabric.so.1", "origin": "efa_installer"},
    }


def worker(privileged: bool):
    """The manifest's worker, moved to an EFA node: it asks the EFA device plugin for its devices and GPUs."""
    job = [j for j in load_job_spec(SPEC) if "/dev/infiniband" in (j.devices or ())][-1]  # the worker
    plugged = (("nvidia.com/gpu", "8"), ("vpc.amazonaws.com/efa", "8"))
    return dataclasses.replace(job, privileged=privileged, gpus=8, resources=plugged)


def judge(libfabric, node=MIXED, privileged=False):
    result = evaluate(
        parse_image_facts(image(libfabric), "image"), parse_node_facts(node, "node"), MATRIX, job=worker(privileged)
    )
    return [f for f in result.findings if f.id == RULE], [u for u in result.unknowns if u.rule == RULE]


def test_the_real_spec_mounts_all_of_dev_infiniband():
    assert "/dev/infiniband" in worker(False).devices and worker(False).runtime == "kubernetes"


def test_an_unopenable_non_efa_device_ends_the_efa_list_in_every_release_read():
    for version in ("1.19.0amzn4.0", "2.1.0", "2.3.0amzn1.0", None):
        (f,), _ = judge(version)
        assert f.severity == "error" and "ibp115s0f0" in f.title and "-61" in f.predicted_error, version
    assert judge("2.3.0", node=EFA_ONLY) == ([], [])  # only EFA devices: nothing to fail on


def test_privileged_opens_them_and_only_releases_before_2_2_stop_at_a_non_efa_device():
    (f,), _ = judge("2.1.0", privileged=True)
    assert "stops at the first non-EFA" in f.title and "1.16.0..2.1.0" in f.mechanism
    assert judge("2.3.0", privileged=True) == ([], [])
    _, (u,) = judge(None, privileged=True)  # which release decides
    assert "differ" in u.reason


def test_a_release_newer_than_the_snapshot_is_asked_about():
    _, (u,) = judge("9.0.0")
    assert "known for releases up to" in u.reason
