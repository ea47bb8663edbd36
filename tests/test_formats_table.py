"""The terminal table: verdict first, then per finding the predicted error, why, evidence, fixes."""

from __future__ import annotations

import dataclasses

import pytest
from formats_sample import sample_report

from imgcheck.errors import UsageError
from imgcheck.formats.report_formats import REPORT_FORMATS, render
from imgcheck.model.report import Report


def test_plain_table_leads_with_verdict_and_orders_each_finding():
    text = render(sample_report(), "table", color=False, verbose=True)
    assert "\x1b[" not in text  # no escape codes when not a terminal
    first = text.splitlines()[0]
    assert first.startswith("FAIL registry.example/team/trainer:abc on 3 nodes: 1 error, 1 warning")
    block = text[text.index("ERROR RDMA-DMABUF-UNSUPPORTED") : text.index("WARNING GPU-PEERMEM-INBOX")]
    # order inside a finding: nodes, predicted error, why, evidence (path + short layer), fixes, sources
    keys = [
        "nodes: gpu-a01, gpu-a02",
        "predicted error:",
        "[0] NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Operation not supported",
        "why (reported):",
        "evidence:",
        "image.rdma.libibverbs.has_reg_dmabuf_mr = yes  /usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0"
        "  (layer fd5e8675fe85)",
        "fix:",
        "NCCL_DMABUF_ENABLE=0",
        "sources:",
        "https://github.com/NVIDIA/nccl/issues/778",
    ]
    positions = [block.index(k) for k in keys]
    assert positions == sorted(positions)
    # errors before warnings before info; recommendations and unknowns at the end
    order = [text.index(k) for k in ("ERROR ", "WARNING ", "INFO ", "Recommendations", "Unknown (could not")]
    assert order == sorted(order)
    assert "? NODE-MEMLOCK-LOW [gpu-b01]: node.limits.memlock_kib is unknown" in text


def test_plain_table_does_not_wrap_long_lines():
    text = render(sample_report(), "table", verbose=True)
    why = next(line for line in text.splitlines() if line.startswith("  why (reported):"))
    assert why.endswith("the kernel answers EOPNOTSUPP.")


def test_color_table_has_ansi_and_keeps_bracketed_text():
    text = render(sample_report(), "table", color=True)
    assert "\x1b[" in text
    # "[0]" in the NCCL line must not be eaten as rich markup
    assert "[0] NCCL WARN" in text


def test_ok_report_says_so():
    report = dataclasses.replace(sample_report(), findings=(), unknowns=(), recommendations=(), verdict="ok")
    text = render(report, "table")
    assert text.startswith("OK registry.example/team/trainer:abc on 3 nodes: 0 errors, 0 warnings")
    assert "No compatibility problems found." in text


def test_every_declared_format_renders_and_unknown_is_a_usage_error():
    report = sample_report()
    for fmt in REPORT_FORMATS:
        assert render(report, fmt).strip()
    with pytest.raises(UsageError):
        render(report, "yaml")


def test_report_without_nodes():
    report = Report(image=sample_report().image)
    assert render(report, "table").startswith("OK registry.example/team/trainer:abc on no node facts")


def _with_suppressed(report):
    fields = {f.name for f in dataclasses.fields(Report)}
    if "suppressed" not in fields:
        pytest.skip("Report.suppressed is not in this tree yet")
    from imgcheck.model.report import Suppression

    return dataclasses.replace(
        report,
        suppressed=(
            Suppression(rule="GPU-PEERMEM-INBOX", node="gpu-b01", reason="bandwidth tests run on a-nodes only"),
            Suppression(rule="ENV-NCCL-IB-RETRY-CNT", node=None, reason=""),
        ),
    )


def test_ignored_rules_are_shown_with_their_reason_in_every_format():
    report = _with_suppressed(sample_report())
    table = render(report, "table")
    assert "Ignored (--ignore, ignore file)" in table
    assert "- GPU-PEERMEM-INBOX@gpu-b01: bandwidth tests run on a-nodes only" in table
    assert "- ENV-NCCL-IB-RETRY-CNT on every node: no reason given" in table
    md = render(report, "markdown")
    assert "- `GPU-PEERMEM-INBOX`@gpu-b01: bandwidth tests run on a-nodes only" in md
    import json

    props = json.loads(render(report, "sarif"))["runs"][0]["properties"]
    assert props["suppressed"][0] == {
        "rule": "GPU-PEERMEM-INBOX",
        "node": "gpu-b01",
        "reason": "bandwidth tests run on a-nodes only",
        "expires": None,
        "origin": None,
    }
    assert json.loads(render(report, "json"))["suppressed"][1]["node"] is None


def test_color_table_wraps_to_the_terminal_width(monkeypatch):
    monkeypatch.setenv("COLUMNS", "72")  # shutil.get_terminal_size reads COLUMNS first
    text = render(sample_report(), "table", color=True)
    import re

    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert max(len(line.rstrip()) for line in plain.splitlines()) <= 72


def test_default_is_a_summary_per_finding_details_with_verbose():
    report = sample_report()
    summary, verbose = render(report, "table"), render(report, "table", verbose=True)
    block = summary[summary.index("ERROR RDMA-DMABUF-UNSUPPORTED") : summary.index("WARNING GPU-PEERMEM-INBOX")]
    assert "nodes: gpu-a01, gpu-a02" in block and "[0] NCCL WARN Call to ibv_reg_dmabuf_mr failed" in block
    assert "fix: " in block  # the first fix, on one line
    for detail in ("why (", "evidence:", "sources:"):
        assert detail not in summary and detail in verbose
    assert "-v adds why" in summary and "-v adds why" not in verbose
    assert len(summary.splitlines()) < len(verbose.splitlines()) / 1.5


def test_a_finding_on_several_node_groups_is_one_block():
    """The engine gives one finding per node group (mechanism and evidence name the group's facts)."""
    report = sample_report()
    info = next(f for f in report.findings if f.severity == "info")
    groups = [
        dataclasses.replace(info, nodes=(f"grp{i}-n1", f"grp{i}-n2"), mechanism=f"{info.mechanism} [{i}]")
        for i in range(3)
    ]
    rest = tuple(f for f in report.findings if f is not info)
    text = render(dataclasses.replace(report, findings=rest + tuple(groups)), "table")
    assert text.count(f"INFO {info.id}") == 1
    assert "nodes: grp0-n1, grp0-n2, grp1-n1, grp1-n2, grp2-n1, grp2-n2" in text
    verbose = render(dataclasses.replace(report, findings=rest + tuple(groups)), "table", verbose=True)
    assert verbose.count(f"INFO {info.id}") == 1
    assert all(f"on grp{i}-n1, grp{i}-n2:" in verbose and f"[{i}]" in verbose for i in range(3))


def test_cli_summary_and_verbose_on_the_example(capsys):
    """`imgcheck IMAGE -o table` summarises; `-v` gives the details (the example image, its example node)."""
    from pathlib import Path

    from imgcheck.cli.main import main

    root = Path(__file__).resolve().parents[1]
    argv = [
        f"oci-dir:{root / 'examples' / 'bookworm-rdma'}",
        "--node-facts",
        str(root / "examples" / "nodes" / "inbox-535-proprietary.json"),
        "-o",
        "table",
    ]
    assert main(argv) == 1
    summary = capsys.readouterr().out
    assert main(argv + ["-v"]) == 1
    verbose = capsys.readouterr().out
    assert "ERROR ENV-NCCL-IB-RETRY-CNT" in summary and "why (verified)" not in summary
    assert "why (verified)" in verbose and "image.env.NCCL_IB_RETRY_CNT = 16" in verbose
