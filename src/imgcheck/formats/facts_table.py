"""Readable rendering of image facts (what `imgcheck inspect` prints on a terminal)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table

from ..model.image import ImageFacts
from .safe_text import cell, escape_markup


def _short(layer: str | None) -> str:
    return layer.split(":", 1)[-1][:12] if layer else ""


def facts_rows(facts: ImageFacts) -> list[tuple[str, str, str, str]]:
    rows: list[tuple[str, str, str, str]] = []
    os_ = facts.os
    rows.append(("os", f"{os_.id or '?'} {os_.version_id or ''}".strip(), os_.path or "", _short(os_.layer)))
    lib = facts.rdma.libibverbs
    if lib is None:
        rows.append(("libibverbs", "not present (NCCL would fall back to sockets)", "", ""))
    else:
        rows.append(("libibverbs", f"{lib.version} (rdma-core {lib.rdma_core})", lib.path or "", _short(lib.layer)))
        rows.append(("  private ABI", f"IBVERBS_PRIVATE_{lib.private_abi}" if lib.private_abi else "?", "", ""))
        rows.append(("  ibv_reg_mr_iova2", "yes (IBVERBS_1.8)" if lib.has_reg_mr_iova2 else "no", "", ""))
        rows.append(("  ibv_reg_dmabuf_mr", "yes (IBVERBS_1.12)" if lib.has_reg_dmabuf_mr else "no", "", ""))
    rows.append(
        (
            "rdma flavor",
            facts.rdma.flavor + (f" {facts.rdma.ofed_version}" if facts.rdma.ofed_version else ""),
            facts.rdma.ofed_source or "",
            "",
        )
    )
    for prov in facts.rdma.providers:
        if prov.name in ("mlx5", "mlx4", "efa", "rxe", "bnxt_re", "irdma") or len(facts.rdma.providers) <= 6:
            rows.append(
                (
                    f"provider {prov.name}",
                    f"rdmav{prov.pabi}" + (f" {prov.version}" if prov.version else ""),
                    prov.path,
                    _short(prov.layer),
                )
            )
    if len(facts.rdma.providers) > 6:
        rows.append(("providers", ", ".join(p.name for p in facts.rdma.providers), "", ""))
    if facts.ucx:
        rows.append(("ucx", facts.ucx.version or "?", facts.ucx.path or "", _short(facts.ucx.layer)))
    for n in facts.nccl:
        rows.append(("nccl", f"{n.version} ({n.origin})", n.path or "", _short(n.layer)))
    if facts.cuda:
        c = facts.cuda
        value = c.version or "?"
        if c.compat_driver:
            value += f" (forward-compat driver {c.compat_driver})"
        rows.append(("cuda", value, c.path or c.origin or "", _short(c.layer)))
    if facts.hpcx:
        rows.append(("hpc-x", facts.hpcx.version or "?", facts.hpcx.path or "", _short(facts.hpcx.layer)))
    for key in sorted(k for k in facts.env if k.startswith(("NCCL_", "UCX_", "CUDA_", "NVIDIA_", "TORCH", "TRITON"))):
        rows.append((f"env {key}", facts.env[key], "", ""))
    return rows


def render_facts_table(facts: ImageFacts, color: bool = False, width: int = 120) -> str:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, width=width, no_color=not color)
    console.print(
        f"[bold]{escape_markup(facts.reference)}[/bold]  digest {escape_markup(facts.digest or '?')}  "
        f"platform {escape_markup(facts.platform or '?')}"
    )
    table = Table(show_header=True, header_style="bold")
    for col in ("fact", "value", "path", "layer"):
        table.add_column(col, overflow="fold")
    for row in facts_rows(facts):
        table.add_row(*(cell(c) for c in row))  # image data: never parsed as markup
    console.print(table)
    for note in facts.notes:
        console.print(f"note: {escape_markup(note)}")
    return buf.getvalue()
