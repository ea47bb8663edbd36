"""Markdown for a pull-request / merge-request comment (GitHub and GitLab flavoured).

Verdict line first, then a table of nodes (nodes with the same outcome share a row, so a fleet of
thousands stays readable), then one collapsible <details> per finding with the predicted error,
mechanism, evidence and fixes. Kept under GitHub's 65,536-character comment limit.
"""

from __future__ import annotations

import html
import re

from ..model.report import (
    Finding,
    Report,
    Unknown,
    deciding_questions,
    finding_rank,
    report_outcome,
)
from .collapse import collapse
from .report_text import condition_words, decides_words, rule_list, short_layer, unknown_layout, value_text
from .safe_text import printable

MAX_CHARS = 65000  # GitHub rejects comments longer than 65,536 characters
_ICON = {"error": ":x:", "warning": ":warning:", "info": ":information_source:"}
_VERDICT = {
    "fail": ":x: **FAIL**",
    "incomplete": ":grey_question: **INCOMPLETE**",
    "warn": ":warning: **WARN**",
    "ok": ":white_check_mark: **OK**",
}
# Characters that start markup; "_" is left alone (GFM does not emphasise inside words like NCCL_IB_HCA).
_SPECIAL = re.compile(r"([\\`*\[\]<|])")


def md(text: str) -> str:
    """Escape text for Markdown/HTML so a title or value cannot break a table or inject markup."""
    return _SPECIAL.sub(r"\\\1", printable(text.replace("\n", " ")))


def code(text: str) -> str:
    """Inline code that survives backticks and pipes inside table cells."""
    text = printable(text.replace("\n", " ")).replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _names(nodes: list[str] | tuple[str, ...], limit: int = 10) -> str:
    shown = ", ".join(md(n) for n in nodes[:limit])
    return shown + (f" and {len(nodes) - limit} more" if len(nodes) > limit else "")


def _findings_sorted(report: Report) -> list[Finding]:
    return sorted(report.findings, key=lambda f: (*finding_rank(f), f.id))


def _node_rows(report: Report) -> list[tuple[str, list[str], list[Finding], list[Unknown]]]:
    """(outcome, nodes, findings, unknowns) per group of nodes with the same findings and unknowns."""
    # (finding ids, unknown rules) -> nodes
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    detail: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[list[Finding], list[Unknown]]] = {}
    by_node: dict[str, tuple[list[Finding], list[Unknown]]] = {n.name: ([], []) for n in report.nodes}
    for f in _findings_sorted(report):  # one pass over findings, not one per node: fleets are large
        for n in f.nodes:
            by_node.setdefault(n, ([], []))[0].append(f)
    for u in report.unknowns:
        for n in u.nodes:
            by_node.setdefault(n, ([], []))[1].append(u)
    for name, (fs, us) in by_node.items():
        key = (tuple(f.id for f in fs), tuple(u.rule for u in us))
        groups.setdefault(key, []).append(name)
        detail[key] = (fs, us)
    rows = []
    for key, nodes in groups.items():
        fs, us = detail[key]
        severities = {f.severity for f in fs if not f.assumes}  # a conditional finding makes no node fail
        outcome = "fail" if "error" in severities else "warn" if "warning" in severities else "ok"
        rows.append((outcome, nodes, fs, us))
    return sorted(rows, key=lambda r: ({"fail": 0, "warn": 1, "ok": 2}[r[0]], r[1][0]))


def _finding_details(finding: Finding) -> list[str]:
    out = [
        "<details>",
        # inside HTML Markdown escapes are not processed: escape as HTML
        f"<summary>{_ICON.get(finding.severity, '')}{' (conditional)' if finding.assumes else ''} "
        f"<b>{html.escape(printable(finding.id))}</b>: "
        f"{html.escape(printable(finding.title))}</summary>",
        "",
    ]
    if finding.assumes:
        out += [f"**Conditional:** {md(condition_words(finding.assumes))}", ""]
    if finding.nodes:
        out.append(f"**Nodes:** {_names(finding.nodes, 50)}")
        out.append("")
    if finding.unshown:
        out += [f"**Not shown to hold:** {md('; '.join(finding.unshown))}", ""]
    if finding.predicted_error:
        out += [
            "**Predicted error:**",
            "",
            "```text",
            printable(finding.predicted_error, keep_newlines=True).replace("```", "'''"),
            "```",
            "",
        ]
    out += [f"**Why** ({md(finding.confidence)}): {md(finding.mechanism)}", ""]
    if finding.evidence:
        out += ["| Fact | Value | Path or origin | Layer |", "|---|---|---|---|"]
        for ev in finding.evidence:
            layer = short_layer(ev.layer)
            value = value_text(ev.value)
            where = ev.path or ev.origin  # a file, or where a non-file fact was read (node facts file, label)
            out.append(
                f"| {code(ev.fact)} | {code(value)} | {code(where) if where else ''} | {code(layer) if layer else ''} |"
            )
        out.append("")
    if finding.fixes:
        out.append("**Fix:**")
        out += [f"- {md(fix)}" for fix in finding.fixes]
        out.append("")
    if finding.sources:
        out.append("**Sources:** " + ", ".join(f"<{s}>" for s in finding.sources))
        out.append("")
    out += ["</details>", ""]
    return out


