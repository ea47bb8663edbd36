"""Whoever reads a fact records where it came from: evidence names the file the probe read, the node facts
file, or the Kubernetes label, never a path the rule assumes (issue 22)."""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import sys

import pytest
from engine_facts import by_id, committed_facts, matrix, run, with_nccl

from imgcheck.engine.report import build_report, group_nodes
from imgcheck.errors import BadInputError
from imgcheck.formats.report_formats import render
from imgcheck.model.location import Location
from imgcheck.model.node_io import dump_node_facts, load_node_facts
from imgcheck.node.inventory import Inventory
from imgcheck.node.nfd import facts_from_labels
from imgcheck.node.probe import probe

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "node"))
from node_fixtures import fixture_root  # noqa: E402

ENGINE_DIR = os.path.join(os.path.dirname(__file__), os.pardir, "src", "imgcheck", "engine")
HANDWRITTEN = {
    "schema_version": 1,
    "name": "gpu-hand",
    "kernel": {"release": "5.15.0-105-generic"},
    "rdma": {"stack": "inbox", "devices": [{"name": "mlx5_0", "driver": "mlx5_core"}]},
    "gpu": {"driver_version": "535.183.01", "kernel_module": "open"},
    "limits": {"memlock_kib": 65536},
}


@pytest.fixture(scope="module")
def image():
    return with_nccl(committed_facts("bookworm"), "2.21.5")


def _memlock_evidence(result):
    finding = by_id(result, "MEMLOCK-TOO-LOW")
    return next(e for e in finding.evidence if e.fact == "node.limits.memlock_kib")


def test_handwritten_file_is_the_location_never_proc(tmp_path, image):
    path = tmp_path / "gpu-hand.json"
    path.write_text(json.dumps(HANDWRITTEN))
    node = load_node_facts(str(path))
    ev = _memlock_evidence(run(image, node))
    assert ev.location == Location.described(f"node facts file {path}")
    assert ev.path is None and ev.origin == f"node facts file {path}"
    doc = json.loads(render(build_report(image, [node], matrix()), "json"))
    evidence = [e for f in doc["findings"] for e in f["evidence"] if e["fact"].startswith("node.")]
    assert evidence and all(e["origin"] == f"node facts file {path}" and e["path"] is None for e in evidence)
    assert "/proc/" not in json.dumps(doc["findings"])


def test_probed_root_reports_the_file_read(image):
    node = probe(fixture_root("inbox-ubuntu2204"))
    assert node.limits.memlock_kib == 8192  # its /proc/self/limits says 8388608 bytes
    ev = _memlock_evidence(run(image, node))
    assert ev.location == Location.file("/proc/self/limits")
    assert node.location_of("rdma.devices.mlx5_0.fw_ver") == Location.file("/sys/class/infiniband/mlx5_0")
    assert node.location_of("kernel.config") == Location.file("/boot/config-5.15.0-25-generic")
    # a fact the probe decided from several files (modules, packages) is located at the probe itself
    assert node.location_of("rdma.stack") == Location.described(f"probe of {fixture_root('inbox-ubuntu2204')}")


def test_memlock_from_limits_conf_names_that_file(tmp_path, image):
    root = tmp_path / "root"
    (root / "etc" / "security" / "limits.d").mkdir(parents=True)
    (root / "etc" / "hostname").write_text("conf-node\n")
    (root / "etc" / "security" / "limits.conf").write_text("* soft memlock 1024\n")
    (root / "etc" / "security" / "limits.d" / "90-rdma.conf").write_text("* soft memlock 4096\n")
    node = probe(str(root))
    assert node.limits.memlock_kib == 4096
    assert node.location_of("limits.memlock_kib") == Location.file("/etc/security/limits.d/90-rdma.conf")


def test_probe_output_keeps_its_sources_through_a_file(tmp_path):
    probed = probe(fixture_root("inbox-ubuntu2204"))
    path = tmp_path / "probed.json"
    path.write_text(dump_node_facts(probed))
    loaded = load_node_facts(str(path))
    assert loaded == probed  # provenance is not part of the facts
    assert loaded.sources == probed.sources
    assert loaded.location_of("limits.memlock_kib") == Location.file("/proc/self/limits")
    # what the probe did not record is located at the file imgcheck read, not at the probe's root
    assert loaded.location_of("rdma.stack") == Location.described(f"node facts file {path}")


