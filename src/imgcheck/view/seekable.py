"""What eStargz (view/estargz.py) and zstd:chunked (view/zstdchunked.py) layers share once their table of contents
(TOC) is verified: each regular file's chunks fetched by range, decompressed, checked against their digests, and
fed to the LayerBuilder a whole read uses, so a range read and a whole read give the same index.

Both TOCs list entries of the same shape (name, type, size, mode, linkName, digest; `chunk` entries with
chunkSize and chunkDigest for a file's later chunks); the formats differ in the container around them and in how
a chunk is compressed, which the caller gives as `decompress`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import BadInputError
from ..sources.base import LayerRef, parse_digest
from ..sources.read_options import Limits
from .layer_index import LayerBuilder, LayerIndex
from .tarwalk import TarHeader
from .wants import WantSet

MAX_TOC_BYTES = 64 * 1024**2  # compressed or not: a TOC lists entries, ~200 bytes each
MAX_CHUNK_BYTES = 64 * 1024**2  # one range request, and its data; eStargz chunks are 4 MiB, zstd:chunked ~64 KiB
# the tar type flags a TOC entry type stands for (estargz/types.go TOCEntry.Type; containers/storage
# pkg/chunked/internal/minimal/compression.go TarTypes uses the same names)
TYPES = {"dir": b"5", "reg": b"0", "symlink": b"2", "hardlink": b"1", "char": b"3", "block": b"4", "fifo": b"6"}

ReadRange = Callable[[LayerRef, int, int], bytes]
# (compressed bytes of a chunk, how many bytes are wanted, what it is) -> at least those bytes decompressed
Decompress = Callable[[bytes, int, str], bytes]


class NotSeekable(Exception):
    """The layer cannot be read by range (the reason says why): read it whole."""


@dataclass(frozen=True)
class Chunk:
    offset: int  # where its compressed data starts in the blob
    end: int  # where it ends (exclusive)
    inner: int  # bytes of the decompressed data before the chunk's own
    size: int
    digest: str | None


def as_int(entry: dict[str, Any], key: str) -> int:
    value = entry.get(key, 0)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise NotSeekable(f"TOC entry {str(entry.get('name'))[:80]!r}: {key} is not a whole number")
    return value


def digest_or_none(value: object) -> str | None:
    if value is None or value == "":  # zstd:chunked leaves an empty digest out (Go `omitempty`)
        return None
    try:
        if not isinstance(value, str):
            raise BadInputError("not a string")
        parse_digest(value)
    except BadInputError:
        raise NotSeekable(f"a TOC digest {str(value)[:80]!r} is malformed") from None
    return value


def check_digest(data: bytes, digest: str, mismatch: str) -> None:
    """NotSeekable(`mismatch` digest) unless `data` hashes to `digest`."""
    algo, want = parse_digest(digest)
    if hashlib.new(algo, data).hexdigest() != want:
        raise NotSeekable(f"{mismatch} {digest}")


class FileData:
    """One regular file's bytes, fetched chunk by chunk and each chunk checked against its digest."""

    def __init__(
        self,
        layer: LayerRef,
        read_range: ReadRange,
        decompress: Decompress,
        size: int,
        chunks: list[Chunk],
        digest: str | None,
    ):
        self._layer, self._read_range, self._decompress = layer, read_range, decompress
        self._size, self._chunks, self._digest = size, chunks, digest

    def _chunk_bytes(self, chunk: Chunk, size: int) -> bytes:
        # both bounds: a chunk is held in memory whole, and a few compressed bytes can inflate to gigabytes
        if chunk.end - chunk.offset > MAX_CHUNK_BYTES or chunk.inner + size > MAX_CHUNK_BYTES:
            raise NotSeekable(f"a chunk spans more than {MAX_CHUNK_BYTES} compressed or decompressed bytes")
        raw = self._read_range(self._layer, chunk.offset, chunk.end)
        data = self._decompress(raw, chunk.inner + size, "a file chunk")
        data = data[chunk.inner : chunk.inner + size]
        if len(data) != size:
            raise NotSeekable(f"a chunk holds {len(data)} bytes, its TOC entry says {size}")
        if chunk.digest is not None:
            check_digest(data, chunk.digest, "a chunk does not match its TOC digest")
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
        if self._size > limit or not self._size:
            return None  # as a streamed tar gives it (view/tarwalk.py read_data): over the limit, or empty
        parts: list[memoryview | bytes] = []
        self.feed(parts.append)
        return b"".join(parts)


class Counted:
    """A ReadRange that adds up the bytes it fetched (LayerIndex.range_bytes)."""

    def __init__(self, read_range: ReadRange):
        self._read_range, self.fetched = read_range, 0

    def __call__(self, layer: LayerRef, start: int, end: int) -> bytes:
        data = self._read_range(layer, start, end)
        self.fetched += len(data)
        return data


def index_entries(
    layer: LayerRef,
    entries: list[dict[str, Any]],
    chunks: dict[str, list[Chunk]],
    read_range: Counted,
    decompress: Decompress,
    wants: WantSet,
    limits: Limits,
    extra: Iterable[TarHeader] = (),
) -> LayerIndex:
    """The layer's index from its verified TOC entries, the wanted files' chunks fetched through `read_range`;
    `extra` are tar members a whole read sees that the TOC does not list (their data never wanted)."""
    if len(entries) > limits.max_entries:
        raise NotSeekable(f"the TOC lists more than {limits.max_entries} entries")
    build = LayerBuilder(layer.layer_id, wants, limits, f"layer {layer.digest}")
    for entry in entries:
        kind = entry.get("type")
        if kind == "chunk":
            continue
        name, flag = entry.get("name"), TYPES.get(kind) if isinstance(kind, str) else None
        if not isinstance(name, str) or flag is None:
            raise NotSeekable(f"TOC entry {str(name)[:80]!r} has an unknown type {str(kind)[:20]!r}")
        size = as_int(entry, "size")
        link = entry.get("linkName", "")
        member = TarHeader(name, flag, size, as_int(entry, "mode"), link if isinstance(link, str) else "")
        data = FileData(layer, read_range, decompress, size, chunks.get(name, []), digest_or_none(entry.get("digest")))
        build.add(member, data.read, data.feed)
    for member in extra:
        build.add(member, lambda _limit: None, lambda _consume: False)
    idx = build.finish()
    idx.range_bytes = read_range.fetched
    return idx
