"""One line on what an image read did: layers streamed or served by the caches, and how."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..sources.read_options import ReadStats


def render_read_stats(stats: ReadStats) -> str:
    if stats.facts_cached:
        return "read: facts from the cache; no layer read"
    streamed = len(stats.layers_read) - len(stats.layers_reread)
    where = f"in {stats.layer_processes} worker processes" if stats.layer_processes else "in this process"
    ranged = (
        f" ({len(stats.layers_ranged)} seekable by range: {stats.bytes_ranged / 1e6:.1f} MB fetched)"
        if stats.layers_ranged
        else ""
    )
    # a wants change served from file indexes (view/file_index.py): only the wanted files were read again
    reread = (
        f", {len(stats.layers_reread)} re-read from {'its' if len(stats.layers_reread) == 1 else 'their'} file index "
        f"(only the wanted files: {stats.bytes_reread / 1e6:.1f} MB inflated from "
        f"{stats.bytes_reread_compressed / 1e6:.1f} MB read)"
        if stats.layers_reread
        else ""
    )
    return (
        f"read: {streamed} layer{'s' if streamed != 1 else ''} streamed{ranged} "
        f"({stats.bytes_decompressed / 1e6:.1f} MB uncompressed){reread} {where}, "
        f"{len(stats.layers_cached)} from the layer cache"
    )
