"""A 10,000-node fleet in 20 distinct configurations is evaluated once per configuration."""

from __future__ import annotations

import dataclasses

from fleetgen import fleet

from imgcheck.engine import REQUIRED_ROWS, build_report
from imgcheck.engine.report import evaluate_fleet
from imgcheck.formats.report_formats import render
from imgcheck.matrix import load_matrix
from imgcheck.model.image import Cuda, ImageFacts, Libibverbs, Nccl, Provider, RdmaFacts


def ngc_like_image() -> ImageFacts:
    lib = Libibverbs(
        version="1.14.47.0",
        rdma_core="47.0",
        private_abi=34,
        has_reg_mr_iova2=True,
        has_reg_dmabuf_mr=True,
        symbol_versions=("IBVERBS_1.8", "IBVERBS_1.12", "IBVERBS_PRIVATE_34"),
        path="/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.47.0",
    )
    return ImageFacts(
        reference="registry.example/team/trainer:abc",
        rdma=RdmaFacts(
            libibverbs=lib,
            flavor="inbox",
            providers=(
                Provider("mlx5", 34, "/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so", private_abi_needed=34),
            ),
        ),
        nccl=(Nccl("2.21.5", "/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2", origin="pip"),),
        cuda=Cuda(version="12.4.1", origin="version.json"),
        env={"NCCL_IB_RETRY_CNT": "16"},
    )


def test_ten_thousand_nodes_twenty_configurations():
    matrix = load_matrix(None, required=REQUIRED_ROWS)
    nodes = fleet(10_000, 20)
    result = evaluate_fleet(ngc_like_image(), nodes, matrix)
    assert result.evaluations == 20
    # the Env trap applies to every node: one finding naming all 10,000
    retry = [f for f in result.findings if f.id == "ENV-NCCL-IB-RETRY-CNT"]
    assert len(retry) == 1 and len(retry[0].nodes) == 10_000
    # every node name appears in the findings or unknowns exactly as given, no duplicates
    for f in result.findings:
        assert len(set(f.nodes)) == len(f.nodes)
    # the memlock rule separates the fleet by configuration: 8192 and 65536 KiB nodes (at or below the largest
    # limit reported failing) are exactly half
    memlock = [f for f in result.findings if f.id == "MEMLOCK-TOO-LOW" and f.severity == "error"]
    assert sum(len(f.nodes) for f in memlock) == 5_000


def test_identity_fields_do_not_split_groups():
    matrix = load_matrix(None, required=REQUIRED_ROWS)
    nodes = fleet(200, 1)
    assert evaluate_fleet(ngc_like_image(), nodes, matrix).evaluations == 1
    changed = nodes[:-1] + [
        dataclasses.replace(nodes[-1], kernel=dataclasses.replace(nodes[-1].kernel, release="6.8.0-1"))
    ]
    assert evaluate_fleet(ngc_like_image(), changed, matrix).evaluations == 2


def test_large_fleet_report_renders_in_every_format():
    matrix = load_matrix(None, required=REQUIRED_ROWS)
    report = build_report(ngc_like_image(), fleet(2_000, 20), matrix)
    for fmt in ("json", "sarif", "junit", "markdown", "table"):
        text = render(report, fmt)
        assert "ENV-NCCL-IB-RETRY-CNT" in text
    assert len(render(report, "markdown")) < 65_536  # a GitHub comment
