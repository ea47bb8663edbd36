"""NCCL's XML topology/graph files read the way NCCL's own reader (src/graph/xml.cc) reads them: real files
images ship (tests/data/nccl_xml/README.md) load; the variations NCCL rejects give the message NCCL prints."""

from __future__ import annotations

import os

import pytest

from imgcheck.extractors.nccl_xml import read_xml

DATA = os.path.join(os.path.dirname(__file__), "data", "nccl_xml")


def data(name: str) -> bytes:
    with open(os.path.join(DATA, name), "rb") as fh:
        return fh.read()


def test_real_topology_files_load():
    nd = read_xml(data("ndv4-topo.xml"), "/opt/microsoft/ndv4-topo.xml", None)
    assert nd.kind == "topology" and nd.error is None and nd.version == 1
    assert nd.gpu_busids == () and nd.cpu_unfilled == ()  # PCI only: NCCL adds the GPUs and NICs it detects
    nc = read_xml(data("ncv4-topo.xml"), "/opt/microsoft/ncv4/topo.xml", None)
    assert nc.error is None and nc.gpu_busids == ("0001:00:00.0", "0002:00:00.0", "0003:00:00.0", "0004:00:00.0")
    assert nc.net_names == ("eth0",)
    p5 = read_xml(data("p5.48xl-topo-head.xml"), "/usr/local/share/aws-ofi-nccl/xml/p5.48xl-topo.xml", None)
    assert p5.error is None and p5.gpu_busids == ("0000:4f:00.0",)
    assert p5.net_names == ("rdmap79s0", "rdmap80s0", "rdmap81s0", "rdmap82s0")


def test_real_graph_file_loads_and_names_its_devices():
    g = read_xml(data("ncv4-graph.xml"), "/opt/microsoft/ncv4/graph.xml", None)
    assert g.kind == "graph" and g.error is None and g.gpu_devs == (0, 1, 2, 3) and g.net_devs == ()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # NCCL's reader has no XML declaration: '<?xml' is a name, then 'version="1.0"?' ends on '?'
        (lambda t: '<?xml version="1.0" encoding="UTF-8"?>\n' + t, "XML Parse : expected >, got '?'"),
        # only ' ', '\n', '\r' may separate elements
        (lambda t: t.replace("\n  <cpu", "\n\t<cpu", 1), "XML Parse error : expecting '<', got '\t'"),
        # an attribute on the next line of its element
        (lambda t: t.replace('" affinity=', '"\n affinity=', 1), "XML Parse : expected >, got '\n'"),
        (lambda t: t.replace('numaid="0"', "numaid=0", 1), "XML Parse : Expected (double) quote."),
        (lambda t: t.replace('</cpu>\n  <cpu numaid="1"', '</pci>\n  <cpu numaid="1"', 1), "XML Mismatch : cpu / pci"),
        (lambda t: t.replace("</system>\n", ""), "XML Parse : unterminated system"),
        (
            lambda t: t.replace('<system version="1">', '<system version="2">'),
            "XML Topology has wrong version 2, 1 needed",
        ),
        (lambda t: t.replace('<system version="1">', "<system>"), "Attribute version of node system not found"),
        (lambda t: t.replace('numaid="2" ', ""), "Attribute numaid of node cpu not found"),
        (lambda t: t.replace("<!--", "") + "<!-- never closed", "XML Parse error : unterminated comment"),
    ],
)
def test_what_nccls_reader_rejects(change, message):
    got = read_xml(change(data("ndv4-topo.xml").decode()).encode(), "/t.xml", None)
    assert got.error == message


def test_comments_and_unknown_elements_are_skipped_as_nccl_skips_them():
    text = data("ncv4-topo.xml").decode()
    text = text.replace(
        '<system version="1">', '<!-- NC A100 v4 -->\n<system version="1">\n  <extra a="1"><x></y></extra>'
    )
    got = read_xml(text.encode(), "/t.xml", None)
    # inside an element no handler follows, any closing tag closes it (NCCL reuses the element's slot)
    assert got.error is None and len(got.gpu_busids) == 4


def test_cpu_attributes_detection_fills_only_for_cpus_it_reaches():
    # the shape of NVIDIA/nccl#1726: a <cpu> without arch/vendor; NCCL fills them only for a CPU its own GPU/NIC
    # detection reaches, else 'Attribute arch of node cpu not found'
    text = data("p5.48xl-topo-head.xml").decode().replace(' arch="x86_64" vendor="AuthenticAMD"', "")
    got = read_xml(text.encode(), "/t.xml", None)
    assert got.error is None and got.cpu_unfilled == ("arch", "vendor")


def test_graph_file_version_and_truncation():
    g = data("ncv4-graph.xml").decode()
    assert read_xml(g.replace('version="1"', 'version="2"').encode(), "/g.xml", None).error == (
        "XML Graph has wrong version 2, 1 needed"
    )
    assert read_xml(g[: len(g) // 2].encode(), "/g.xml", None, graph=True).error in (
        "XML Parse : unterminated graph",
        "XML Parse : unterminated channel",
        "XML Parse : Unexpected EOF",
    )


def test_inspect_reads_the_files_the_image_settings_name(tmp_path):
    # the NC A100 v4 layout of Azure/azhpc-images customizations/ncv4.sh: both files linked under
    # /opt/microsoft/ncv4 and named in /etc/nccl.conf; the image Env names a topology file it lacks
    from imagebuild import Symlink, build_oci, make_layer, write_oci_dir

    from imgcheck import api

    layer = make_layer(
        {
            "opt/microsoft/ncv4-topo.xml": data("ncv4-topo.xml"),
            "opt/microsoft/ncv4-graph.xml": data("ncv4-graph.xml"),
            "opt/microsoft/ncv4/topo.xml": Symlink("/opt/microsoft/ncv4-topo.xml"),
            "opt/microsoft/ncv4/graph.xml": Symlink("/opt/microsoft/ncv4-graph.xml"),
            "etc/nccl.conf": b"NCCL_TOPO_FILE=/opt/microsoft/ncv4/topo.xml\n"
            b"NCCL_GRAPH_FILE=/opt/microsoft/ncv4/graph.xml\nNCCL_IGNORE_CPU_AFFINITY=1\n",
            "root/.nccl.conf": b"NCCL_GRAPH_FILE=graph.xml\n",
        }
    )
    env = ["NCCL_TOPO_FILE=/opt/microsoft/ndv5/topo.xml"]
    oci = write_oci_dir(str(tmp_path / "ncv4"), build_oci([layer], env=env))
    facts = api.inspect_image(f"oci-dir:{oci}")
    refs = {(r.name, r.origin): (r.value, r.exists) for r in facts.nccl_file_refs}
    assert refs[("NCCL_TOPO_FILE", "env")] == ("/opt/microsoft/ndv5/topo.xml", False)
    assert refs[("NCCL_GRAPH_FILE", "/etc/nccl.conf")] == ("/opt/microsoft/ncv4/graph.xml", True)
    assert refs[("NCCL_GRAPH_FILE", "/root/.nccl.conf")] == ("graph.xml", None)  # relative: the working directory
    files = {f.path: f for f in facts.nccl_xml_files}
    assert files["/opt/microsoft/ncv4/graph.xml"].kind == "graph"
    assert files["/opt/microsoft/ncv4/graph.xml"].gpu_devs == (0, 1, 2, 3)
    assert files["/opt/microsoft/ncv4/topo.xml"].kind == "topology"
    assert files["/opt/microsoft/ncv4/topo.xml"].error is None
