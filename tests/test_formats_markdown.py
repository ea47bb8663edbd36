"""Markdown PR comment, parsed with a real CommonMark+tables parser (markdown-it-py, which rich already needs)."""

from __future__ import annotations

import dataclasses

from formats_sample import sample_report
from markdown_it import MarkdownIt

from imgcheck.formats.markdown import MAX_CHARS
from imgcheck.formats.report_formats import render
from imgcheck.model.report import Finding, Report


def _tables(text: str) -> list[list[list[str]]]:
    """Every table as rows of cell texts (header first)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables, rows, row, cell = [], None, None, None
    for tok in tokens:
        if tok.type == "table_open":
            rows = []
        elif tok.type == "tr_open":
            row = []
        elif tok.type in ("th_open", "td_open"):
            cell = ""
        elif tok.type == "inline" and cell is not None:
            cell += "".join(child.content for child in tok.children or [])
        elif tok.type in ("th_close", "td_close"):
            row.append(cell)
            cell = None
        elif tok.type == "tr_close":
            rows.append(row)
        elif tok.type == "table_close":
            tables.append(rows)
    return tables


def test_verdict_then_node_table_then_details():
    text = render(sample_report(), "markdown")
    assert text.startswith("### imgcheck: :x: **FAIL** `registry.example/team/trainer:abc` on 3 nodes\n")
    nodes_table = _tables(text)[0]
    assert nodes_table[0] == ["Nodes", "Result", "Findings", "Unknown"]
    assert nodes_table[1] == ["gpu-a01, gpu-a02", ":x: fail", "RDMA-DMABUF-UNSUPPORTED", "-"]
    assert nodes_table[2] == ["gpu-b01", ":warning: warn", "GPU-PEERMEM-INBOX", "NODE-MEMLOCK-LOW"]
    assert text.count("<details>") == text.count("</details>") == 3
    block = text[text.index("<details>") : text.index("</details>")]
    order = [
        block.index(k)
        for k in (
            "<summary>",
            "**Predicted error:**",
            "**Why** (reported)",
            "| Fact | Value | Path or origin | Layer |",
            "**Fix:**",
            "**Sources:**",
        )
    ]
    assert order == sorted(order)
    evidence = _tables(text)[1]
    assert evidence[1] == [
        "image.rdma.libibverbs.has_reg_dmabuf_mr",
        "yes",
        "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0",
        "fd5e8675fe85",
    ]


def test_text_cannot_break_the_table_or_inject_html():
    finding = Finding(
        id="X-1",
        severity="error",
        title="a | b <script>",
        predicted_error="x ``` y",
        mechanism="m | n",
        confidence="hypothesis",
        nodes=("n|1",),
    )
    report = Report(image=sample_report().image, findings=(finding,), verdict="fail")
    text = render(report, "markdown")
    assert "<script>" not in text
    table = _tables(text)[0]
    assert all(len(row) == 4 for row in table)
    assert table[1][0] == "n|1"


def test_large_fleet_stays_under_comment_limit():
    findings = tuple(
        Finding(
            id=f"RULE-{i}",
            severity="error",
            title="t" * 200,
            predicted_error="e" * 500,
            mechanism="m" * 2000,
            confidence="reported",
            fixes=("f" * 300,),
            nodes=tuple(f"node{i}-{j}" for j in range(200)),
        )
        for i in range(60)
    )
    text = render(dataclasses.replace(sample_report(), findings=findings), "markdown")
    assert len(text) <= MAX_CHARS
    assert "Details omitted" in text
    assert "and 190 more" in text  # node groups list 10 names


def test_ok_report():
    report = dataclasses.replace(sample_report(), findings=(), unknowns=(), recommendations=(), verdict="ok")
    text = render(report, "markdown")
    assert text.startswith("### imgcheck: :white_check_mark: **OK**")
    assert "No compatibility problems found." in text


def test_a_finding_on_several_node_groups_is_one_details_block():
    import dataclasses

    from formats_sample import sample_report

    from imgcheck.formats.report_formats import render

    report = sample_report()
    first = report.findings[0]
    other = dataclasses.replace(first, nodes=("gpu-c01",), mechanism=first.mechanism + " (group c)")
    text = render(dataclasses.replace(report, findings=(first, other) + report.findings[1:]), "markdown")
    assert text.count("<details>") == len(report.findings)
    assert "1 error," in text
