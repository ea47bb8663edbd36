"""A zstd:chunked layer read by range: its table of contents, then only the files the extractors want.

zstd:chunked (github.com/containers/storage: pkg/chunked/compressor/compressor.go writeZstdChunkedStream,
pkg/chunked/internal/minimal/compression.go WriteZstdChunkedManifest) is a zstd tar in which every regular file's
data starts a fresh zstd frame (and each of its chunks, where the rolling checksum splits a file, another), so a
file's bytes are `offset`..`endOffset` of the blob and decompress alone. After the tar come zstd skippable frames:
the TOC (`{"version": 1, "entries": [...]}`, zstd-compressed), then (in current releases) the tar-split data and a
64-byte footer, neither of which is read here (the annotations locate the TOC). The
manifest's layer annotations name the compressed TOC's digest (`...zstd-chunked.manifest-checksum`) and its
position (`...manifest-position` = `offset:length:uncompressed-length:type`, type 1). Entries: `reg` with `digest`
(of the file), `offset`, `endOffset`; a file split in chunks has `chunkSize`/`chunkDigest` on it and one `chunk`
entry per further chunk, each with its own `offset` (a chunk ends where the next starts, the last at `endOffset`).

Trust is eStargz's (view/estargz.py): the TOC by the annotation, each chunk or file by its digest; the diff_id
needs the whole layer and is not checked by a range read. Anything else raises NotSeekable: the layer is then read
whole, as any zstd layer.
"""

from __future__ import annotations

import io
from typing import Any

import zstandard

from .. import safejson
from ..sources.base import LayerRef
from ..sources.read_options import Limits
from .layer_index import LayerIndex
from .seekable import (
    MAX_TOC_BYTES,
    Chunk,
    Counted,
    NotSeekable,
    ReadRange,
    as_int,
    check_digest,
    digest_or_none,
    index_entries,
)
from .wants import WantSet

MANIFEST_TYPE_CRFS = 1  # the only TOC type (minimal.ManifestTypeCRFS)


def _unzstd(data: bytes, limit: int, what: str) -> bytes:
    """The zstd frame(s) in `data` decompressed, at most `limit` bytes (a bomb stops there)."""
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True) as reader:
            out = bytearray()
            while len(out) < limit:
                part = reader.read(min(limit - len(out), 1 << 20))
                if not part:
                    break
                out += part
            return bytes(out)
    except zstandard.ZstdError as exc:
        raise NotSeekable(f"{what}: not zstd ({exc})") from None


def toc_position(layer: LayerRef) -> tuple[int, int, int]:
    """(offset, compressed length, uncompressed length) of the TOC from the manifest's position annotation."""
    if layer.size is None or layer.toc_digest is None or layer.toc_position is None:
        raise NotSeekable("no size, TOC digest or TOC position in the manifest")
    parts = layer.toc_position.split(":")
    if len(parts) != 4 or not all(p.isdigit() for p in parts):
        raise NotSeekable(f"the TOC position {layer.toc_position[:80]!r} is not offset:length:uncompressed:type")
    offset, length, plain, kind = (int(p) for p in parts)
    if kind != MANIFEST_TYPE_CRFS:
        raise NotSeekable(f"the TOC type {kind} is not {MANIFEST_TYPE_CRFS}")
    if not 0 < length <= MAX_TOC_BYTES or plain > MAX_TOC_BYTES or offset + length > layer.size:
        raise NotSeekable(f"the TOC at {offset}+{length} is outside the blob or over {MAX_TOC_BYTES} bytes")
    return offset, length, plain


def read_toc(layer: LayerRef, read_range: ReadRange) -> tuple[list[dict[str, Any]], int]:
    """(TOC entries, the TOC's offset), the compressed TOC checked against the manifest's checksum annotation."""
    offset, length, plain = toc_position(layer)
    compressed = read_range(layer, offset, offset + length)
    assert layer.toc_digest is not None  # toc_position checked it
    check_digest(compressed, layer.toc_digest, "the TOC does not match the manifest's")
    raw = _unzstd(compressed, plain + 1, "the TOC")
    if len(raw) != plain:
        raise NotSeekable(f"the TOC is {len(raw)} bytes, its position annotation says {plain}")
    doc = safejson.loads(raw, "zstd:chunked TOC", NotSeekable)
    entries = doc.get("entries") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise NotSeekable("the TOC has no list of entries")
    return entries, offset


def _chunks_by_file(entries: list[dict[str, Any]], toc_offset: int) -> dict[str, list[Chunk]]:
    """{file name: its chunks in order}: a `reg` entry's data, or its first chunk and the `chunk` entries after it."""
    out: dict[str, list[Chunk]] = {}
    ends: dict[str, int] = {}  # a split file's endOffset, for its last chunk
    for e in entries:
        kind, name = e.get("type"), e.get("name")
        if kind not in ("reg", "chunk") or (kind == "reg" and not as_int(e, "size")):
            continue  # an empty file has no data frame
        if not isinstance(name, str):
            raise NotSeekable("a TOC entry has no name")
        offset = as_int(e, "offset")
        if kind == "reg":
            end = as_int(e, "endOffset")
            if not as_int(e, "chunkSize"):  # one frame: the file's digest checks it
                out[name] = [Chunk(offset, end, 0, as_int(e, "size"), None)]
                continue
            out[name], ends[name] = [], end
        elif name not in ends:
            raise NotSeekable(f"a chunk entry {name[:80]!r} follows no split file")
        elif out[name]:  # the chunk before ends where this one starts
            last = out[name][-1]
            out[name][-1] = Chunk(last.offset, offset, 0, last.size, last.digest)
        out[name].append(Chunk(offset, ends[name], 0, as_int(e, "chunkSize"), digest_or_none(e.get("chunkDigest"))))
    for name, chunks in out.items():
        for c in chunks:
            if not 0 < c.offset < c.end <= toc_offset:
                raise NotSeekable(f"{name[:80]!r}: data at {c.offset}..{c.end} is not inside the tar's frames")
    return out


def index_zstd_chunked(layer: LayerRef, read_range: ReadRange, wants: WantSet, limits: Limits) -> LayerIndex:
    """The layer's index from its TOC and the wanted files' frames: the same index a whole read gives, without
    the uncompressed digest, with `range_bytes` the compressed bytes fetched. Raises NotSeekable for anything that
    does not verify."""
    counted = Counted(read_range)
    entries, toc_offset = read_toc(layer, counted)
    return index_entries(layer, entries, _chunks_by_file(entries, toc_offset), counted, _unzstd, wants, limits)
