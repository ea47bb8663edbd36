"""NCCL-NET-PLUGIN-API-MISMATCH: the ncclNetPlugin_vN versions an NCCL release looks up (catalogs/nccl_plugin_api.json)
against those an aws-ofi-nccl release exports (net_plugin_exports.json), both read at the release tags by
tools/nccl/gen_plugin_api.py; the rows are re-read from the mirrors when they are here."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

from imgcheck.engine import evaluate
from imgcheck.matrix import load_matrix
from imgcheck.model.image_io import parse_image_facts
from imgcheck.model.node_io import parse_node_facts

MATRIX = load_matrix()
RULE = "NCCL-NET-PLUGIN-API-MISMATCH"
EFA_NODE = {"name": "p4d", "rdma": {"stack": "inbox", "devices": [{"name": "rdmap16s27", "driver": "efa"}]}}
TOOLS = os.path.join(os.path.dirname(__file__), "..", "tools", "nccl")
NCCL_MIRROR = os.environ.get("NCCL_MIRROR", "/work/.mirror/NVIDIA+nccl/repo")
OFI_MIRROR = os.environ.get("OFI_MIRROR", "/work/.mirror/aws+aws-ofi-nccl/repo")


def _image(nccl: str, plugin: str, env: dict | None = None) -> dict:
    # the layout of an EFA image: NCCL from the distro package, aws-ofi-nccl under /opt/amazon/ofi-nccl
    return {
        "reference": "efa-image",
        "platform": "linux/amd64",
        "nccl": [{"version": nccl, "origin": "library", "path": f"/usr/lib/x86_64-linux-gnu/libnccl.so.{nccl}"}],
        "nccl_net_plugins": [
            {
                "path": "/opt/amazon/ofi-nccl/lib/libnccl-net.so",
                "name": "libnccl-net.so",
                "loaded": True,
                "project": "aws-ofi-nccl",
                "version": plugin,
            }
        ],
        "env": env or {},
    }


def _run(image: dict):
    result = evaluate(parse_image_facts(image, "image"), parse_node_facts(EFA_NODE, "node"), MATRIX)
    return [f for f in result.findings if f.id == RULE], [u for u in result.unknowns if u.rule == RULE]


def test_a_plugin_newer_than_the_nccl_is_named_with_both_version_lists():
    # aws-ofi-nccl 1.19.0 dropped ncclNetPlugin_v2..v5; NCCL 2.12.12 looks up v5 and v4 only
    found, _ = _run(_image("2.12.12", "1.19.0"))
    assert found and found[0].severity == "warning"
    assert "v6, v7, v8, v9, v10, v11" in found[0].title and "v4, v5" in found[0].title
    assert "newer" in found[0].title and "TCP sockets" in found[0].mechanism


def test_a_plugin_release_sharing_one_version_is_fine():
    for nccl, plugin in (("2.12.12", "1.18.0"), ("2.30.7", "1.7.4-aws"), ("2.8.4", "1.9.1-aws")):
        found, asked = _run(_image(nccl, plugin))
        assert not found and not asked, (nccl, plugin)


def test_nccl_net_naming_the_plugin_makes_it_an_init_failure():
    found, _ = _run(_image("2.12.12", "1.19.0", env={"NCCL_NET": "AWS Libfabric"}))
    assert found and found[0].severity == "error"


def test_a_plugin_built_against_nccl_headers_or_a_newer_nccl_is_asked():
    _, asked = _run(_image("2.30.7", "1.4.0-aws"))
    assert asked and "headers it was built against" in asked[0].reason
    newest = max((r["nccl"] for r in MATRIX.rows("nccl_plugin_api")), key=lambda v: tuple(map(int, v.split("."))))
    major, minor, _ = newest.split(".")
    _, asked = _run(_image(f"{major}.{int(minor) + 1}.1", "1.21.1"))
    assert asked and "newer than the releases read" in asked[0].reason


def _generator():
    sys.path.insert(0, TOOLS)
    try:
        spec = importlib.util.spec_from_file_location("gen_plugin_api", os.path.join(TOOLS, "gen_plugin_api.py"))
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(TOOLS)
    return module


@pytest.mark.skipif(
    not (os.path.isdir(NCCL_MIRROR) and os.path.isdir(OFI_MIRROR)), reason="NCCL / aws-ofi-nccl mirrors not fetched"
)
def test_rows_read_again_from_the_tags_match_the_catalogs(monkeypatch):
    monkeypatch.setenv("NCCL_MIRROR", NCCL_MIRROR)
    gen = _generator()
    assert gen.nccl_rows() == [dict(r) for r in MATRIX.rows("nccl_plugin_api")]
    assert gen.ofi_rows(OFI_MIRROR) == [dict(r) for r in MATRIX.rows("net_plugin_exports")]
