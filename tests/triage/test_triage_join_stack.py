"""Issue 35 joins: the rest of the stack's failures read against image and node facts (triage/joins/efa.py,
nccl_copies.py, gpu_generation.py), on real log lines."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
from test_triage_join import image, log  # the same synthetic image facts and log paths

from imgcheck.formats.json_format import render_facts
from imgcheck.model.image import Libfabric, Nccl, NcclNetPlugin
from imgcheck.triage import triage

HERE = os.path.dirname(__file__)


@pytest.fixture
def facts_file(tmp_path):
    def write(facts) -> str:
        p = tmp_path / "facts.json"
        p.write_text(render_facts(facts))
        return f"facts:{p}"

    return write


def notes(report):
    return {n.topic: n for n in report.join.notes}


def test_undefined_nccl_symbol_vs_the_images_nccl_copies(facts_file):
    two = dataclasses.replace(
        image(),
        nccl=(
            Nccl("2.18.1", path="/usr/lib/x86_64-linux-gnu/libnccl.so.2.18.1", origin="dpkg"),
            Nccl("2.19.3", path="/usr/local/lib/python3.10/dist-packages/nvidia/nccl/lib/libnccl.so.2", origin="pip"),
        ),
    )
    r = triage([log("pytorch-120186-undefined-nccl-symbol.log")], image=facts_file(two))
    n = notes(r)["nccl-copies"]
    assert n.status == "explains" and "2.18.1" in n.text and "2.19.3" in n.text
    r = triage([log("pytorch-120186-undefined-nccl-symbol.log")], image=facts_file(image()))
    assert notes(r)["nccl-copies"].status == "contradicts"  # one copy: the other came from outside the image


def _node_with_gpu(tmp_path, name: str) -> str:
    with open(os.path.join(HERE, "nodes", "no-peermem.json"), encoding="utf-8") as fh:
        doc = json.load(fh)
    doc["gpu"]["gpus"] = [{"index": 0, "name": name}]
    p = tmp_path / "node.json"
    p.write_text(json.dumps(doc))
    return str(p)


def test_maxsharedmem_joins_the_gpu_generation(tmp_path):
    """nccl-tests#287: NCCL 2.25.1 on RTX 5090; the nccl_gpu_generations row for sm_120 says 2.26.2."""
    r = triage([log("nccl-tests-287-maxsharedmem-5090.log")])
    d = r.diagnoses[0]
    assert d.signature == "NCCL-MAXSHAREDMEM" and d.causes[0].id == "nccl-too-old-for-gpu"
    assert any("2.26.2" in b for b in d.causes[0].because)
    r = triage(
        [log("nccl-tests-287-maxsharedmem-5090.log")], node_facts=_node_with_gpu(tmp_path, "NVIDIA GeForce RTX 5090")
    )
    n = notes(r)["gpu-generation"]
    assert n.status == "explains" and "2.26.2" in n.text
    r = triage([log("nccl-tests-287-maxsharedmem-5090.log")], node_facts=_node_with_gpu(tmp_path, "NVIDIA H100"))
    assert notes(r)["gpu-generation"].status == "consistent"  # the node's GPU is not the generation in question


def test_efa_lines_vs_the_images_plugin_and_libfabric(facts_file):
    r = triage([log("libfabric-12136-efa-create-ah.log")], image=facts_file(image()))
    assert notes(r)["efa-stack"].status == "explains"  # no NCCL net plugin in the image
    with_plugin = dataclasses.replace(
        image(),
        nccl_net_plugins=(
            NcclNetPlugin(
                path="/opt/amazon/ofi-nccl/lib/libnccl-net.so",
                name="libnccl-net.so",
                loaded=True,
                project="aws-ofi-nccl",
                version="1.13.2-aws",
            ),
        ),
        libfabric=Libfabric(version="1.22.0", path="/opt/amazon/efa/lib/libfabric.so.1"),
    )
    n = notes(triage([log("libfabric-12136-efa-create-ah.log")], image=facts_file(with_plugin)))["efa-stack"]
    assert n.status == "consistent" and "aws-ofi-nccl 1.13.2-aws" in n.text and "1.22.0" in n.text
