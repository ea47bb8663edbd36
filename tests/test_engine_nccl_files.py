"""NCCL_TOPO_FILE / NCCL_GRAPH_FILE rules on committed facts (Debian bookworm's rdma-core, an H100 node) plus the
topology/graph files real images ship (tests/data/nccl_xml/README.md), read by extractors/nccl_xml.py."""

from __future__ import annotations

import dataclasses
import os

from engine_facts import by_id, committed_facts, matrix, node, with_nccl

from imgcheck.engine import evaluate
from imgcheck.extractors.nccl_xml import read_xml
from imgcheck.model.image import NcclFileRef
from imgcheck.model.node import Gpu

DATA = os.path.join(os.path.dirname(__file__), "data", "nccl_xml")
NCV4_CONF = {"NCCL_TOPO_FILE": "/opt/microsoft/ncv4/topo.xml", "NCCL_GRAPH_FILE": "/opt/microsoft/ncv4/graph.xml"}
RULES = ("NCCL-GRAPH-FILE-SET", "NCCL-GRAPH-FILE-MISSING", "NCCL-TOPO-FILE-MISSING", "NCCL-XML-FILE-REJECTED",
         "NCCL-TOPO-FILE-OTHER-NODE")  # fmt: skip


def xml(name: str, path: str, text=None):
    with open(os.path.join(DATA, name), "rb") as fh:
        data = fh.read()
    return read_xml(text(data.decode()).encode() if text else data, path, "sha256:layer")


def image(conf=None, env=None, files=(), exists=True):
    base = with_nccl(committed_facts("bookworm"), "2.18.6", env=env, nccl_conf=conf)
    refs = [NcclFileRef(k, v, "/etc/nccl.conf", exists) for k, v in (conf or {}).items() if k.endswith("_FILE")]
    refs += [NcclFileRef(k, v, "env", exists) for k, v in (env or {}).items() if k.endswith("_FILE")]
    return dataclasses.replace(base, nccl_xml_files=tuple(files), nccl_file_refs=tuple(refs))


def ncv4_node(gpus: int):
    # NC A100 v4: GPUs at domains 0001..0004 (the busids of Azure's ncv4-topo.xml)
    return dataclasses.replace(
        node("mofed-23.10-open-550-peermem"),
        gpu=dataclasses.replace(
            node("mofed-23.10-open-550-peermem").gpu,
            gpus=tuple(
                Gpu(index=i, name="NVIDIA A100 80GB PCIe", pci_bus_id=f"0000000{i + 1}:00:00.0") for i in range(gpus)
            ),  # fmt: skip
        ),
    )


def findings(result):
    return {f.id: f for f in result.findings if f.id in RULES}


def ncv4_files():
    return (
        xml("ncv4-topo.xml", "/opt/microsoft/ncv4/topo.xml"),
        xml("ncv4-graph.xml", "/opt/microsoft/ncv4/graph.xml"),
    )


def test_graph_file_for_four_gpus_on_a_two_gpu_job_is_an_error():
    # NVIDIA/nccl#1008, Azure/azhpc-images#327: the NC A100 v4 image's /etc/nccl.conf on a VM size with fewer GPUs
    f = by_id(evaluate(image(NCV4_CONF, files=ncv4_files()), ncv4_node(2), matrix()), "NCCL-GRAPH-FILE-SET")
    assert f.severity == "error" and "dev 3" in f.title and "2 GPUs" in f.title
    assert f.predicted_error == "NCCL WARN XML Import Channel : dev 3 not found."
    assert "/etc/nccl.conf" in " ".join(f.fixes)


def test_graph_file_set_globally_is_a_warning_even_when_it_fits():
    got = findings(evaluate(image(NCV4_CONF, files=ncv4_files()), ncv4_node(4), matrix()))
    assert got["NCCL-GRAPH-FILE-SET"].severity == "warning"
    assert set(got) == {"NCCL-GRAPH-FILE-SET"}  # the topology file is NCCL's format and names this node's GPUs


def test_no_file_settings_no_findings():
    assert findings(evaluate(image(), ncv4_node(4), matrix())) == {}


def test_files_the_image_lacks():
    got = findings(evaluate(image(NCV4_CONF, exists=False), ncv4_node(4), matrix()))
    assert got["NCCL-GRAPH-FILE-MISSING"].severity == "warning"
    assert got["NCCL-TOPO-FILE-MISSING"].severity == "info"  # NCCL skips a topology file it cannot open
    assert (
        "Could not open XML graph file /opt/microsoft/ncv4/graph.xml" in got["NCCL-GRAPH-FILE-MISSING"].predicted_error
    )


def test_a_topology_file_nccl_rejects():
    env = {"NCCL_TOPO_FILE": "/usr/local/share/aws-ofi-nccl/xml/p5.48xl-topo.xml"}
    declared = xml("p5.48xl-topo-head.xml", env["NCCL_TOPO_FILE"], lambda t: '<?xml version="1.0"?>\n' + t)
    f = findings(evaluate(image(env=env, files=[declared]), node("mofed-23.10-open-550-peermem"), matrix()))
    assert f["NCCL-XML-FILE-REJECTED"].severity == "error"
    assert f["NCCL-XML-FILE-REJECTED"].predicted_error == "NCCL WARN XML Parse : expected >, got '?'"
    # NVIDIA/nccl#1726's shape: <cpu> without arch/vendor
    bare = xml(
        "p5.48xl-topo-head.xml", env["NCCL_TOPO_FILE"], lambda t: t.replace(' arch="x86_64" vendor="AuthenticAMD"', "")
    )
    f = findings(evaluate(image(env=env, files=[bare]), node("mofed-23.10-open-550-peermem"), matrix()))
    assert f["NCCL-XML-FILE-REJECTED"].severity == "warning"
    assert f["NCCL-XML-FILE-REJECTED"].predicted_error == "NCCL WARN Attribute arch of node cpu not found"


def test_a_topology_file_of_another_machine():
    # the p5 file (GPU 0000:4f:00.0, EFA rdmap79s0..) on an H100 node with ConnectX mlx5_0/mlx5_1
    env = {"NCCL_TOPO_FILE": "/usr/local/share/aws-ofi-nccl/xml/p5.48xl-topo.xml"}
    p5 = xml("p5.48xl-topo-head.xml", env["NCCL_TOPO_FILE"])
    f = findings(evaluate(image(env=env, files=[p5]), node("mofed-23.10-open-550-peermem"), matrix()))
    other = f["NCCL-TOPO-FILE-OTHER-NODE"]
    assert other.severity == "warning" and "0000:4f:00.0" in other.title and "rdmap79s0" in other.title


def test_unread_file_facts_are_unknown_not_silence():
    base = image(NCV4_CONF, files=ncv4_files())
    blind = dataclasses.replace(base, nccl_xml_files=(), nccl_file_refs=(),
                                unknown={**base.unknown, "nccl_xml_files": "not read", "nccl_file_refs": "not read"})  # fmt: skip
    result = evaluate(blind, ncv4_node(2), matrix())
    assert findings(result)["NCCL-GRAPH-FILE-SET"].severity == "warning"  # the setting alone shows it
    asked = {u.rule for u in result.unknowns}
    assert {"NCCL-GRAPH-FILE-MISSING", "NCCL-XML-FILE-REJECTED"} <= asked
