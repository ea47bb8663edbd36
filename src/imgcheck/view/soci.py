"""A gzip layer read by range through its SOCI zTOC: the wanted files' spans fetched, verified and inflated from
the zTOC's checkpoints (issue 39).

SOCI (github.com/awslabs/soci-snapshotter, read at 77fb4266): how the image names its SOCI index and the index
names each layer's zTOC is sources/soci_index.py; this module reads a zTOC and the spans it describes.

A zTOC is a flatbuffer (ztoc/fbs/ztoc.fbs): the tar's members (name, type, uncompressed offset and size, mode,
link name) and CompressionInfo: `span_digests` (the sha256 of each span's compressed bytes, ztoc/zinfo_builder.go
getPerSpanDigests) and `checkpoints`, the zinfo blob of ztoc/compression/gzip_zinfo.c (zran.c's access points):
int32 count, int64 span size, then per checkpoint int64 compressed offset `in`, int64 uncompressed offset `out`,
uint8 `bits` and a 32 KiB window, little endian; a v1 blob leaves out checkpoint 0 (in=10, out=0, no window).
Span i's compressed bytes are [in_i - (1 if bits_i else 0), in_{i+1}) (the last ends at the blob's end).

Trust chain: the image manifest is verified by its digest; its annotation names the SOCI index manifest's digest;
that manifest (fetched and verified by digest) names each zTOC's digest and size; the zTOC blob is verified by that
digest; each fetched span is verified against the zTOC's span digest before it is inflated. What a range read
cannot check is the layer's own digest and diff_id (that needs every byte): a zTOC that lied about the tar's members
would go unnoticed, as with eStargz; `--whole-layers` turns range reads off. Anything that does not verify raises
NotSeekable and the caller reads the layer whole.
"""

from __future__ import annotations

import struct
import tarfile
import zlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..sources.base import LayerRef
from ..sources.read_options import Limits
from .layer_index import LayerBuilder, LayerIndex
from .seekable import TYPES, Counted, NotSeekable, ReadRange, check_digest
from .tarwalk import TarHeader
from .wants import WantSet

MAX_SPAN_BYTES = 64 * 1024**2  # one range request; upstream's default span is 4 MiB
KEPT_SPAN_BYTES = 32 * 1024**2  # verified spans kept for the next files
WINDOW = 32768
CHECKPOINT_BYTES = 8 + 8 + 1 + WINDOW
BLOCK = 512  # a tar header
STEP = 4 * 1024**2  # inflated bytes per zlib call
HEADER_BYTES = 4 + 8


@dataclass(frozen=True)
class Checkpoint:
    compressed: int  # `in`: the first full byte of the span's deflate data
    uncompressed: int  # `out`
    bits: int  # 0, or how many high bits of the byte before `in` start the span
    window: bytes  # the 32 KiB of uncompressed data before `out` (empty: none)


@dataclass(frozen=True)
class Member:
    name: str
    kind: str
    offset: int  # of its data in the uncompressed tar
    size: int
    mode: int
    link: str


@dataclass(frozen=True)
class Ztoc:
    version: str
    compressed_size: int
    uncompressed_size: int
    members: list[Member]
    span_digests: list[str]
    checkpoints: list[Checkpoint]
    tar: bool = False  # compression_algorithm Uncompressed: the layer is a plain tar, its spans are its bytes

    def span_start(self, span: int) -> int:
        point = self.checkpoints[span]
        return point.compressed - (1 if point.bits else 0)

    def span_end(self, span: int) -> int:
        return self.checkpoints[span + 1].compressed if span + 1 < len(self.checkpoints) else self.compressed_size

    def span_of(self, offset: int) -> int:
        """The last span whose checkpoint is at or before uncompressed `offset`."""
        lo, hi = 0, len(self.checkpoints) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.checkpoints[mid].uncompressed <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo


