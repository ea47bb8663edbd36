"""aws-ofi-nccl built without its AWS platform code (OFI-PLUGIN-NO-AWS-PLATFORM). From 1.6.0 the code is compiled only
with --enable-platform-aws or when configure runs on EC2 (aws/aws-ofi-nccl m4/ax_platform_aws.m4); the extractor
reads it from the plugin's own log string ("Configuring AWS-specific options", src/platform-aws.c), the rule weighs it
on a node with EFA. The node is the p5 of the incident awsome-distributed-ai-278 (EFA devices as the thread lists)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess

import pytest
from engine_facts import committed_facts, ids, matrix, node, unknown_rules, with_nccl

from imgcheck.engine import evaluate
from imgcheck.extractors.fabric import _plugin_identity
from imgcheck.model.image import NcclNetPlugin
from imgcheck.model.node_io import parse_node_facts

RULE = "OFI-PLUGIN-NO-AWS-PLATFORM"
HERE = os.path.dirname(__file__)


def efa_node():
    with open(os.path.join(HERE, "incidents", "cases.json")) as fh:
        cases = json.load(fh)["cases"]
    doc = next(c for c in cases if c["id"] == "awsome-distributed-ai-278-efa-1.26-nccl-2.19")["node"]
    return parse_node_facts(doc, "p5")


def image_with_plugin(version, aws_platform):
    plugin = NcclNetPlugin(
        path="/opt/aws-ofi-nccl/lib/libnccl-net.so",
        name="libnccl-net.so",
        loaded=True,
        project="aws-ofi-nccl",
        version=version,
        aws_platform=aws_platform,
    )
    return dataclasses.replace(with_nccl(committed_facts("bookworm"), "2.21.5"), nccl_net_plugins=(plugin,))


def judge(image, n):
    result = evaluate(image, n, matrix())
    return [f for f in result.findings if f.id == RULE], [u for u in result.unknowns if u.rule == RULE]


def test_plugin_built_off_ec2_on_efa_is_reported():
    (f,), _ = judge(image_with_plugin("1.9.1", False), efa_node())
    assert f.severity == "warning" and "--enable-platform-aws" in f.fixes[0]
    assert any(e.fact.endswith(".aws_platform") and e.value is False for e in f.evidence)


def test_aws_build_older_release_and_non_efa_node_are_decided():
    assert judge(image_with_plugin("1.9.1-aws", True), efa_node()) == ([], [])
    assert judge(image_with_plugin("1.4.0", False), efa_node()) == ([], [])  # -aws branches then: not read from strings
    result = evaluate(image_with_plugin("1.9.1", False), node("mofed-23.10-open-550-peermem"), matrix())
    assert RULE not in ids(result) and RULE not in unknown_rules(result)


def test_unread_strings_are_asked():
    _, (u,) = judge(image_with_plugin("1.9.1", None), efa_node())
    assert "not read" in u.reason


def gcc_plugin(tmp_path, source: str) -> bytes:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    src = tmp_path / "p.c"
    src.write_text(source)
    out = tmp_path / "libnccl-net.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(src)], check=True)
    return out.read_bytes()


def test_extractor_reads_the_platform_string(tmp_path):
    """A gcc-built library with aws-ofi-nccl's PACKAGE_STRING log line, with and without platform-aws's line."""
    common = '#include <stdio.h>\nint init(void) { return printf("NET/OFI Initializing aws-ofi-nccl 1.9.1"); }\n'
    aws = common + 'int plat(void) { return printf("Configuring AWS-specific options"); }\n'
    assert _plugin_identity(gcc_plugin(tmp_path, common))[:2] == ("aws-ofi-nccl", "1.9.1")
    assert b"Configuring AWS-specific options" in gcc_plugin(tmp_path, aws)
