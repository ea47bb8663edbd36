"""The interface and device families on real launch specs: aws-samples/aws-do-eks's Nemotron LeaderWorkerSet
template before and after the pull requests that fixed them (verbatim, specs/real/SOURCES.md). The node is what
the PRs describe for a P6-B200 EKS node in the host network: lo, the primary VPC NIC, EKS Pod Identity's
pod-id-link0, 8 EFA devices beside two mlx5 ones."""

from __future__ import annotations

import os

from imgcheck.engine import evaluate
from imgcheck.job import load_job_spec
from imgcheck.matrix import load_matrix
from imgcheck.model.image_io import parse_image_facts
from imgcheck.model.node_io import parse_node_facts

MATRIX = load_matrix()
REAL = os.path.join(os.path.dirname(__file__), "specs", "real")
NODE = {
    "name": "p6-b200",
    "rdma": {
        "stack": "inbox",
        "devices": [{"name": f"rdmap{n}s0", "driver": "efa"} for n in (79, 80, 81, 82, 96, 97, 98, 99)]
        + [{"name": "ibp115s0f0", "driver": "mlx5_core"}, {"name": "ibp116s0f0", "driver": "mlx5_core"}],
    },
    "net_interfaces": [{"name": "lo"}, {"name": "enp73s0", "operstate": "up"}, {"name": "pod-id-link0"}],
}
IMAGE = {
    "reference": "dynamo-vllm-efa",
    "platform": "linux/amd64",
    "nccl": [{"version": "2.27.7", "origin": "pip", "path": "/usr/local/lib/python3.12/dist-packages/nvidia/nccl"}],
    "libfabric": {"version": "2.3.0amzn1.0", "path": "/opt/amazon/efa/lib/libfabric.so.1", "origin": "efa_installer"},
}


def worker(name):
    return next(j for j in load_job_spec(os.path.join(REAL, name)) if j.role == "worker")


def found(name):
    result = evaluate(parse_image_facts(IMAGE, "image"), parse_node_facts(NODE, "node"), MATRIX, job=worker(name))
    return {f.id: f for f in result.findings if f.severity in ("error", "warning")}


def test_pr54_the_exclusion_list_left_the_pod_identity_link():
    before = found("aws-do-eks-nemotron-agg-lws-before-pr54.yaml")
    assert "pod-id-link0" in before["ENV-NCCL-SOCKET-NODE-LOCAL"].title
    assert "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE" not in before
    assert "ENV-NCCL-SOCKET-NODE-LOCAL" not in found("aws-do-eks-nemotron-agg-lws-pr54.yaml")


def test_pr51_gloo_given_nccls_exclusion_syntax():
    f = found("aws-do-eks-nemotron-agg-lws-before-pr51.yaml")["ENV-GLOO-SOCKET-IFNAME-NO-ADDRESS"]
    assert f.predicted_error == "Unable to find address for: ^lo"
    # after PR 51 the script exports a concrete name at run time: the loopback fallback is not claimed
    assert "ENV-GLOO-HOSTNAME-LOOPBACK" not in found("aws-do-eks-nemotron-agg-lws-pr54.yaml")


def test_pr63_the_infiniband_hostpath_beside_mlx5_devices():
    f = found("aws-do-eks-nemotron-agg-lws-before-pr54.yaml")["JOB-EFA-DEVICE-LIST-ABORT"]
    assert "ibp115s0f0" in f.title and f.severity == "error"