def test_old_file_without_sources_loads_located_at_itself(tmp_path):
    inventory = Inventory(str(tmp_path))
    path = tmp_path / "nodes" / "gpu-hand.json"
    path.parent.mkdir()
    path.write_text(json.dumps(HANDWRITTEN))
    node = inventory.get("gpu-hand")
    assert node.sources == {}
    assert node.location_of("gpu.driver_version") == Location.described(f"inventory file {path}")


def test_bad_sources_are_one_clear_error(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**HANDWRITTEN, "sources": {"limits.memlock_kib": {"kind": "guess"}}}))
    with pytest.raises(BadInputError, match=r"sources\.limits\.memlock_kib\.kind must be one of path, origin"):
        load_node_facts(str(path))
    path.write_text(json.dumps({**HANDWRITTEN, "sources": {"limits.memlock_kib": "/proc/self/limits"}}))
    with pytest.raises(BadInputError, match=r"sources\.limits\.memlock_kib: expected an object"):
        load_node_facts(str(path))


def test_kubernetes_labels_are_the_location():
    node = facts_from_labels(
        "k8s-a",
        {
            "nvidia.com/cuda.driver-version.full": "550.54.15",
            "kubernetes.io/arch": "amd64",
            "imgcheck.feature.node.kubernetes.io/limits.memlock-kib": "64",
        },
        kernel_release="6.8.0-45-generic",
    )
    assert node.location_of("gpu.driver_version") == Location.described(
        "Kubernetes label nvidia.com/cuda.driver-version.full"
    )
    assert node.location_of("limits.memlock_kib") == Location.described(
        "Kubernetes label imgcheck.feature.node.kubernetes.io/limits.memlock-kib"
    )
    assert node.location_of("kernel.release") == Location.described("Kubernetes node status.nodeInfo.kernelVersion")
    assert node.location_of("labels.kubernetes.io/arch") == Location.described("Kubernetes label kubernetes.io/arch")
    assert node.location_of("rdma.stack") == Location.described("Kubernetes node k8s-a")  # no label says


def test_identical_nodes_from_different_files_are_one_group(tmp_path):
    nodes = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({**HANDWRITTEN, "name": name}))
        nodes.append(load_node_facts(str(path)))
    assert nodes[0].origin != nodes[1].origin
    assert len(group_nodes(nodes)) == 1  # provenance does not change what the engine predicts


def _engine_calls():
    for name in sorted(os.listdir(ENGINE_DIR)):
        if name.endswith(".py"):
            with open(os.path.join(ENGINE_DIR, name), encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            for call in ast.walk(tree):
                if isinstance(call, ast.Call):
                    func = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
                    yield name, func, call


def _literal_start(node) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return node.values[0].value
    return ""


def test_no_rule_names_a_node_path():
    """Node evidence is located by the node's reader (ctx.node_ev looks it up): a location written into a
    rule would be a guess about where the fact came from."""
    located_by_rule = []
    for name, func, call in _engine_calls():
        if func == "node_ev" and (len(call.args) != 2 or call.keywords):
            located_by_rule.append(f"{name}:{call.lineno}")
        if (
            func == "Evidence"
            and call.args
            and _literal_start(call.args[0]).startswith("node.")
            and (len(call.args) > 2 or call.keywords)
        ):
            located_by_rule.append(f"{name}:{call.lineno}")
    assert located_by_rule == []


def test_evidence_refuses_a_bare_string_location():
    from imgcheck.model.report import Evidence

    with pytest.raises(TypeError, match="must be a Location"):
        Evidence("node.limits.memlock_kib", 0, "/proc/self/limits")
    ev = dataclasses.replace(Evidence.member("image.rdma.providers", "mlx5", "pabi", 33), value=34)
    assert (ev.collection, ev.item, ev.fact) == ("image.rdma.providers", "mlx5", "image.rdma.providers.mlx5.pabi")
