"""`imgcheck recommend` and `imgcheck catalog list` output: pure functions from results to text."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..model.serde import to_dict

if TYPE_CHECKING:
    from ..recommend.catalog import CatalogEntry
    from ..recommend.recommend import RecommendResult

SCHEMA_VERSION = 2  # 2: recommendation kinds env / pip-pin, origin "imported", facts framework_version / python
REJECTED_SHOWN = 15  # the table stays readable with a catalog of hundreds of rows; JSON keeps them all


def recommend_json(result: RecommendResult) -> str:
    doc = {
        "schema_version": SCHEMA_VERSION,
        "nodes": list(result.nodes),
        "message": result.message,
        "recommendations": [to_dict(r) for r in result.recommendations],
        "rejected": [{"image": ref, "why_not": why} for ref, why in result.rejected],
        "problems": list(result.problems),
    }
    return json.dumps(doc, indent=2) + "\n"


def recommend_table(result: RecommendResult) -> str:
    lines = [result.message + ("." if not result.message.endswith(".") else "")]
    changes = getattr(result, "image_changes", ())
    if changes:
        lines += ["", "Changes that keep the current image (smallest first):"]
        for rec in changes:
            lines.append(f"  * [{rec.kind}] {rec.why}")
            for d in rec.differences:
                lines.append(f"      - {d}")
    if result.images:
        lines += ["", "Images predicted clean (closest first):"]
        for i, rec in enumerate(result.images, 1):
            lines.append(f"  {i}. {rec.image}")
            lines.append(f"     {rec.why}")
            for d in rec.differences:
                lines.append(f"       {d}")
    if result.node_upgrades:
        lines += ["", "Node-side path:"]
        for rec in result.node_upgrades:
            lines.append(f"  * {rec.why}")
            for d in rec.differences:
                lines.append(f"      - {d}")
    if result.rejected:
        lines += ["", "Not recommended:"]
        # the ones the engine judged first (they say what fails), then those the catalog cannot describe
        ordered = sorted(result.rejected, key=lambda r: r[1].startswith("cannot be checked"))
        for ref, why in ordered[:REJECTED_SHOWN]:
            lines.append(f"  - {ref}: {why}")
        if len(ordered) > REJECTED_SHOWN:
            lines.append(f"  ... {len(ordered) - REJECTED_SHOWN} more (`-o json` lists every one with its reason)")
    for problem in result.problems:
        lines.append(f"warning: local catalog: {problem}")
    return "\n".join(lines) + "\n"


def catalog_json(entries: Iterable[CatalogEntry], problems: Iterable[str] = ()) -> str:
    doc = {
        "schema_version": SCHEMA_VERSION,
        "images": [
            {
                "reference": e.reference,
                "digest": e.digest,
                "origin": e.origin,
                "confidence": e.confidence,
                "source": e.source,
                "added_at": e.added_at,
                "checkable": not e.not_checkable,
                "not_checkable": e.not_checkable,
                "facts": to_dict(e.summary),
                "notes": list(e.notes),
            }
            for e in entries
        ],
        "problems": list(problems),
    }
    return json.dumps(doc, indent=2) + "\n"


def catalog_table(entries: Iterable[CatalogEntry], problems: Iterable[str] = ()) -> str:
    header = ("IMAGE", "ORIGIN", "RDMA-CORE", "PABI", "FLAVOR", "NCCL", "CUDA", "UCX", "DISTRO")
    rows = [header]
    for e in entries:
        s = e.summary
        ref = e.reference + (f"@{e.digest[:19]}" if e.digest and e.origin == "local" else "")
        rows.append(
            (
                ref,
                f"{e.origin} ({e.confidence})",
                s.rdma_core or "-",
                str(s.pabi) if s.pabi is not None else "-",
                s.flavor or "?",
                s.nccl or "-",
                s.cuda or "-",
                s.ucx or "-",
                s.distro or "-",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines += [f"warning: local catalog: {p}" for p in problems]
    return "\n".join(lines) + "\n"