def parse_checkpoints(blob: bytes, compressed_size: int) -> list[Checkpoint]:
    """The zinfo blob's checkpoints (gzip_zinfo.c blob_to_zinfo), v2 or v1; NotSeekable when malformed."""
    if len(blob) < HEADER_BYTES:
        raise NotSeekable("the zTOC's checkpoints are shorter than their header")
    count = struct.unpack_from("<i", blob)[0]
    if count < 1:
        raise NotSeekable(f"the zTOC lists {count} checkpoints")
    if len(blob) == HEADER_BYTES + CHECKPOINT_BYTES * count:
        points = []
    elif len(blob) == HEADER_BYTES + CHECKPOINT_BYTES * (count - 1):  # v1: checkpoint 0 left out
        points = [Checkpoint(10, 0, 0, b"")]
    else:
        raise NotSeekable(f"the zTOC's checkpoints are {len(blob)} bytes, not {count} checkpoints")
    pos = HEADER_BYTES
    while len(points) < count:
        compressed, uncompressed, bits = struct.unpack_from("<qqB", blob, pos)
        window = blob[pos + 17 : pos + CHECKPOINT_BYTES]
        points.append(Checkpoint(compressed, uncompressed, bits, window if uncompressed else b""))
        pos += CHECKPOINT_BYTES
    for before, after in zip(points, points[1:]):
        if not (before.compressed < after.compressed and before.uncompressed <= after.uncompressed):
            raise NotSeekable("the zTOC's checkpoints are out of order")
    if any(p.bits > 7 or p.compressed < 1 for p in points) or points[-1].compressed > compressed_size:
        raise NotSeekable("a zTOC checkpoint is outside the blob")
    return points


def parse_ztoc(blob: bytes) -> Ztoc:
    """The zTOC flatbuffer (ztoc/fbs/ztoc.fbs) read with the flatbuffers runtime's tables; NotSeekable when it is
    malformed or not a gzip zTOC."""
    try:
        return _parse_ztoc(blob)
    # offsets outside the buffer; TypeError: the runtime's own check of a negative offset
    except (IndexError, TypeError, struct.error, UnicodeDecodeError, ValueError) as exc:
        raise NotSeekable(f"the zTOC is not a valid flatbuffer ({exc.__class__.__name__})") from None


