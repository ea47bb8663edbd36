"""Read every layer of an opened image into LayerIndexes, then merge them into a FileView."""

from __future__ import annotations

from ..sources.base import LayerRef, OpenedImage
from .fileview import FileView
from .layer_index import HARDLINK, LayerIndex, Limits, index_layer
from .wants import Want, WantSet


def _index(image: OpenedImage, layer: LayerRef, wants: WantSet, limits: Limits) -> LayerIndex:
    if image.indexer is not None:
        return image.indexer(layer, wants, limits)  # type: ignore[operator]
    raw = image.open_layer(layer)
    try:
        return index_layer(raw, layer.digest, wants, limits, verify_uncompressed=layer.digest_of_uncompressed,
                           layer_id=layer.layer_id)
    finally:
        close = getattr(raw, "close", None)
        if close:
            close()


def read_view(image: OpenedImage, wants: WantSet, limits: Limits = Limits()) -> tuple[FileView, list[LayerIndex]]:
    indexes = [_index(image, layer, wants, limits) for layer in image.layers]
    for layer, idx in zip(image.layers, indexes):
        missing = [e.linkname for e in idx.entries.values() if e.kind == HARDLINK and e.linkname]
        if missing:
            # A wanted hard link whose target was not kept: read that one layer again, keeping
            # the targets too. Rare (package managers seldom hard-link libraries), so a re-read is cheap.
            extra = WantSet(wants.wants + tuple(Want(_exact(p), content=True) for p in missing))
            indexes[layer.index] = _index(image, layer, extra, limits)
    return FileView(indexes), indexes


def _exact(path: str) -> str:
    import re

    return re.escape(path)
