"""`imgcheck diff` as a pull-request comment (Markdown) and as code-scanning alerts (SARIF).

A base-image bump is exactly what a PR comment is for: what changed in the RDMA/GPU userspace, which
nodes move to failing and why (the rules that appear), and which libibverbs provider a node needs
went from loaded to not loaded. The SARIF has one alert per rule that NEW adds on some node, keyed
like `check`'s alerts (rule + image repository), so a diff alert and a later check alert are one.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .diff_table import loads_text
from .markdown import code, md
from .sarif import FINGERPRINT_KEY, SARIF_SCHEMA_URI, artifact_uri, image_repository

if TYPE_CHECKING:
    from ..recommend.diff import DiffResult


def diff_markdown(result: DiffResult) -> str:
    lines = [f"### imgcheck diff: {code(result.old)} → {code(result.new)}", ""]
    failing = result.newly_failing
    if failing:
        lines += [f"**{len(failing)} node(s) move to failing:** {', '.join(md(m.node) for m in failing)}", ""]
    if result.changes:
        lines += ["| RDMA/GPU userspace | before | after |", "| --- | --- | --- |"]
        lines += [f"| {md(c.label)} | {md(c.old or 'none')} | {md(c.new or 'none')} |" for c in result.changes]
    else:
        lines.append("No change in the RDMA/GPU userspace facts imgcheck reads.")
    lines.append("")
    moved = result.moved
    if moved:
        titles = {r.id: r.title for r in result.rules}
        lines += ["| node | before | after | what changed |", "| --- | --- | --- | --- |"]
        for m in moved:
            what = [f"new {code(r)}: {md(titles.get(r, ''))}" for r in m.added]
            what += [f"gone {code(r)}" for r in m.removed]
            what += [f"provider {code(p.provider)}: {loads_text(p.old)} → {loads_text(p.new)}" for p in m.providers]
            lines.append(f"| {md(m.node)} | {m.old} | {m.new} | {'<br>'.join(what) or '—'} |")
    else:
        lines.append(f"No node changes verdict ({len(result.nodes)} node(s) checked).")
    return "\n".join(lines) + "\n"


def diff_sarif(result: DiffResult) -> str:
    import hashlib

    rules, results = [], []
    for rule in result.rules:
        nodes = [m for m in result.nodes if rule.id in m.added]
        if not nodes:
            continue  # a rule that only went away is no alert
        names = [m.node for m in nodes]
        providers = sorted(
            {f"{p.provider} ({loads_text(p.old)} -> {loads_text(p.new)})" for m in nodes for p in m.providers}
        )
        level = "error" if rule.severity == "error" else "warning"
        rules.append(
            {"id": rule.id, "shortDescription": {"text": rule.title}, "defaultConfiguration": {"level": level}}
        )
        text = f"{rule.title}. New with {result.new} (not with {result.old}) on: {', '.join(names[:100])}."
        if providers:
            text += f" Provider: {', '.join(providers)}."
        key = "\0".join((rule.id, image_repository(result.new)))
        results.append(
            {
                "ruleId": rule.id,
                "ruleIndex": len(rules) - 1,
                "level": level,
                "message": {"text": text},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": artifact_uri(result.new)},
                            "region": {"startLine": 1},
                        }
                    }
                ],
                "partialFingerprints": {FINGERPRINT_KEY: hashlib.sha256(key.encode("utf-8")).hexdigest()},
                "properties": {
                    "nodes": names,
                    "moves": [{"node": m.node, "old": m.old, "new": m.new} for m in nodes],
                    "providers": providers,
                },
            }
        )
    run = {
        "tool": {"driver": {"name": "imgcheck", "rules": rules}},
        "results": results,
        "automationDetails": {"id": f"imgcheck/{image_repository(result.new)}/"},
        "properties": {"old": result.old, "new": result.new, "newlyFailing": [m.node for m in result.newly_failing]},
    }
    return json.dumps({"$schema": SARIF_SCHEMA_URI, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"