def _parse_ztoc(blob: bytes) -> Ztoc:
    from flatbuffers import number_types as n  # type: ignore[import-untyped]  # ships no type hints
    from flatbuffers.table import Table  # type: ignore[import-untyped]  # ships no type hints

    buf = bytearray(blob)
    root = Table(buf, struct.unpack_from("<I", buf, 0)[0])

    def field(tab: Table, slot: int) -> int:
        return int(tab.Offset(4 + 2 * slot))  # vtable entry of field `slot` (0-based in the schema)

    def text(tab: Table, slot: int) -> str:
        o = field(tab, slot)
        return tab.String(o + tab.Pos).decode("utf-8") if o else ""

    def scalar(tab: Table, slot: int, flags: Any, default: int = 0) -> int:
        o = field(tab, slot)
        return int(tab.Get(flags, o + tab.Pos)) if o else default

    def sub(tab: Table, slot: int) -> Table | None:
        o = field(tab, slot)
        return Table(buf, tab.Indirect(o + tab.Pos)) if o else None

    def vector(tab: Table, slot: int) -> tuple[int, int]:
        o = field(tab, slot)
        return (tab.Vector(o), tab.VectorLen(o)) if o else (0, 0)

    # Ztoc: version 0, build_tool_identifier 1, compressed_archive_size 2, uncompressed_archive_size 3, toc 4,
    # compression_info 5
    version = text(root, 0)
    compressed = scalar(root, 2, n.Int64Flags)
    uncompressed = scalar(root, 3, n.Int64Flags)
    info = sub(root, 5)
    if info is None or compressed <= 0:
        raise NotSeekable("the zTOC has no compression info or archive size")
    # CompressionInfo: compression_algorithm 0 (byte, Gzip = 1 default, Uncompressed = 2), max_span_id 1,
    # span_digests 2, checkpoints 3
    algorithm = scalar(info, 0, n.Int8Flags, 1)
    if algorithm not in (1, 2):
        raise NotSeekable(f"the zTOC's compression algorithm {algorithm} is neither gzip nor uncompressed")
    start, count = vector(info, 2)
    digests = [info.String(start + 4 * i).decode("utf-8") for i in range(count)]
    cstart, clen = vector(info, 3)
    if algorithm == 2:  # ztoc/compression/tar_zinfo.go: a TarZinfo flatbuffer, fixed spans of the tar itself
        checkpoints = tar_checkpoints(bytes(buf[cstart : cstart + clen]), compressed)
        if uncompressed != compressed:
            raise NotSeekable("an uncompressed layer's zTOC gives two sizes")
    else:
        checkpoints = parse_checkpoints(bytes(buf[cstart : cstart + clen]), compressed)
    if scalar(info, 1, n.Int32Flags) + 1 != len(checkpoints) or len(digests) != len(checkpoints):
        raise NotSeekable("the zTOC's span count, span digests and checkpoints disagree")
    members: list[Member] = []
    toc = sub(root, 4)
    mstart, mcount = vector(toc, 0) if toc is not None else (0, 0)
    for i in range(mcount):
        entry = Table(buf, toc.Indirect(mstart + 4 * i)) if toc is not None else root
        # FileMetadata: name 0, type 1, uncompressed_offset 2, uncompressed_size 3, linkname 4, mode 5
        members.append(
            Member(
                text(entry, 0),
                text(entry, 1),
                scalar(entry, 2, n.Int64Flags),
                scalar(entry, 3, n.Int64Flags),
                scalar(entry, 5, n.Int64Flags),
                text(entry, 4),
            )
        )
    return Ztoc(version, compressed, uncompressed, members, digests, checkpoints, tar=algorithm == 2)


