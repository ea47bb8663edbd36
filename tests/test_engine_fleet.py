"""Reports for many nodes: identical nodes are evaluated once, findings name every node they apply to."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import committed_facts, matrix, node, replace_in, with_nccl

from imgcheck.engine import build_report, evaluate_fleet, group_nodes, parse_ignore
from imgcheck.errors import BadInputError
from imgcheck.model.report import Suppression


@pytest.fixture(scope="module")
def image():
    return with_nccl(committed_facts("bookworm"), "2.21.5", env={"NCCL_IB_RETRY_CNT": "16"})


def clones(base: str, count: int, prefix: str):
    n = node(base)
    return [
        dataclasses.replace(
            n,
            name=f"{prefix}{i:03d}",
            collected_at=f"2026-11-30T08:{i % 60:02d}:00Z",
            labels={**n.labels, "rack": str(i % 4)},
        )
        for i in range(count)
    ]


def test_identical_nodes_are_evaluated_once(image):
    fleet = clones("inbox-5.15-proprietary-535", 40, "inbox-") + clones("doca-24.10-open-580-peermem", 25, "doca-")
    result = evaluate_fleet(image, fleet, matrix())
    assert result.evaluations == 2
    gdr = next(f for f in result.findings if f.id == "GDR-PEERMEM-MISSING")
    assert len(gdr.nodes) == 40 and all(n.startswith("inbox-") for n in gdr.nodes)
    # the Env trap is the same finding on both groups: one finding naming all 65 nodes
    env = [f for f in result.findings if f.id == "ENV-NCCL-IB-RETRY-CNT"]
    assert len(env) == 1 and len(env[0].nodes) == 65


def test_a_differing_fact_splits_the_group(image):
    fleet = clones("inbox-5.15-proprietary-535", 3, "n")
    fleet[1] = replace_in(fleet[1], "gpu.kernel_module", "open")
    result = evaluate_fleet(image, fleet, matrix())
    assert result.evaluations == 2
    gdr = next(f for f in result.findings if f.id == "GDR-PEERMEM-MISSING")
    assert gdr.nodes == ("n000", "n002")
    assert len(group_nodes(fleet)) == 2


def test_report_contents(image):
    nodes = [node("inbox-5.15-proprietary-535"), node("mofed-23.10-open-550-peermem"), node("handwritten-minimal")]
    report = build_report(image, nodes, matrix(), generated_at="2026-12-02T12:00:00+00:00")
    m = matrix()
    assert report.matrix.version == m.version and report.matrix.digest == m.digest
    assert report.matrix.digest.startswith("sha256:") and len(report.matrix.digest) == 71
    assert report.verdict == "fail"  # ENV-NCCL-IB-RETRY-CNT is an error
    assert report.tool_version and report.generated_at == "2026-12-02T12:00:00+00:00"
    assert [n.name for n in report.nodes] == ["gpu-inbox-515", "gpu-mofed2310", "legacy-07"]
    severities = [f.severity for f in report.findings]
    assert severities == sorted(severities, key={"error": 0, "warning": 1, "info": 2}.get)
    # the hand-written node leaves most facts out: its unknowns name it
    assert any("legacy-07" in u.nodes for u in report.unknowns)
    for f in report.findings:
        assert f.sources and f.confidence in ("verified", "reported", "vendor-guidance", "hypothesis")
        assert f.nodes


def test_ignore_everywhere_and_on_one_node(image):
    nodes = clones("inbox-5.15-proprietary-535", 2, "n")
    m = matrix()
    everywhere = build_report(
        image, nodes, m, suppressions=(parse_ignore("ENV-NCCL-IB-RETRY-CNT", "fixed in next image"),)
    )
    assert "ENV-NCCL-IB-RETRY-CNT" not in [f.id for f in everywhere.findings]
    assert everywhere.verdict == "warn"
    assert everywhere.suppressed == (Suppression("ENV-NCCL-IB-RETRY-CNT", None, "fixed in next image"),)
    one = build_report(image, nodes, m, suppressions=(parse_ignore("GDR-PEERMEM-MISSING@n000", "test node"),))
    gdr = next(f for f in one.findings if f.id == "GDR-PEERMEM-MISSING")
    assert gdr.nodes == ("n001",)


def test_duplicate_node_names(image):
    n = node("inbox-6.8-open-570")
    report = build_report(image, [n, n], matrix())  # the same file twice
    assert len(report.nodes) == 1
    with pytest.raises(BadInputError, match="gpu-inbox-68"):
        build_report(image, [n, replace_in(n, "gpu.kernel_module", "proprietary")], matrix())


def test_bad_ignore_spec():
    with pytest.raises(BadInputError):
        parse_ignore("@node", "why")
