"""An eStargz layer read by range: its table of contents, then only the files the extractors want.

eStargz (github.com/containerd/stargz-snapshotter, docs/estargz.md and estargz/gzip.go) is a gzip tar whose
regular files start fresh gzip members, followed by a gzip member holding `stargz.index.json` (the table of
contents, TOC) and a 51-byte footer: an empty gzip member whose Extra field is `SG`, length 22,
`%016x` (the TOC's offset in the blob) and `STARGZ`. The manifest's layer annotation
`containerd.io/snapshot/stargz/toc.digest` is the sha256 of the TOC JSON, and each TOC entry carries the
sha256 of its chunk (`chunkDigest`) or file (`digest`).

Trust: the manifest is verified by its digest, the TOC by the annotation, each chunk read by its digest, so
every byte used is bound to what the manifest names. What a range read cannot check is the layer's diff_id
(that needs every byte), so a layer whose tar differed from its own TOC would go unnoticed; callers wanting
today's whole-layer verification turn range reads off (ReadOptions.range_reads, `--whole-layers`).
Anything unexpected raises NotSeekable and the caller reads the layer whole, as any gzip layer.
"""

from __future__ import annotations

import io
import tarfile
import zlib
from typing import Any

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
from .tarwalk import TarHeader
from .wants import WantSet

__all__ = ["FOOTER_SIZE", "NotSeekable", "footer_toc_offset", "index_estargz", "read_toc"]

FOOTER_SIZE = 51
TOC_NAME = "stargz.index.json"


def footer_toc_offset(footer: bytes) -> int:
    """The TOC's offset from the 51-byte footer (RFC 1952 header with FEXTRA; subfield `SG`)."""
    if len(footer) != FOOTER_SIZE or footer[:3] != b"\x1f\x8b\x08" or not footer[3] & 0x04:
        raise NotSeekable("no eStargz footer (not a gzip member with an Extra field)")
    xlen = int.from_bytes(footer[10:12], "little")
    extra = footer[12 : 12 + xlen]
    if xlen != 26 or extra[:2] != b"SG" or int.from_bytes(extra[2:4], "little") != 22 or extra[20:26] != b"STARGZ":
        raise NotSeekable("the footer's Extra field is not eStargz's")
    try:
        return int(extra[4:20].decode("ascii"), 16)
    except (UnicodeDecodeError, ValueError):
        raise NotSeekable("the footer's TOC offset is not hexadecimal") from None


def _gunzip(data: bytes, limit: int, what: str, more_allowed: bool = False) -> bytes:
    """The first gzip member of `data`, decompressed, at most `limit` bytes; more is an error unless
    `more_allowed` (a file's last chunk shares its member with the tar padding after it)."""
    inflate = zlib.decompressobj(wbits=31)
    try:
        out = inflate.decompress(data, limit + 1)
    except zlib.error as exc:
        raise NotSeekable(f"{what}: not gzip ({exc})") from None
    if len(out) > limit and not more_allowed:
        raise NotSeekable(f"{what}: decompresses to more than {limit} bytes")
    return out[:limit]


def read_toc(layer: LayerRef, read_range: ReadRange) -> tuple[list[dict[str, Any]], int, int]:
    """(TOC entries, the TOC's offset, the TOC JSON's size), the TOC checked against the layer's annotated digest."""
    if layer.size is None or layer.size < FOOTER_SIZE or layer.toc_digest is None:
        raise NotSeekable("no size or no TOC digest in the manifest")
    toc_offset = footer_toc_offset(read_range(layer, layer.size - FOOTER_SIZE, layer.size))
    if not 0 <= toc_offset < layer.size - FOOTER_SIZE or layer.size - FOOTER_SIZE - toc_offset > MAX_TOC_BYTES:
        raise NotSeekable(f"TOC offset {toc_offset} is outside the blob or the TOC is over {MAX_TOC_BYTES} bytes")
    tar_bytes = _gunzip(read_range(layer, toc_offset, layer.size - FOOTER_SIZE), MAX_TOC_BYTES, "the TOC")
    try:
        with tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:") as tar:
            member = tar.next()
            if member is None or member.name != TOC_NAME or not member.isfile():
                raise NotSeekable(f"the TOC member is not {TOC_NAME}")
            handle = tar.extractfile(member)
            raw = handle.read() if handle is not None else b""
    except tarfile.TarError as exc:
        raise NotSeekable(f"the TOC is not a tar ({exc})") from None
    check_digest(raw, layer.toc_digest, "the TOC does not match the manifest's")
    doc = safejson.loads(raw, "eStargz TOC", NotSeekable)
    entries = doc.get("entries") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise NotSeekable("the TOC has no list of entries")
    return entries, toc_offset, len(raw)


def _chunks_by_file(entries: list[dict[str, Any]], toc_offset: int) -> dict[str, list[Chunk]]:
    """{file name: its chunks in order}, each chunk's compressed extent ending where the next member starts."""
    starts = sorted({as_int(e, "offset") for e in entries if e.get("type") in ("reg", "chunk") and e.get("offset")})
    if starts and starts[-1] >= toc_offset:
        raise NotSeekable(f"a data offset {starts[-1]} is not before the TOC at {toc_offset}")
    starts.append(toc_offset)
    ends = {a: b for a, b in zip(starts, starts[1:])}
    out: dict[str, list[Chunk]] = {}
    for e in entries:
        kind = e.get("type")
        if kind not in ("reg", "chunk") or (kind == "reg" and not as_int(e, "size")):
            continue  # an empty file has no data member
        name = e.get("name")
        offset = as_int(e, "offset")
        if not isinstance(name, str) or offset not in ends:
            raise NotSeekable(f"TOC entry {str(name)[:80]!r} has no data offset")
        digest = digest_or_none(e.get("chunkDigest"))
        out.setdefault(name, []).append(
            Chunk(offset, ends[offset], as_int(e, "innerOffset"), as_int(e, "chunkSize"), digest)
        )
    return out


def _gunzip_chunk(data: bytes, limit: int, what: str) -> bytes:
    return _gunzip(data, limit, what, more_allowed=True)


def index_estargz(layer: LayerRef, read_range: ReadRange, wants: WantSet, limits: Limits) -> LayerIndex:
    """The layer's index from its TOC and the wanted files' chunks: the same index a whole read gives, without
    the uncompressed digest, with `range_bytes` the compressed bytes fetched. Raises NotSeekable for anything that
    does not verify."""
    counted = Counted(read_range)
    entries, toc_offset, toc_size = read_toc(layer, counted)
    chunks = _chunks_by_file(entries, toc_offset)
    # the TOC is a member of the tar too (a whole read indexes its path): the same index either way
    toc_member = TarHeader(TOC_NAME, b"0", toc_size, 0o644, "")
    return index_entries(layer, entries, chunks, counted, _gunzip_chunk, wants, limits, extra=[toc_member])
