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

import hashlib
import io
import tarfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import safejson
from ..errors import BadInputError
from ..sources.base import LayerRef, parse_digest
from ..sources.read_options import Limits
from .layer_index import LayerBuilder, LayerIndex
from .tarwalk import TarHeader
from .wants import WantSet

FOOTER_SIZE = 51
TOC_NAME = "stargz.index.json"
MAX_TOC_BYTES = 64 * 1024**2  # compressed or not: a TOC lists entries, ~200 bytes each
MAX_CHUNK_BYTES = 64 * 1024**2  # one range request; eStargz chunks are 4 MiB by default
# the tar type flags a TOC entry type stands for (estargz/types.go TOCEntry.Type)
_TYPES = {"dir": b"5", "reg": b"0", "symlink": b"2", "hardlink": b"1", "char": b"3", "block": b"4", "fifo": b"6"}

ReadRange = Callable[[LayerRef, int, int], bytes]


class NotSeekable(Exception):
    """The layer cannot be read by range (the reason says why): read it whole."""


@dataclass(frozen=True)
class _Chunk:
    offset: int  # where its gzip member starts in the blob
    end: int  # where the next member starts (or the TOC)
    inner: int  # bytes of the decompressed member before the chunk's data
    size: int
    digest: str | None


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
    algo, want = parse_digest(layer.toc_digest)
    if hashlib.new(algo, raw).hexdigest() != want:
        raise NotSeekable(f"the TOC does not match the manifest's {layer.toc_digest}")
    doc = safejson.loads(raw, "eStargz TOC", NotSeekable)
    entries = doc.get("entries") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise NotSeekable("the TOC has no list of entries")
    return entries, toc_offset, len(raw)


def _int(entry: dict[str, Any], key: str) -> int:
    value = entry.get(key, 0)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise NotSeekable(f"TOC entry {str(entry.get('name'))[:80]!r}: {key} is not a whole number")
    return value


def _chunks_by_file(entries: list[dict[str, Any]], toc_offset: int) -> dict[str, list[_Chunk]]:
    """{file name: its chunks in order}, each chunk's compressed extent ending where the next member starts."""
    starts = sorted({_int(e, "offset") for e in entries if e.get("type") in ("reg", "chunk") and e.get("offset")})
    if starts and starts[-1] >= toc_offset:
        raise NotSeekable(f"a data offset {starts[-1]} is not before the TOC at {toc_offset}")
    starts.append(toc_offset)
    ends = {a: b for a, b in zip(starts, starts[1:])}
    out: dict[str, list[_Chunk]] = {}
    for e in entries:
        kind = e.get("type")
        if kind not in ("reg", "chunk") or (kind == "reg" and not _int(e, "size")):
            continue  # an empty file has no data member
        name = e.get("name")
        offset = _int(e, "offset")
        if not isinstance(name, str) or offset not in ends:
            raise NotSeekable(f"TOC entry {str(name)[:80]!r} has no data offset")
        digest = _digest_or_none(e.get("chunkDigest"))
        out.setdefault(name, []).append(
            _Chunk(offset, ends[offset], _int(e, "innerOffset"), _int(e, "chunkSize"), digest)
        )
    return out


def _digest_or_none(value: object) -> str | None:
    if value is None:
        return None
    try:
        if not isinstance(value, str):
            raise BadInputError("not a string")
        parse_digest(value)
    except BadInputError:
        raise NotSeekable(f"a TOC digest {str(value)[:80]!r} is malformed") from None
    return value