def render_markdown(report: Report) -> str:
    image = report.image
    problems = [p.finding for p in collapse(report.findings)]  # one per rule and title, all its nodes
    errors = sum(1 for f in problems if f.severity == "error" and not f.assumes)
    warnings = sum(1 for f in problems if f.severity == "warning" and not f.assumes)
    conditional = sum(1 for f in problems if f.assumes)
    nodes = f"{len(report.nodes)} node{'s' if len(report.nodes) != 1 else ''}" if report.nodes else "no node facts"
    outcome = report_outcome(report)
    head = [
        f"### imgcheck: {_VERDICT.get(outcome, outcome)} {code(image.reference)} on {nodes}",
        "",
        f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"
        + (f", {conditional} conditional" if conditional else "")
        + (f", {len(report.unknowns)} unknown" if report.unknowns else "")
        + (f" · digest {code(image.digest)}" if image.digest else "")
        + (f" · platform {code(image.platform)}" if image.platform else ""),
        "",
    ]
    table: list[str] = []
    questions = deciding_questions(report.unknowns)
    if questions:  # first: the verdict is only as good as these answers
        table += ["Checks that could give an error could not be decided; the questions that decide them:", ""]
        table += [f"- {md(q)} ({md(rule_list(rules))})" for q, rules in questions]
        table.append("")
    elif not report.findings:
        undecided = (
            f" ({len(report.unknowns)} lesser checks could not be decided, see below)" if report.unknowns else ""
        )
        table += [f"No compatibility problems found{undecided}.", ""]
    rows = _node_rows(report)
    if rows:
        table += ["| Nodes | Result | Findings | Unknown |", "|---|---|---|---|"]
        for outcome, group, fs, us in rows:
            icon = {"fail": ":x: fail", "warn": ":warning: warn", "ok": ":white_check_mark: ok"}[outcome]
            table.append(
                f"| {_names(group)} | {icon} | {', '.join(code(f.id) for f in fs) or '-'} | "
                f"{', '.join(code(u.rule) for u in us) or '-'} |"
            )
        table.append("")
    image_only = [f for f in _findings_sorted(report) if not f.nodes]
    if image_only:
        table.append(
            "Image findings (any node): " + ", ".join(f"{_ICON.get(f.severity, '')} {code(f.id)}" for f in image_only)
        )
        table.append("")
    details: list[str] = []
    for finding in problems:  # a finding on several node groups is one collapsible block
        details += _finding_details(finding)
    tail: list[str] = []
    if report.recommendations:
        tail.append("**Recommendations**")
        tail.append("")
        for rec in report.recommendations:
            label = rec.label()
            diffs = f" ({'; '.join(md(d) for d in rec.differences)})" if rec.differences else ""
            tail.append(f"- {label}: {code(rec.image)} - {md(rec.why)}{diffs}")
        tail.append("")
    if report.unknowns:
        tail.append("**Could not be decided**")
        tail.append("")
        shared, singles = unknown_layout(report.unknowns)  # a shared question once, with the rules it decides
        for asked in shared:
            words = decides_words(asked.rules, asked.error_rules)
            tail.append(f"- {md(asked.question)} {words}: {md(rule_list(asked.rules))}")
        for u in singles:
            on = f" ({_names(u.nodes)})" if u.nodes else ""
            tail.append(f"- {code(u.rule)}{on}: {md(u.reason)}")
        tail.append("")
    suppressed = getattr(report, "suppressed", ())  # Report.suppressed: what --ignore removed
    if suppressed:
        tail += ["**Ignored** (`--ignore`)", ""]
        for sup in suppressed:
            where = f"@{md(sup.node)}" if sup.node else " on every node"
            tail.append(f"- {code(sup.rule)}{where}: {md(sup.reason or 'no reason given')}")
        tail.append("")
    text = "\n".join(head + table + details + tail)
    if len(text) > MAX_CHARS:  # drop the per-finding details first; the tables still say what fails
        note = ["_Details omitted to fit a comment; see the JSON or SARIF report._", ""]
        text = "\n".join(head + table + note + tail)
        if len(text) > MAX_CHARS:
            text = text[: MAX_CHARS - 80].rsplit("\n", 1)[0] + "\n\n_(truncated; see the JSON report)_\n"
    return text.rstrip("\n") + "\n"
