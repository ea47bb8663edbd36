"""The Kubernetes reader against the API's real shapes, through the real `kubernetes` client.

No live cluster exists here. The NodeList documents below have the shape `GET /api/v1/nodes` returns
(apiVersion/kind/metadata.continue, items with metadata.labels/annotations and status.nodeInfo), the
client deserializes them into its own V1NodeList models, and `read_nodes` talks HTTP to a local
server through the client's real kubeconfig loading, paging and error handling.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest
from node_fixtures import fixture_root

from imgcheck.errors import UnavailableError, UsageError
from imgcheck.model.node_io import dump_node_facts
from imgcheck.node import k8s
from imgcheck.node.nfd import PREFIX
from imgcheck.node.probe import probe

kubernetes = pytest.importorskip("kubernetes", reason="the optional kubernetes client (imgcheck[k8s]) is not installed")


def _node(name, labels, annotations=None, kernel="5.15.0-25-generic", arch="amd64"):
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "resourceVersion": "4711",
            "creationTimestamp": "2026-01-05T10:00:00Z",
            "labels": labels,
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", **(annotations or {})},
        },
        "spec": {"podCIDR": "10.244.1.0/24"},
        "status": {
            "capacity": {"cpu": "128", "memory": "2113451456Ki", "nvidia.com/gpu": "8"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "lastHeartbeatTime": "2026-01-05T10:00:00Z",
                    "lastTransitionTime": "2026-01-05T10:00:00Z",
                }
            ],
            "nodeInfo": {
                "architecture": arch,
                "bootID": "b",
                "containerRuntimeVersion": "containerd://1.7.24",
                "kernelVersion": kernel,
                "kubeProxyVersion": "v1.31.4",
                "kubeletVersion": "v1.31.4",
                "machineID": "m",
                "operatingSystem": "linux",
                "osImage": "Ubuntu 22.04.4 LTS",
                "systemUUID": "s",
            },
        },
    }


def _node_list(items, cont=None):
    meta = {"resourceVersion": "4711"}
    if cont:
        meta["continue"] = cont
    return {"apiVersion": "v1", "kind": "NodeList", "metadata": meta, "items": items}


DOCA = probe(fixture_root("doca-24.10-ubuntu2404"))
ANNOTATED = _node(
    "gpu-doca-1",
    {"kubernetes.io/arch": "amd64", "rack": "r2"},
    {k8s.ANNOTATION: json.dumps(json.loads(dump_node_facts(DOCA)))},
    kernel="6.8.0-55-generic",
)
LABELLED = _node(
    "gpu-nfd-1",
    {
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": "gpu-nfd-1",
        "feature.node.kubernetes.io/kernel-version.full": "5.15.0-25-generic",
        "feature.node.kubernetes.io/system-os_release.ID": "ubuntu",
        "feature.node.kubernetes.io/system-os_release.VERSION_ID": "22.04",
        "nvidia.com/cuda.driver-version.full": "535.183.01",
        "nvidia.com/cuda.runtime-version.full": "12.2",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        PREFIX + "rdma.stack": "inbox",
        PREFIX + "nvidia.kernel-module": "proprietary",
        PREFIX + "nvidia.peermem": "false",
        PREFIX + "limits.memlock-kib": "8192",
    },
)
BARE = _node("cpu-1", {"kubernetes.io/arch": "arm64"}, kernel="6.1.0-28-cloud-arm64", arch="arm64")


def _deserialize(doc):
    from kubernetes import client

    return client.ApiClient().deserialize(json.dumps(doc), "V1NodeList", "application/json")


def test_client_models_become_facts():
    node_list = _deserialize(_node_list([ANNOTATED, LABELLED, BARE]))
    assert type(node_list).__name__ == "V1NodeList"
    annotated, labelled, bare = k8s.nodes_from_list(node_list)

    # the annotation carries the probe's full facts; the node's name and labels come from the API
    assert annotated.name == "gpu-doca-1"
    assert annotated.rdma == DOCA.rdma and annotated.gpu == DOCA.gpu and annotated.limits == DOCA.limits
    assert annotated.labels["rack"] == "r2"

    assert labelled.kernel.release == "5.15.0-25-generic" and labelled.os.id == "ubuntu"
    assert labelled.gpu.driver_version == "535.183.01" and labelled.gpu.cuda_driver_version == "12.2"
    assert labelled.gpu.kernel_module == "proprietary" and labelled.gpu.peermem.loaded is False
    assert labelled.rdma.stack == "inbox" and labelled.limits.memlock_kib == 8192
    assert len(labelled.gpu.gpus) == 8

    # nothing but what the kubelet reports: kernel and arch known, the rest unknown with reasons
    assert bare.kernel.release == "6.1.0-28-cloud-arm64" and bare.arch == "arm64"
    assert bare.rdma.stack is None and "imgcheck" in bare.unknown["rdma.stack"]
    assert bare.gpu.driver_version is None and "gpu.driver_version" in bare.unknown


def test_bad_annotation_is_bad_input():
    broken = _node("n", {}, {k8s.ANNOTATION: "{nope"})
    with pytest.raises(Exception, match="not valid JSON"):
        k8s.nodes_from_list(_deserialize(_node_list([broken])))


class _FakeApiServer:
    """A local HTTP server answering GET /api/v1/nodes like kube-apiserver does (paged by `limit`)."""

    def __init__(self, pages, status=200):
        self.pages = pages
        self.status = status
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                server.requests.append({"path": url.path, **query})
                if server.status != 200:
                    body = {
                        "kind": "Status",
                        "apiVersion": "v1",
                        "status": "Failure",
                        "message": "nodes is forbidden",
                        "reason": "Forbidden",
                        "code": server.status,
                    }
                else:
                    body = server.pages[int(query.get("continue", "0"))]
                data = json.dumps(body).encode()
                self.send_response(server.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"


def _kubeconfig(tmp_path, monkeypatch, url):
    path = tmp_path / "kubeconfig"
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "test",
                "clusters": [{"name": "test", "cluster": {"server": url}}],
                "users": [{"name": "test", "user": {"token": "t0ken"}}],
                "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
            }
        )
    )
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


def test_read_nodes_over_http_with_paging(tmp_path, monkeypatch):
    pages = [_node_list([ANNOTATED], cont="1"), _node_list([LABELLED])]
    with _FakeApiServer(pages) as server:
        _kubeconfig(tmp_path, monkeypatch, server.url)
        nodes = k8s.read_nodes("nvidia.com/gpu.present=true")
    assert [n.name for n in nodes] == ["gpu-doca-1", "gpu-nfd-1"]
    assert [r["path"] for r in server.requests] == ["/api/v1/nodes", "/api/v1/nodes"]
    assert server.requests[0]["labelSelector"] == "nvidia.com/gpu.present=true"
    assert server.requests[1]["continue"] == "1"


def test_fleet_k8s_selector_end_to_end(tmp_path, monkeypatch, home):
    from imgcheck.node.inventory import Inventory

    with _FakeApiServer([_node_list([LABELLED, BARE])]) as server:
        _kubeconfig(tmp_path, monkeypatch, server.url)
        nodes = Inventory.default().fleet("k8s:")
    assert [n.name for n in nodes] == ["gpu-nfd-1", "cpu-1"]


@pytest.mark.parametrize(
    "status,error,match", [(403, UnavailableError, "HTTP 403"), (400, UsageError, "rejected the label selector")]
)
def test_api_errors_are_one_line(tmp_path, monkeypatch, status, error, match):
    with _FakeApiServer([], status=status) as server:
        _kubeconfig(tmp_path, monkeypatch, server.url)
        with pytest.raises(error, match=match) as info:
            k8s.read_nodes("x=y")
    assert "\n" not in str(info.value)


def test_unreachable_api_server_is_unavailable(tmp_path, monkeypatch):
    _kubeconfig(tmp_path, monkeypatch, "http://127.0.0.1:9")  # discard port: connection refused
    from kubernetes import client

    monkeypatch.setattr(client.Configuration, "retries", 0, raising=False)
    with pytest.raises(UnavailableError, match="cannot list Kubernetes nodes"):
        k8s.read_nodes("")


def test_no_credentials_is_unavailable(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(UnavailableError, match="no Kubernetes credentials"):
        k8s.read_nodes("")


def test_missing_client_is_a_one_line_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "kubernetes", None)  # import kubernetes -> ImportError
    with pytest.raises(UnavailableError, match=r"pip install 'imgcheck\[k8s\]'"):
        k8s.read_nodes("")


def test_annotate_patches_the_node_with_the_full_facts():
    calls = []

    class Api:
        def patch_node(self, name, body):
            calls.append((name, body))

    k8s.annotate_node(DOCA, api=Api())
    ((name, body),) = calls
    assert name == "dgx01"
    text = body["metadata"]["annotations"][k8s.ANNOTATION]
    back = k8s.facts_from_node({"metadata": {"name": "dgx01", "annotations": {k8s.ANNOTATION: text}}})
    assert back.rdma == DOCA.rdma and back.gpu == DOCA.gpu
