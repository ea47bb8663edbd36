"""A layer's file index: every tar member with its data offset, so new wants re-read only the wanted files.

Written beside the layer cache after a fully verified read of the layer (its blob digest and its diff_id), keyed by
the blob digest alone: it depends on the layer's bytes, not on the wants, so it outlives a WANTS_FINGERPRINT bump or
a new extractor. When the layer cache misses because the wants changed, the members are replayed through the same
LayerBuilder a whole read feeds (view/layer_index.py), and only the members the new wants keep bytes of are read:

- a gzip blob readable by offset (a local file) with a seek-point index: inflated from the seek point before each
  wanted file (rapidgzip's import_index and seek; the index is the zran scheme in the indexed_gzip format: about
  every 4 MiB of output the compressed bit offset, the output offset and the 32 KiB window, written by the same
  verified read when rapidgzip inflated it, view/parallel_gzip.py);
- anything else (no seek index, zstd - one zstd frame cannot be entered in the middle -, a plain tar, a registry
  stream): inflated in order from the start up to the end of the last wanted file, without the tar walk.

Trust: bytes inflated from a seek point cannot be checked against the layer's digest. They are trusted because the
index was written only after a verified full read of that very digest, and the blob is re-read only when its size is
still the size recorded (a registry blob read by HTTP Range: each fetched 1 MiB span must match the sha256 that
read kept for it); each wanted file's tar header (the 512 bytes before its data) must still verify and name
the recorded type, and each file must give exactly its recorded size. Any inconsistency raises Stale: the caller
drops the record and reads the layer whole, with one note.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import stat
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import safejson
from ..sources.read_options import Limits
from ..streams import ByteStream, readinto_of
from .cache import put_gzip
from .layer_index import LayerBuilder, LayerIndex
from .tarwalk import BLOCK, REGTYPES, TarHeader, _checksum_ok
from .wants import WantSet

# 2: the spans' digests; 3: seek points of view/zran.py; 4: a first line with the sha256 of everything after it (the
# windows are trusted bytes no later check covers). Older records are not found: the layer is read whole once.
FORMAT = 4
# the records of one layer, held while the layer is read: a member costs its name, its link target and about
# MEMBER_OVERHEAD bytes of Python objects; past MAX_RECORD_BYTES (about 500,000 members: a CUDA layer has tens of
# thousands) the layer gets no file index and is read whole after a wants change
MAX_RECORD_BYTES = 128 * 1024**2
MEMBER_OVERHEAD = 256
MAX_SEEK_BYTES = 256 * 1024**2  # a seek index holds a 32 KiB window per ~4 MiB of output: ~8 MB per GB
READ_CHUNK = 1 << 20
# a re-read by HTTP Range fetches whole SPANs of the blob, each checked against the sha256 the verified read kept
# (rapidgzip reads in smaller pieces near each seek point); 32 bytes of digest per MiB: 128 KB for a 4 GB blob
SPAN = 1 << 20

# one member: name as in the tar, typeflag (latin-1), size, mode, link target, data offset, sparse
Member = tuple[str, str, int, int, str, int, bool]


class Stale(Exception):
    """The record does not match the layer (or cannot serve these wants): read the layer whole."""


@dataclass(frozen=True)
class FileIndex:
    blob_digest: str  # what the record is keyed by (the blob as fetched)
    layer_id: str  # how facts name the layer (a LayerIndex's digest)
    compression: str  # "gzip", "zstd" or "tar" (view/compression.sniff)
    blob_size: int  # compressed bytes; a re-read of a local blob of another size is refused
    uncompressed_bytes: int
    uncompressed_digest: str | None
    members: tuple[Member, ...]
    seek: bytes | None = field(default=None, repr=False)  # rapidgzip's exported index (indexed_gzip format)
    spans: bytes | None = field(default=None, repr=False)  # sha256 of every SPAN of the blob, 32 bytes each


class Recorder:
    """Collects members as the tar walk yields them, with their data offsets; gives up past MAX_RECORD_BYTES."""

    def __init__(self) -> None:
        self.members: list[Member] | None = []
        self._bytes = 0

    def add(self, member: TarHeader, offset: int) -> None:
        if self.members is None:
            return
        self._bytes += len(member.name) + len(member.linkname) + MEMBER_OVERHEAD
        if self._bytes > MAX_RECORD_BYTES:
            self.members = None  # too large to be worth keeping: this layer is read whole after a wants change
            return
        self.members.append(
            (
                member.name,
                member.type.decode("latin-1"),
                member.size,
                member.mode,
                member.linkname,
                offset,
                bool(member.sparse is not None),
            )
        )


# -- the store --------------------------------------------------------------------------------------------------


class FileIndexStore:
    """Records under <cache root>/files/<format>/<algo>/<hex>.findex.gz, written atomically, read defensively."""

    def __init__(self, root: str, namespace: str) -> None:
        self.dir = os.path.join(root, hashlib.sha256(f"file-index {FORMAT}\n{namespace}".encode()).hexdigest()[:16])
        self.notes: list[str] = []  # one line per damaged record dropped (the layer is then read whole)

    def _path(self, digest: str) -> str:
        algo, _, hexpart = digest.partition(":")
        return os.path.join(self.dir, algo, hexpart + ".findex.gz")

    def get(self, digest: str) -> FileIndex | None:
        path = self._path(digest)
        try:
            with gzip.open(path, "rb") as fh:
                found = _decode(fh)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, EOFError, RecursionError, MemoryError) as exc:
            self.drop(digest)
            self.notes.append(f"layer {digest}: its file index is damaged ({str(exc)[:80]}); the layer is read whole")
            return None
        if found.blob_digest != digest:
            self.drop(digest)
            self.notes.append(f"layer {digest}: its file index names another layer; the layer is read whole")
            return None
        try:
            os.utime(path)  # recently used records survive `imgcheck cache prune`
        except OSError:
            pass
        return found

    def put(self, record: FileIndex) -> bool:
        return put_gzip(self._path(record.blob_digest), lambda fh: _encode(record, fh))

    def drop(self, digest: str) -> None:
        try:
            os.unlink(self._path(digest))
        except OSError:
            pass


def _encode(record: FileIndex, fh: Any) -> None:
    """A first line {"format", "sha256"}, then the head (scalars and members) as one JSON line, the seek index and the
    span digests; the sha256 covers every byte after the first line, so a record damaged or rewritten anywhere in its
    body (a window included, which no header check of a re-read reaches) is refused (_decode)."""
    seek = record.seek or b""
    spans = record.spans or b""
    head = {
        "blob_digest": record.blob_digest,
        "layer_id": record.layer_id,
        "compression": record.compression,
        "blob_size": record.blob_size,
        "uncompressed_bytes": record.uncompressed_bytes,
        "uncompressed_digest": record.uncompressed_digest,
        "seek_bytes": len(seek) if record.seek is not None else None,
        "spans_bytes": len(spans) if record.spans is not None else None,
        "members": [list(m) for m in record.members],
    }
    body = json.dumps(head, separators=(",", ":")).encode() + b"\n"
    digest = hashlib.sha256(body)
    digest.update(seek)
    digest.update(spans)
    fh.write(json.dumps({"format": FORMAT, "sha256": digest.hexdigest()}).encode() + b"\n")
    fh.write(body)
    fh.write(seek)
    fh.write(spans)


class _Hashed:
    """The record's body as _decode reads it, hashed on the way (readline and read are all it uses)."""

    def __init__(self, fh: Any) -> None:
        self._fh, self.sha256 = fh, hashlib.sha256()

    def readline(self) -> bytes:
        line: bytes = self._fh.readline()
        self.sha256.update(line)
        return line

    def read(self, n: int) -> bytes:
        data: bytes = self._fh.read(n)
        self.sha256.update(data)
        return data


