"""deploy/ manifests: valid Kubernetes objects (through the client's models) with least privilege."""

from __future__ import annotations

import json
import os

import pytest

from imgcheck.cli.main import build_parser

kubernetes = pytest.importorskip("kubernetes", reason="the optional kubernetes client (imgcheck[k8s]) is not installed")
yaml = pytest.importorskip("yaml")

DEPLOY = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "deploy")


def _docs(name):
    with open(os.path.join(DEPLOY, name), encoding="utf-8") as fh:
        return [d for d in yaml.safe_load_all(fh) if d]


def _model(doc, kind):
    from kubernetes import client

    return client.ApiClient().deserialize(json.dumps(doc), kind, "application/json")


def test_daemonset_is_least_privilege():
    docs = {d["kind"]: d for d in _docs("probe-daemonset.yaml")}
    ds = _model(docs["DaemonSet"], "V1DaemonSet")
    pod = ds.spec.template.spec
    assert pod.host_pid in (None, False) and pod.host_network in (None, False) and pod.host_ipc in (None, False)
    assert pod.automount_service_account_token is False
    (container,) = pod.containers
    sc = container.security_context
    assert sc.privileged is False and sc.allow_privilege_escalation is False
    assert sc.read_only_root_filesystem is True and sc.capabilities.drop == ["ALL"]
    assert not sc.capabilities.add
    mounts = {m.mount_path: m for m in container.volume_mounts}
    volumes = {v.name: v for v in pod.volumes}
    assert mounts["/host"].read_only is True and volumes[mounts["/host"].name].host_path.path == "/"
    writable = [m for m in container.volume_mounts if not m.read_only]
    assert [volumes[m.name].host_path.path for m in writable] == ["/etc/kubernetes/node-feature-discovery/features.d"]
    assert [e.value_from.field_ref.field_path for e in container.env if e.name == "NODE_NAME"] == ["spec.nodeName"]


def test_daemonset_args_are_a_valid_probe_command_line():
    ds = {d["kind"]: d for d in _docs("probe-daemonset.yaml")}["DaemonSet"]
    args = ds["spec"]["template"]["spec"]["containers"][0]["args"]
    args = [a.replace("$(NODE_NAME)", "node-1") for a in args]
    parsed = build_parser().parse_args(["node", "probe", "--root", "/host", *args])  # the image's entrypoint
    assert (parsed.root, parsed.name, parsed.nfd_dir, parsed.every, parsed.output) == (
        "/host",
        "node-1",
        "/features.d",
        3600.0,
        "-",
    )
    assert parsed.annotate is False  # opting into node patches is a separate, documented step


def test_rbac_grants_only_node_get_patch_and_list():
    for doc in _docs("rbac-annotate.yaml"):
        if doc["kind"] != "ClusterRole":
            continue
        role = _model(doc, "V1ClusterRole")
        for rule in role.rules:
            assert rule.resources == ["nodes"] and set(rule.verbs) <= {"get", "patch", "list"}
