"""Read every layer of an opened image into LayerIndexes (in parallel, via the cache), then merge.

Layers are indexed independently, so they can be read concurrently (the decompressors and
hashlib release the GIL) and merged afterwards in manifest order, which keeps whiteouts correct.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ..sources.base import LayerRef, OpenedImage
from ..streams import readinto_of
from .cache import LayerCache
from .fileview import FileView
from .layer_index import HARDLINK, LayerIndex, Limits, index_layer
from .wants import Want, WantSet


@dataclass
class ReadStats:
    """What a read did; tests assert on these instead of on time."""

    layers_read: list[str] = field(default_factory=list)  # digests streamed from the source
    layers_cached: list[str] = field(default_factory=list)  # digests served by the cache
    bytes_decompressed: int = 0
    facts_cached: bool = False  # the whole image's facts came from the facts cache: no layer touched


class _Progressing:
    """Reports compressed bytes to a progress display as the layer walk pulls them."""

    def __init__(self, raw, digest: str, progress):
        self._raw, self._digest, self._progress = raw, digest, progress
        self._readinto = readinto_of(raw)

    def read(self, n: int = -1) -> bytes:
        data = self._raw.read(n)
        if data:
            self._progress.layer_bytes(self._digest, len(data))
        return data

    def readinto(self, buffer) -> int:
        n = self._readinto(buffer)
        if n:
            self._progress.layer_bytes(self._digest, n)
        return n

    def __getattr__(self, name):  # finish(), close(), ... of the underlying reader
        return getattr(self._raw, name)


def _index(image: OpenedImage, layer: LayerRef, wants: WantSet, limits: Limits, progress=None) -> LayerIndex:
    if image.indexer is not None:
        return image.indexer(layer, wants, limits)  # type: ignore[operator]
    raw = image.open_layer(layer)
    if progress is not None:
        raw = _Progressing(raw, layer.digest, progress)
    try:
        return index_layer(raw, layer.digest, wants, limits, verify_uncompressed=layer.digest_of_uncompressed,
                           layer_id=layer.layer_id)
    finally:
        close = getattr(raw, "close", None)
        if close:
            close()


def _cached_index(image: OpenedImage, layer: LayerRef, wants: WantSet, limits: Limits,
                  cache: LayerCache | None, stats: ReadStats, progress) -> LayerIndex:
    if cache is not None:
        hit = cache.get(layer.digest)
        if hit is not None and hit.digest == layer.layer_id:
            stats.layers_cached.append(layer.digest)
            return hit
    if progress is not None:
        progress.layer_started(layer.digest, layer.size)
    try:
        idx = _index(image, layer, wants, limits, progress)
    finally:
        if progress is not None:
            progress.layer_finished(layer.digest)
    stats.layers_read.append(layer.digest)
    stats.bytes_decompressed += idx.uncompressed_bytes
    if cache is not None:
        cache.put(layer.digest, idx)  # only reached when the digest verified
    return idx


def read_view(image: OpenedImage, wants: WantSet, limits: Limits = Limits(), cache: LayerCache | None = None,
              workers: int | None = None, progress=None, stats: ReadStats | None = None
              ) -> tuple[FileView, list[LayerIndex]]:
    stats = stats if stats is not None else ReadStats()
    workers = max(1, min(workers or os.cpu_count() or 1, len(image.layers) or 1))
    if workers == 1:
        indexes = [_cached_index(image, l, wants, limits, cache, stats, progress) for l in image.layers]
    else:
        # Largest layers first: a big layer started last would leave the other cores idle at the end.
        order = sorted(image.layers, key=lambda l: -(l.size or 0))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="imgcheck-layer") as pool:
            futures = {l.index: pool.submit(_cached_index, image, l, wants, limits, cache, stats, progress)
                       for l in order}
            indexes = [futures[l.index].result() for l in image.layers]
    for layer, idx in zip(image.layers, indexes):
        missing = [e.linkname for e in idx.entries.values() if e.kind == HARDLINK and e.linkname]
        if missing:
            # A wanted hard link whose target was not kept: read that one layer again, keeping
            # the targets too. Rare (package managers seldom hard-link libraries), so a re-read is cheap.
            extra = WantSet(wants.wants + tuple(Want(re.escape(p), content=True) for p in missing))
            indexes[layer.index] = _index(image, layer, extra, limits)
            stats.layers_read.append(layer.digest)
    return FileView(indexes), indexes