class _FileData:
    """One regular file's bytes, fetched chunk by chunk and each chunk checked against its digest."""

    def __init__(self, layer: LayerRef, read_range: ReadRange, size: int, chunks: list[_Chunk], digest: str | None):
        self._layer, self._read_range, self._size, self._chunks, self._digest = layer, read_range, size, chunks, digest

    def _chunk_bytes(self, chunk: _Chunk, size: int) -> bytes:
        if chunk.end - chunk.offset > MAX_CHUNK_BYTES:
            raise NotSeekable(f"a chunk spans more than {MAX_CHUNK_BYTES} compressed bytes")
        raw = self._read_range(self._layer, chunk.offset, chunk.end)
        data = _gunzip(raw, chunk.inner + size, "a file chunk", more_allowed=True)
        data = data[chunk.inner : chunk.inner + size]
        if len(data) != size:
            raise NotSeekable(f"a chunk holds {len(data)} bytes, its TOC entry says {size}")
        if chunk.digest is not None:
            algo, want = parse_digest(chunk.digest)
            if hashlib.new(algo, data).hexdigest() != want:
                raise NotSeekable(f"a chunk does not match its TOC digest {chunk.digest}")
        return data

    def feed(self, consume: Callable[[memoryview | bytes], object]) -> bool:
        """Each chunk to `consume` in order; the whole file checked against its digest where a chunk has none."""
        if self._digest is None and any(c.digest is None for c in self._chunks):
            raise NotSeekable("a file with neither chunk digests nor a file digest cannot be verified")
        whole = hashlib.new(parse_digest(self._digest)[0]) if self._digest is not None else None
        done = 0
        for i, chunk in enumerate(self._chunks):
            size = chunk.size or self._size - done
            if i + 1 == len(self._chunks):
                size = self._size - done
            data = self._chunk_bytes(chunk, size)
            done += len(data)
            if whole is not None:
                whole.update(data)
            consume(data)
        if done != self._size:
            raise NotSeekable(f"the chunks hold {done} bytes, the file is {self._size}")
        if whole is not None and self._digest is not None and whole.hexdigest() != parse_digest(self._digest)[1]:
            raise NotSeekable(f"a file does not match its TOC digest {self._digest}")
        return True

    def read(self, limit: int) -> bytes | None:
        if self._size > limit:
            return None  # as a streamed tar gives it: over the want's limit, kept as truncated
        parts: list[memoryview | bytes] = []
        self.feed(parts.append)
        return b"".join(parts)


def index_estargz(layer: LayerRef, read_range: ReadRange, wants: WantSet, limits: Limits) -> LayerIndex:
    """The layer's index from its TOC and the wanted files' chunks: the same index a whole read gives, without
    the uncompressed digest, with `range_bytes` the compressed bytes fetched. Raises NotSeekable for anything that
    does not verify."""

    fetched_here: list[int] = []

    def counted(layer: LayerRef, start: int, end: int) -> bytes:
        data = read_range(layer, start, end)
        fetched_here.append(len(data))
        return data

    entries, toc_offset, toc_size = read_toc(layer, counted)
    if len(entries) > limits.max_entries:
        raise NotSeekable(f"the TOC lists more than {limits.max_entries} entries")
    chunks = _chunks_by_file(entries, toc_offset)
    build = LayerBuilder(layer.layer_id, wants, limits, f"layer {layer.digest}")
    for entry in entries:
        kind = entry.get("type")
        if kind == "chunk":
            continue
        name, flag = entry.get("name"), _TYPES.get(kind) if isinstance(kind, str) else None
        if not isinstance(name, str) or flag is None:
            raise NotSeekable(f"TOC entry {str(name)[:80]!r} has an unknown type {str(kind)[:20]!r}")
        size = _int(entry, "size")
        link = entry.get("linkName", "")
        member = TarHeader(name, flag, size, _int(entry, "mode"), link if isinstance(link, str) else "")
        data = _FileData(layer, counted, size, chunks.get(name, []), _digest_or_none(entry.get("digest")))
        build.add(member, data.read, data.feed)
    # the TOC is a member of the tar too (a whole read indexes its path): the same index either way
    build.add(TarHeader(TOC_NAME, b"0", toc_size, 0o644, ""), lambda _limit: None, lambda _consume: False)
    idx = build.finish()
    idx.range_bytes = sum(fetched_here)
    return idx
