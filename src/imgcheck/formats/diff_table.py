"""`imgcheck diff` output: pure functions from a DiffResult to text."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..recommend.diff import DiffResult

SCHEMA_VERSION = 2  # 2: nodes[].providers (loaded -> not loaded) and rules (the titles of added/removed ids)


def loads_text(value: bool | None) -> str:
    return "loads" if value else "unknown" if value is None else "does not load"


def diff_json(result: DiffResult) -> str:
    doc = {
        "schema_version": SCHEMA_VERSION,
        "old": result.old,
        "new": result.new,
        "changes": [{"fact": c.fact, "label": c.label, "old": c.old, "new": c.new} for c in result.changes],
        "nodes": [
            {
                "node": m.node,
                "old": m.old,
                "new": m.new,
                "direction": m.direction,
                "added": list(m.added),
                "removed": list(m.removed),
                "providers": [{"provider": p.provider, "old": p.old, "new": p.new} for p in m.providers],
            }
            for m in result.nodes
        ],
        "rules": [{"id": r.id, "severity": r.severity, "title": r.title} for r in result.rules],
        "newly_failing": [m.node for m in result.newly_failing],
    }
    return json.dumps(doc, indent=2) + "\n"


def _v(value: str | None) -> str:
    return "none" if value is None else value


def diff_table(result: DiffResult) -> str:
    lines = [f"{result.old} -> {result.new}", ""]
    if result.changes:
        lines.append("RDMA/GPU userspace changes:")
        for c in result.changes:
            lines.append(f"  {c.label}: {_v(c.old)} -> {_v(c.new)}")
    else:
        lines.append("No change in the RDMA/GPU userspace facts imgcheck reads.")
    lines.append("")
    moved = result.moved
    if moved:
        lines.append("Nodes whose prediction changes:")
        for m in moved:
            arrow = {"worse": "WORSE", "better": "better", "same": "same verdict"}[m.direction]
            extra = []
            if m.added:
                extra.append("new: " + ", ".join(m.added))
            if m.removed:
                extra.append("gone: " + ", ".join(m.removed))
            extra += [f"provider {p.provider}: {loads_text(p.old)} -> {loads_text(p.new)}" for p in m.providers]
            lines.append(f"  {m.node}: {m.old} -> {m.new} ({arrow}){'; ' + '; '.join(extra) if extra else ''}")
    else:
        lines.append(f"No node changes verdict ({len(result.nodes)} node(s) checked).")
    failing = result.newly_failing
    if failing:
        lines += ["", f"{len(failing)} node(s) move to failing: {', '.join(m.node for m in failing)}"]
    return "\n".join(lines) + "\n"