def tar_checkpoints(blob: bytes, size: int) -> list[Checkpoint]:
    """An uncompressed layer's spans (zinfo.fbs TarZinfo: version 0, span_size 1, size 2) as checkpoints at each
    span's start, where compressed and uncompressed offsets are the same; NotSeekable when malformed."""
    from flatbuffers import number_types as n
    from flatbuffers.table import Table

    try:
        buf = bytearray(blob)
        root = Table(buf, struct.unpack_from("<I", buf, 0)[0])

        def scalar(slot: int, flags: Any) -> int:
            o = int(root.Offset(4 + 2 * slot))
            return int(root.Get(flags, o + root.Pos)) if o else 0

        span_size, total = scalar(1, n.Int64Flags), scalar(2, n.Int64Flags)
    except (IndexError, TypeError, struct.error) as exc:
        raise NotSeekable(f"the zTOC's tar spans are not a valid flatbuffer ({exc.__class__.__name__})") from None
    if span_size <= 0 or total != size or -(-size // span_size) > 1 << 20:
        raise NotSeekable("the zTOC's tar spans do not fit the layer")
    return [Checkpoint(k, k, 0, b"") for k in range(0, size, span_size)]


def _prefix(bits: int) -> bytes:
    """Deflate blocks that output nothing and end `8 - bits` bits into a byte, so Python's zlib (which has no
    inflatePrime) resumes at a checkpoint that starts mid-byte with the byte's alignment kept (stored blocks align
    to the stream's bytes): an empty dynamic block of 95 bits (7 mod 8) and empty fixed blocks of 10 bits (2 mod 8).
    The returned bytes' last byte holds only the prefix's low bits; the caller ORs in the span's first byte."""
    acc = n = 0

    def put(value: int, width: int) -> None:
        nonlocal acc, n
        acc |= (value & ((1 << width) - 1)) << n
        n += width

    def code(value: int, width: int) -> None:  # Huffman codes go most significant bit first
        put(int(format(value, f"0{width}b")[::-1], 2), width)

    want = 8 - bits
    if want % 2:
        # RFC 1951 3.2.7: BTYPE=10, HLIT=257, HDIST=1, HCLEN=19; code lengths 18->1, 0->2, 1->2; literal/length
        # lengths: 256 zeros (18 with 138 and 118), then 1 for end-of-block; the one distance length 0
        put(0, 1)
        put(2, 2)
        put(0, 5)
        put(0, 5)
        put(15, 4)
        lengths = {18: 1, 0: 2, 1: 2}
        for symbol in (16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15):
            put(lengths.get(symbol, 0), 3)
        code(0, 1)
        put(127, 7)
        code(0, 1)
        put(107, 7)
        code(3, 2)
        code(2, 2)
        code(0, 1)  # end of block
        want = (want - 7) % 8
    for _ in range(want // 2):
        put(0, 1)
        put(1, 2)
        put(0, 7)  # an empty fixed-Huffman block
    return acc.to_bytes((n + 7) // 8, "little")


class SpanReader:
    """Uncompressed bytes of the layer's tar, read from the spans that hold them, each span verified."""

    def __init__(self, layer: LayerRef, ztoc: Ztoc, read_range: ReadRange):
        self._layer, self._ztoc, self._read_range = layer, ztoc, read_range
        # the last verified spans: files are read in tar order and many small ones share a span
        self._kept: OrderedDict[int, bytes] = OrderedDict()

    def _span(self, span: int) -> bytes:
        if span in self._kept:
            self._kept.move_to_end(span)
            return self._kept[span]
        start, end = self._ztoc.span_start(span), self._ztoc.span_end(span)
        if not 0 <= start < end <= self._ztoc.compressed_size or end - start > MAX_SPAN_BYTES:
            raise NotSeekable(f"span {span} is outside the blob or over {MAX_SPAN_BYTES} bytes")
        data = self._read_range(self._layer, start, end)
        check_digest(data, self._ztoc.span_digests[span], f"span {span} does not match its zTOC digest")
        self._kept[span] = data
        while sum(len(kept) for kept in self._kept.values()) > KEPT_SPAN_BYTES and len(self._kept) > 1:
            self._kept.popitem(last=False)
        return data

    def feed(self, offset: int, size: int, consume: Callable[[bytes], object]) -> None:
        """Bytes [offset, offset + size) of the tar to `consume`, span by span."""
        ztoc = self._ztoc
        span = ztoc.span_of(offset)
        if ztoc.tar:  # the spans are the tar's own bytes
            while size:
                data = self._span(span)
                at = offset - ztoc.checkpoints[span].compressed
                piece = data[at : at + size]
                if not piece:
                    raise NotSeekable("a member's data runs past the end of the layer")
                consume(piece)
                offset, size, span = offset + len(piece), size - len(piece), span + 1
            return
        point = ztoc.checkpoints[span]
        inflate = zlib.decompressobj(wbits=-15, zdict=point.window) if point.window else zlib.decompressobj(wbits=-15)
        data = self._span(span)
        if point.bits:
            prefix = bytearray(_prefix(point.bits))
            prefix[-1] |= data[0] & (0xFF << (8 - point.bits)) & 0xFF
            data = bytes(prefix) + data[1:]
        skip, left = offset - point.uncompressed, size
        while left:
            try:  # at most STEP bytes out per call: memory stays bounded whatever the span inflates to
                out = inflate.decompress(data, min(skip + left, STEP))
            except zlib.error as exc:
                raise NotSeekable(f"span {span} does not inflate ({exc})") from None
            data = inflate.unconsumed_tail
            if skip:
                cut = min(skip, len(out))
                out, skip = out[cut:], skip - cut
            out = out[:left]
            if out:
                consume(out)
                left -= len(out)
            if left and not data:  # this span's bytes are used up: on into the next
                if inflate.eof or span + 1 >= len(ztoc.checkpoints):
                    # a second gzip member (mgzip) is not followed here: the layer is read whole
                    raise NotSeekable("a member's data runs past the end of the (first) gzip stream")
                span += 1
                data = self._span(span)
                if ztoc.checkpoints[span].bits:
                    data = data[1:]  # its first byte ended the span before


def index_soci(layer: LayerRef, ztoc_blob: bytes, read_range: ReadRange, wants: WantSet, limits: Limits) -> LayerIndex:
    """The layer's index from its zTOC (already verified against the SOCI index's digest) and the wanted files'
    spans: the same index a whole read gives, without the uncompressed digest; `range_bytes` the span bytes fetched."""
    ztoc = parse_ztoc(ztoc_blob)
    if ztoc.tar != ("gzip" not in (layer.media_type or "")):
        raise NotSeekable("the zTOC's compression is not the layer's media type's")
    if layer.size is not None and layer.size != ztoc.compressed_size:
        raise NotSeekable(f"the zTOC is for a {ztoc.compressed_size}-byte blob, the layer is {layer.size}")
    if len(ztoc.members) > limits.max_entries:
        raise NotSeekable(f"the zTOC lists more than {limits.max_entries} members")
    counted = Counted(read_range)
    spans = SpanReader(layer, ztoc, counted)
    build = LayerBuilder(layer.layer_id, wants, limits, f"layer {layer.digest}")
    for m in sorted(ztoc.members, key=lambda m: m.offset):
        flag = TYPES.get(m.kind)
        if flag is None or m.size < 0 or m.offset < 0 or m.offset + m.size > ztoc.uncompressed_size:
            raise NotSeekable(f"zTOC member {m.name[:80]!r} has type {m.kind[:20]!r} or an extent outside the tar")
        build.add(TarHeader(m.name, flag, m.size, m.mode, m.link), *_data(spans, m))
    idx = build.finish()
    idx.range_bytes = counted.fetched
    return idx


def _data(
    spans: SpanReader, m: Member
) -> tuple[Callable[[int], bytes | None], Callable[[Callable[[memoryview | bytes], object]], bool]]:
    def read(limit: int) -> bytes | None:
        if m.size > limit or not m.size:
            return None  # as a streamed tar gives it (view/tarwalk.py read_data)
        _check_header(spans, m)
        parts: list[bytes] = []
        spans.feed(m.offset, m.size, parts.append)
        return b"".join(parts)

    def feed(consume: Callable[[memoryview | bytes], object]) -> bool:
        _check_header(spans, m)
        spans.feed(m.offset, m.size, consume)
        return True

    return read, feed


def _check_header(spans: SpanReader, m: Member) -> None:
    """The tar header right before a wanted file's data must be that member's (valid checksum, same size, and the
    same name where the header holds it whole): the spans are verified against the zTOC, this checks the zTOC's
    member list against the tar in them, so a zTOC pointing a name at another file's bytes is caught."""
    if m.offset < BLOCK:
        raise NotSeekable(f"zTOC member {m.name[:80]!r} has no room for its tar header")
    parts: list[bytes] = []
    spans.feed(m.offset - BLOCK, BLOCK, parts.append)
    try:
        header = tarfile.TarInfo.frombuf(b"".join(parts), "utf-8", "surrogateescape")
    except tarfile.TarError:
        raise NotSeekable(f"zTOC member {m.name[:80]!r}: no tar header before its data") from None
    short = header.name.removeprefix("./").rstrip("/")
    named = m.name.removeprefix("./").rstrip("/")
    if header.size != m.size or (len(named.encode()) <= 100 and short != named):  # longer names are in a PAX header
        raise NotSeekable(f"zTOC member {m.name[:80]!r} does not match the tar header before its data")