def _want(value: object, kind: type, what: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ValueError(f"file index: {what} has the wrong type")
    return value


def _decode(raw: Any) -> FileIndex:
    first = _want(safejson.loads(raw.readline(256), "file index", ValueError), dict, "document")
    if first.get("format") != FORMAT:
        raise ValueError("file index format")
    recorded = _want(first.get("sha256"), str, "sha256")
    fh = _Hashed(raw)
    doc = _want(safejson.loads(fh.readline(), "file index", ValueError), dict, "document")
    members: list[Member] = []
    for row in _want(doc["members"], list, "members"):
        if not isinstance(row, list) or len(row) != 7:
            raise ValueError("file index: a member has the wrong shape")
        name, typ, size, mode, link, offset, sparse = row
        if _want(size, int, "size") < 0 or _want(offset, int, "offset") < 0:
            raise ValueError("file index: a negative size or offset")
        members.append(
            (
                _want(name, str, "name"),
                _want(typ, str, "type"),
                size,
                _want(mode, int, "mode"),
                _want(link, str, "link"),
                offset,
                _want(sparse, bool, "sparse"),
            )
        )
    seek_bytes = doc.get("seek_bytes")
    seek = None
    if seek_bytes is not None:
        n = _want(seek_bytes, int, "seek_bytes")
        if not 0 <= n <= MAX_SEEK_BYTES:
            raise ValueError("file index: seek index size out of bounds")
        seek = fh.read(n)
        if len(seek) != n:
            raise ValueError("file index: truncated seek index")
    spans = None
    spans_bytes = doc.get("spans_bytes")
    if spans_bytes is not None:
        n = _want(spans_bytes, int, "spans_bytes")
        if not 0 <= n <= MAX_SEEK_BYTES or n % 32:
            raise ValueError("file index: span digests out of bounds")
        spans = fh.read(n)
        if len(spans) != n:
            raise ValueError("file index: truncated span digests")
    if fh.read(1):
        raise ValueError("file index: bytes after the seek index")
    if fh.sha256.hexdigest() != recorded:
        raise ValueError("file index: its content does not match the sha256 recorded when it was written")
    digest = doc.get("uncompressed_digest")
    return FileIndex(
        blob_digest=_want(doc["blob_digest"], str, "blob_digest"),
        layer_id=_want(doc["layer_id"], str, "layer_id"),
        compression=_want(doc["compression"], str, "compression"),
        blob_size=_want(doc["blob_size"], int, "blob_size"),
        uncompressed_bytes=_want(doc["uncompressed_bytes"], int, "uncompressed_bytes"),
        uncompressed_digest=None if digest is None else _want(digest, str, "uncompressed_digest"),
        members=tuple(members),
        seek=seek,
        spans=spans,
    )


# -- reading wanted files by offset -------------------------------------------------------------------------------


GZIDX_MAGIC = b"GZIDX"
GZIDX_HEAD = struct.Struct(
    "<5sBBQQIII"
)  # magic, version, flags, compressed size, uncompressed size, spacing, window, n
GZIDX_POINT = struct.Struct("<QQBB")  # compressed offset, uncompressed offset, bits, has a window
WINDOW = 32768


def check_seek_index(seek: bytes, record: FileIndex) -> None:
    """Stale unless `seek` is a well-formed indexed_gzip index (version 1, as rapidgzip exports it) of this blob.

    rapidgzip trusts the index it imports: offsets past the blob end in a failed call from one of its threads, which
    aborts the process. So the structure is checked here first: sizes, every point in order and in bounds, and
    exactly one 32 KiB window per point that says it has one."""
    if len(seek) < GZIDX_HEAD.size:
        raise Stale("the seek index is truncated")
    magic, version, _flags, csize, usize, _spacing, window, count = GZIDX_HEAD.unpack_from(seek)
    if magic != GZIDX_MAGIC or version != 1 or window != WINDOW:
        raise Stale("the seek index is not an indexed_gzip version 1 index")
    if csize != record.blob_size or usize != record.uncompressed_bytes:
        raise Stale("the seek index was written for another blob")
    at = GZIDX_HEAD.size
    if count < 1 or at + count * GZIDX_POINT.size > len(seek):
        raise Stale("the seek index's point count does not fit its size")
    windows = 0
    last_c = last_u = -1
    for _ in range(count):
        c, u, bits, has_window = GZIDX_POINT.unpack_from(seek, at)
        at += GZIDX_POINT.size
        if not (last_c <= c <= csize and last_u <= u <= usize and bits < 8 and has_window in (0, 1)):
            raise Stale("the seek index's points are out of order or out of bounds")
        last_c, last_u = c, u
        windows += has_window
    if at + windows * WINDOW != len(seek):
        raise Stale("the seek index's windows do not match its points")


class _Source:
    """Uncompressed bytes of the layer by offset. `inflated`: uncompressed bytes produced; `compressed`: read."""

    inflated = 0

    def compressed(self) -> int:
        raise NotImplementedError

    def seek(self, offset: int) -> None:
        raise NotImplementedError

    def readinto(self, buffer: memoryview) -> int:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class StreamSource(_Source):
    """The layer's uncompressed stream, read in order: a seek forward inflates and discards what lies between."""

    def __init__(self, raw: ByteStream, counted: _CountedRaw, stream: Any) -> None:
        # the stream is kept referenced: collecting it would close the reader readinto_of gives (gzip's buffer)
        self._raw, self._counted, self._stream, self._readinto = raw, counted, stream, readinto_of(stream)
        self.pos = 0
        self._scratch = memoryview(bytearray(READ_CHUNK))

    @classmethod
    def open(cls, raw: ByteStream) -> StreamSource:
        from .compression import decompressed

        counted = _CountedRaw(raw)
        return cls(raw, counted, decompressed(counted))

    def compressed(self) -> int:
        return self._counted.count

    def seek(self, offset: int) -> None:
        if offset < self.pos:
            raise Stale("the file index lists members out of order")
        while self.pos < offset:
            n = self.readinto(self._scratch[: min(READ_CHUNK, offset - self.pos)])
            if not n:
                raise Stale("the layer ends before a member the file index names")

    def readinto(self, buffer: memoryview) -> int:
        n = self._readinto(buffer)
        self.pos += n
        self.inflated += n
        return n

    def close(self) -> None:
        close = getattr(self._raw, "close", None)
        if close:
            close()


class _CountedRaw:
    def __init__(self, raw: ByteStream) -> None:
        self._raw, self._readinto = raw, readinto_of(raw)
        self.count = 0

    def read(self, n: int = -1) -> bytes:
        data = self._raw.read(n)
        self.count += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        n = self._readinto(buffer)
        self.count += n
        return n

    def close(self) -> None:
        close = getattr(self._raw, "close", None)
        if close:
            close()


class SeekSource(_Source):
    """A gzip blob inflated from the seek point before each offset (view/zran.py), its bytes read by `read_at` (a
    local file by pread, or a RangeFile over a registry blob, each span checked against its kept digest)."""

    def __init__(self, read_at: Callable[[int, int], bytes | None], record: FileIndex) -> None:
        from . import zran

        z = zran.lib()
        if z is None or record.seek is None:
            raise Stale("no inflate that reads from seek points is installed")
        check_seek_index(record.seek, record)
        size = record.blob_size

        def read_blob(offset: int, n: int) -> bytes:
            data = read_at(offset, max(0, min(n, size - offset)))
            if data is None:
                raise Stale("the blob could not be read where the seek index points")
            return data

        try:
            self._reader = zran.PointReader(z, record.seek, read_blob)
        except ValueError as exc:
            raise Stale(str(exc)) from None
        self._scratch = memoryview(bytearray(READ_CHUNK))

    def compressed(self) -> int:
        return self._reader.compressed

    def seek(self, offset: int) -> None:
        self._reader.seek(offset, self._scratch)

    def readinto(self, buffer: memoryview) -> int:
        n = self._reader.readinto(buffer)
        self.inflated += n
        return n

    def close(self) -> None:
        self._reader.close()


class DirectSource(_Source):
    """An uncompressed layer readable by offset (a local blob, a docker-archive member): each wanted file read
    where it lies, nothing else."""

    def __init__(self, read_at: Callable[[int, int], bytes | None]) -> None:
        self._read_at = read_at
        self._pos = 0

    def compressed(self) -> int:
        return self.inflated  # no compression: what was read is what was needed

    def seek(self, offset: int) -> None:
        self._pos = offset

    def readinto(self, buffer: memoryview) -> int:
        data = self._read_at(self._pos, len(buffer))
        if data is None:
            raise Stale("the layer is no longer readable by offset")
        n = len(data)
        buffer[:n] = data
        self._pos += n
        self.inflated += n
        return n

    def close(self) -> None:
        """The caller closes the layer's stream."""


def _positional(raw: ByteStream) -> Callable[[int, int], bytes | None] | None:
    """How to read `raw`'s blob by offset, when it can be: the source's read_at (sources/base.py VerifyingReader,
    sources/blobstore.py archive members), or a regular file read with pread."""
    read_at = getattr(raw, "read_at", None)
    if read_at is not None:
        return read_at if read_at(0, 0) is not None else None  # probed: None when not by offset
    fileno = getattr(raw, "fileno", None)
    try:
        fd = fileno() if fileno is not None else None
        if fd is None or not stat.S_ISREG(os.fstat(fd).st_mode) or os.lseek(fd, 0, os.SEEK_CUR) != 0:
            return None
    except (OSError, ValueError, io.UnsupportedOperation):
        return None
    return lambda offset, n: os.pread(fd, n, offset)


def _read_exact(source: _Source, offset: int, n: int) -> bytes:
    source.seek(offset)
    out = bytearray(n)
    view, got = memoryview(out), 0
    while got < n:
        k = source.readinto(view[got:])
        if not k:
            raise Stale("the layer ends inside a member the file index names")
        got += k
    return bytes(out)


class _Member:
    """One wanted member's bytes on demand, its tar header checked first (the inconsistency check)."""

    def __init__(self, source: _Source, member: Member) -> None:
        self._source, self._m = source, member
        self._header_checked = False

    def _check_header(self) -> None:
        name, typ, size, _mode, _link, offset, _sparse = self._m
        if offset < BLOCK:
            raise Stale(f"{name}: its data offset leaves no room for its header")
        header = _read_exact(self._source, offset - BLOCK, BLOCK)
        total = sum(header)
        if total == 0 or not _checksum_ok(header, total) or header[156:157].decode("latin-1") != typ:
            raise Stale(f"{name}: no matching tar header before its recorded offset")
        self._header_checked = True

    def read_data(self, limit: int) -> bytes | None:
        _name, _typ, size, _mode, _link, offset, sparse = self._m
        if sparse:
            raise Stale("a wanted file is a GNU sparse member")
        if size == 0 or size > limit:
            return None  # as the tar walk gives it (view/tarwalk.py read_data)
        self._check_header()
        return _read_exact(self._source, offset, size)

    def feed_data(self, consume: Callable[[memoryview], object]) -> bool:
        _name, _typ, size, _mode, _link, offset, sparse = self._m
        if sparse:
            return False  # as the tar walk: a sparse member is not streamed
        self._check_header()
        self._source.seek(offset)
        buf = memoryview(bytearray(min(READ_CHUNK, max(size, 1))))
        left = size
        while left:
            k = self._source.readinto(buf[: min(left, len(buf))])
            if not k:
                raise Stale("the layer ends inside a member the file index names")
            consume(buf[:k])
            left -= k
        return True


def reindex(record: FileIndex, source: _Source, wants: WantSet, limits: Limits) -> LayerIndex:
    """The layer's index for `wants` from `record`, the wanted members' bytes read from `source`: the same index a
    whole read gives (the same LayerBuilder, fed the same members in the same order)."""
    build = LayerBuilder(record.layer_id, wants, limits, f"layer {record.blob_digest}")
    for m in record.members:
        name, typ, size, mode, link, _offset, sparse = m
        header = TarHeader(name, typ.encode("latin-1"), size, mode, link, sparse=() if sparse else None)
        if header.type in REGTYPES:
            member = _Member(source, m)
            build.add(header, member.read_data, member.feed_data)
        else:
            build.add(header, _no_data, _no_feed)
    idx = build.finish()
    idx.uncompressed_bytes = record.uncompressed_bytes
    idx.uncompressed_digest = record.uncompressed_digest
    idx.reread_bytes = source.inflated
    return idx


def _no_data(_limit: int) -> bytes | None:
    return None


def _no_feed(_consume: Callable[[memoryview], object]) -> bool:
    return False


def record_of(idx: LayerIndex, blob_digest: str, blob_size: int | None) -> FileIndex | None:
    """The file index a whole, verified read of a layer gives (None when the walk gave up recording)."""
    if idx.walk is None or blob_size is None or idx.from_file_index or idx.range_bytes:
        return None
    compression, members = idx.walk
    return FileIndex(
        blob_digest=blob_digest,
        layer_id=idx.digest,
        compression=compression,
        blob_size=blob_size,
        uncompressed_bytes=idx.uncompressed_bytes,
        uncompressed_digest=idx.uncompressed_digest,
        members=tuple(members),
        seek=idx.seek_index if compression == "gzip" else None,
        spans=idx.seek_spans if compression == "gzip" and idx.seek_index is not None else None,
    )


def open_source(
    raw: ByteStream | None,
    record: FileIndex,
    blob_size: int | None,
    read_range: Callable[[int, int], bytes] | None = None,
) -> _Source:
    """Where a re-read takes the wanted files from: the seek points of a local gzip blob of the recorded size, or of
    a registry blob by HTTP Range (`read_range(start, end)`, with `raw` None: no stream opened), else the blob's
    stream inflated in order. Stale when the blob is not the size the record was written for."""
    if blob_size is not None and blob_size != record.blob_size:
        raise Stale(f"the blob is {blob_size} bytes, the file index was written for {record.blob_size}")
    if record.compression == "tar" and raw is not None:
        read_at = _positional(raw)
        if read_at is not None:
            return DirectSource(read_at)
    seekable = (
        record.seek is not None
        and record.compression == "gzip"
        and blob_size == record.blob_size
        and seek_points_readable()
    )
    read_at = _positional(raw) if seekable and raw is not None else None
    if read_at is not None:
        return SeekSource(read_at, record)  # a local blob of the recorded size (checked above)
    ranged = read_range is not None and blob_size == record.blob_size and _spans_cover(record)
    if ranged and seekable:
        assert read_range is not None and record.spans is not None  # for mypy: `ranged` says so
        return SeekSource(RangeFile(read_range, record.blob_size, record.spans).read_at, record)
    if raw is None:
        raise Stale("the blob cannot be read by range here")
    return StreamSource.open(raw)


# A gzip layer from this compressed size gets seek points on its cold read (view/zran.py): below it a re-read in
# order costs little. IMGCHECK_SEEK_INDEX_MIN overrides it (bytes; 0: never).
SEEK_MIN = 16 * 1024**2


def seek_spacing(layer: Any) -> int | None:
    """The compressed bytes between seek points for a layer's cold read (a LayerRef: its media type and size), or
    None: no points (not gzip by its media type, too small, or no inflate that takes them). About MAX_POINTS of them
    per layer, SPAN apart at least."""
    from . import zran

    size = layer.size or 0
    media = layer.media_type or ""
    value = os.environ.get("IMGCHECK_SEEK_INDEX_MIN", "").strip()
    try:
        threshold = int(value) if value else SEEK_MIN
    except ValueError:
        threshold = SEEK_MIN
    if threshold <= 0 or size < threshold or "gzip" not in media or zran.lib() is None:
        return None
    return max(SPAN, -(-size // zran.MAX_POINTS))


def seek_points_readable() -> bool:
    """Whether an inflate that starts at seek points (view/zran.py: zlib-ng or zlib) can be reached."""
    from . import zran

    return zran.lib() is not None


def _spans_cover(record: FileIndex) -> bool:
    """Whether the record has one span digest for every SPAN of its blob (a Range re-read checks each)."""
    return record.spans is not None and len(record.spans) == 32 * -(-record.blob_size // SPAN)


class RangeFile:
    """A blob in a registry as a file readable by offset, for rapidgzip: each read fetches the whole SPAN(s) around
    it by HTTP Range and checks each span against the sha256 the verified read of this digest kept; a span that does
    not match raises Stale (the caller reads the layer whole). The last span fetched is kept for the small reads
    rapidgzip makes near a seek point."""

    def __init__(self, read_range: Callable[[int, int], bytes], size: int, spans: bytes) -> None:
        self._read_range, self._size, self._spans = read_range, size, spans
        self._pos = 0
        self._block_at, self._block = 0, b""

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}.get(whence, 0)
        self._pos = min(max(0, base + offset), self._size)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def _fetch(self, want: int) -> None:
        first = self._pos // SPAN
        last = (min(self._size, self._pos + want) - 1) // SPAN
        start, end = first * SPAN, min(self._size, (last + 1) * SPAN)
        data = self._read_range(start, end)
        if len(data) != end - start:
            raise Stale(f"the registry sent {len(data)} bytes for a range of {end - start}")
        for k in range(first, last + 1):
            at = (k - first) * SPAN
            if hashlib.sha256(data[at : at + SPAN]).digest() != self._spans[32 * k : 32 * k + 32]:
                raise Stale(
                    f"bytes {k * SPAN}-{min(self._size, (k + 1) * SPAN)} from the registry do not match the digest kept"
                )
        self._block_at, self._block = start, data

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), self._size - self._pos)
        if want <= 0:
            return 0
        if not (self._block_at <= self._pos and self._pos + want <= self._block_at + len(self._block)):
            self._fetch(want)
        at = self._pos - self._block_at
        view[:want] = self._block[at : at + want]
        self._pos += want
        return want

    def read_at(self, offset: int, n: int) -> bytes:
        self.seek(offset)
        out = bytearray()
        while len(out) < n:
            chunk = bytearray(n - len(out))
            k = self.readinto(chunk)
            if not k:
                break
            out += chunk[:k]
        return bytes(out)

    def close(self) -> None:
        self._block = b""


def reread(
    raw: ByteStream | None,
    record: FileIndex,
    blob_size: int | None,
    wants: WantSet,
    limits: Limits,
    read_range: Callable[[int, int], bytes] | None = None,
) -> LayerIndex:
    """The layer's index for `wants`, only the wanted files read (see the module's docstring). Stale on any
    inconsistency; the limits' errors are the layer's own, as from a whole read. `read_range`: the blob in a registry
    by HTTP Range, used instead of `raw` (None) when the record has seek points: the bytes are trusted as a local
    blob's are, because the record was written after a verified full read of this digest and `blob_size` (from the
    verified manifest) is the recorded size; each wanted file's tar header and size are still checked."""
    from ..errors import LimitExceededError

    source = open_source(raw, record, blob_size, read_range)
    try:
        idx = reindex(record, source, wants, limits)
    except (Stale, LimitExceededError):
        raise
    except Exception as exc:  # noqa: BLE001  (a decompressor or rapidgzip error, a bad header: read whole)
        raise Stale(f"{type(exc).__name__}: {' '.join(str(exc).split())[:120]}") from None  # one line
    finally:
        source.close()
    idx.reread_compressed = source.compressed()
    idx.from_file_index = True
    return idx
