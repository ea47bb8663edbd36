"""A tar header walk over a stream that skips unwanted file data without parsing or copying it.

tarfile's stream mode builds a TarInfo per member and skips data through small reads; on large
layers that costs as much as the decompression itself. This walker reads the stream in large
chunks into one reused buffer (the decompressor writes straight into it), parses only the
512-byte headers (ustar, GNU long names, PAX path/linkpath/size), and moves past file data by
offset arithmetic. Every header's checksum is verified.

It reads what Go's archive/tar (and so Docker and containerd) reads, not what a header could be
taken to mean (golang/go: src/archive/tar/reader.go, Reader.next): a global PAX header ('g') is
an entry of its own and changes no later member; a '\0' typeflag on a name ending in '/' is a
directory (pre-POSIX tars); PAX-format GNU sparse files (0.0, 0.1 and 1.0) are the file
GNU.sparse.name of GNU.sparse.size / realsize bytes, holes read as zeros.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..errors import BadInputError
from ..inroot import NAME_MAX, PATH_MAX
from ..streams import ReadintoStream, readinto_of

BLOCK = 512
CHUNK = 1 << 20
MAX_META = 1 << 20  # GNU long names and PAX records: no legitimate one is near a megabyte
MAX_SPARSE_ENTRIES = 1 << 16  # Go's archive/tar allows about as many (maxSpecialFileSize / 16)

REGTYPES = (b"0", b"\0", b"7")
LNKTYPE, SYMTYPE, DIRTYPE = b"1", b"2", b"5"
GNU_LONGNAME, GNU_LONGLINK, PAX_LOCAL, PAX_GLOBAL, GNU_SPARSE = b"L", b"K", b"x", b"g", b"S"
META_TYPES = (GNU_LONGNAME, GNU_LONGLINK, PAX_LOCAL, PAX_GLOBAL)
NO_DATA_TYPES = (LNKTYPE, SYMTYPE, DIRTYPE, b"3", b"4", b"6")  # regardless of the size field


@dataclass(slots=True)
class TarHeader:
    name: str
    type: bytes
    size: int  # the file's size (for a sparse file its logical size, holes included)
    mode: int
    linkname: str
    sparse: tuple[tuple[int, int], ...] | None = None  # (offset, length) of the stored chunks

    def isfile(self) -> bool:
        return self.type in REGTYPES

    def isdir(self) -> bool:
        return self.type == DIRTYPE

    def issym(self) -> bool:
        return self.type == SYMTYPE

    def islnk(self) -> bool:
        return self.type == LNKTYPE


class TarFormatError(BadInputError):
    pass


def _number(field: bytes, what: str) -> int:
    if field and field[0] & 0x80:  # GNU base-256 for values that do not fit in octal
        if field[0] == 0xFF:
            raise TarFormatError(f"negative {what} in tar header")
        return int.from_bytes(field, "big") & ~(0x80 << (8 * (len(field) - 1)))
    text = field.partition(b"\0")[0].strip(b" ")
    if not text:
        return 0
    try:
        return int(text, 8)
    except ValueError:
        raise TarFormatError(f"invalid {what} {text[:20]!r} in tar header") from None


def _text(field: bytes) -> str:
    return field.partition(b"\0")[0].decode("utf-8", "surrogateescape")


def _checksum_ok(header: bytes, total: int) -> bool:
    """`total` is sum(header); the checksum field itself counts as eight spaces."""
    field = header[148:156]
    try:
        expected = int(field.partition(b"\0")[0].strip(b" "), 8)
    except ValueError:
        return False
    unsigned = total - sum(field) + 8 * 32
    if unsigned == expected:
        return True
    high = sum(1 for b in header[:148] if b > 127) + sum(1 for b in header[156:] if b > 127)
    return unsigned - 256 * high == expected  # some old tars summed signed chars


def _parse_pax(data: bytes) -> dict[str, str]:
    """PAX records; GNU sparse 0.0's repeated offset/numbytes pairs are joined into one
    GNU.sparse.map, as Go's parsePAX does."""
    records: dict[str, str] = {}
    pairs: list[str] = []
    pos = 0
    while pos < len(data):
        space = data.find(b" ", pos)
        if space < 0:
            break
        try:
            length = int(data[pos:space])
        except ValueError:
            raise TarFormatError("malformed PAX header record") from None
        if length <= 0 or pos + length > len(data):
            raise TarFormatError("malformed PAX header record length")
        record = data[space + 1 : pos + length - 1]  # without the trailing newline
        key, sep, value = record.partition(b"=")
        if sep:
            name = key.decode("utf-8", "replace")
            text = value.decode("utf-8", "surrogateescape")
            if name in ("GNU.sparse.offset", "GNU.sparse.numbytes"):
                if len(pairs) >= 2 * MAX_SPARSE_ENTRIES:
                    raise TarFormatError("too many GNU sparse map entries")
                pairs.append(text)
            else:
                records[name] = text
        pos += length
    if pairs:
        records["GNU.sparse.map"] = ",".join(pairs)
    return records


def _check_length(text: str, what: str) -> None:
    """A member name or link target no filesystem could hold (ENAMETOOLONG): Docker's and containerd's unpack
    fail on it, and indexing every parent of a 200,000-component name would cost gigabytes."""
    if len(text) < NAME_MAX // 4:
        return  # the common case: no byte count needed
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) >= PATH_MAX:
        raise TarFormatError(f"a tar member's {what} is longer than PATH_MAX ({PATH_MAX} bytes): no image unpacks it")
    if len(raw) > NAME_MAX and any(len(part) > NAME_MAX for part in raw.split(b"/")):
        raise TarFormatError(f"a tar member's {what} has a component longer than NAME_MAX ({NAME_MAX} bytes)")


def _decimal(text: str, what: str) -> int:
    # Go parses these with strconv.ParseInt: plain decimal digits only (no sign, '_' or spaces)
    if not text.isascii() or not text.isdigit() or len(text) > 19:
        raise TarFormatError(f"invalid {what} {text[:20]!r} in tar header")
    return int(text)


def _sparse_pairs(numbers: list[str], real_size: int) -> tuple[tuple[int, int], ...]:
    if len(numbers) % 2 or len(numbers) > 2 * MAX_SPARSE_ENTRIES:
        raise TarFormatError("malformed GNU sparse map")
    pairs = []
    end = 0
    for i in range(0, len(numbers), 2):
        offset, length = _decimal(numbers[i], "sparse offset"), _decimal(numbers[i + 1], "sparse length")
        if offset < end or offset + length > real_size:
            raise TarFormatError("GNU sparse map entries overlap or exceed the file size")
        end = offset + length
        pairs.append((offset, length))
    return tuple(pairs)


def _sparse_version(pax: dict[str, str]) -> str | None:
    """'0' (0.0/0.1: map in the records), '1' (1.0: map at the start of the data) or None."""
    major, minor = pax.get("GNU.sparse.major"), pax.get("GNU.sparse.minor")
    if major == "0" and minor in ("0", "1"):
        return "0"
    if major == "1" and minor == "0":
        return "1"
    if major is not None or minor is not None:
        return None  # an unknown version: a plain file, as Go reads it
    return "0" if pax.get("GNU.sparse.map") else None


class _Chunks:
    """A buffer (or `buffers` taken in turn), refilled with readinto() each time the walker moves past what it holds.
    With two, the chunk handed out last is not written by the next refill: a reader may keep using it (hashing it in
    another thread, view/layer_index.py) while the next one is inflated."""

    def __init__(self, stream: ReadintoStream, size: int, buffers: int = 1) -> None:
        self._readinto = readinto_of(stream)
        self._bufs = [memoryview(bytearray(size)) for _ in range(max(1, buffers))]
        self._turn = 0

    def next(self) -> memoryview | None:
        """The next chunk (valid until the following call), or None at the end of the stream."""
        buf = self._bufs[self._turn]
        self._turn = (self._turn + 1) % len(self._bufs)
        n = self._readinto(buf)
        return buf[:n] if n else None


class TarWalker:
    """Iterate headers; after each, the caller may call read_data() once, else the data is skipped.

    Only headers and kept files are copied out of a chunk.
    """

    def __init__(self, stream: ReadintoStream, chunk: int = CHUNK, buffers: int = 1) -> None:
        self._chunks = _Chunks(stream, max(chunk, BLOCK), buffers)
        self._cur = memoryview(b"")  # the chunk being walked
        self._pos = 0
        self._base = 0  # offset in the stream of the chunk being walked
        self._pending = 0  # data bytes (padded) of the current member not consumed yet
        self._pending_data = 0  # unpadded size, for read_data
        # (logical size, pairs or None for 1.0, stored bytes)
        self._sparse: tuple[int, tuple[tuple[int, int], ...] | None, int] | None = None
        self.entries = 0

    # -- chunk primitives ---------------------------------------------------------------------
    def _next_chunk(self) -> bool:
        self._base += len(self._cur)
        chunk = self._chunks.next()
        if chunk is None:
            self._cur, self._pos = memoryview(b""), 0
            return False
        self._cur, self._pos = chunk, 0
        return True

    @property
    def offset(self) -> int:
        """Where the walk is in the uncompressed stream: right after a header is yielded, its data's offset
        (what a file index records, view/file_index.py)."""
        return self._base + self._pos

    def _at_end(self) -> bool:
        """True at a clean end of stream (no byte left)."""
        while self._pos >= len(self._cur):
            if not self._next_chunk():
                return True
        return False

    def _take(self, n: int) -> bytes:
        """The next n bytes, copied out (across chunk boundaries when needed)."""
        pos, cur = self._pos, self._cur
        if pos + n <= len(cur):
            self._pos = pos + n
            return bytes(cur[pos : pos + n])
        parts = [bytes(cur[pos:])]
        need = n - len(parts[0])
        while need:
            if not self._next_chunk():
                raise TarFormatError("truncated tar stream")
            k = min(need, len(self._cur))
            parts.append(bytes(self._cur[:k]))
            self._pos = k
            need -= k
        return b"".join(parts)

    def _skip(self, n: int) -> None:
        while True:
            left = len(self._cur) - self._pos
            if n <= left:
                self._pos += n
                return
            n -= left
            if not self._next_chunk():
                raise TarFormatError("truncated tar stream")

    @staticmethod
    def _padded(size: int) -> int:
        return (size + BLOCK - 1) // BLOCK * BLOCK

    # -- public -------------------------------------------------------------------------------
    def read_data(self, limit: int) -> bytes | None:
        """The current member's bytes, if its size is at most `limit` (sparse files: logical size)."""
        size = self._pending_data
        if self._sparse is not None:
            return self._read_sparse(limit)
        if self._pending == 0 or size > limit:
            return None
        data = self._take(size)
        self._skip(self._pending - size)
        self._pending = self._pending_data = 0
        return data

    def feed_data(self, consume: Callable[[memoryview], object]) -> bool:
        """Pass the current member's bytes to `consume` chunk by chunk (each memoryview valid only during the
        call), never holding the file. False, with nothing consumed, for a sparse member."""
        if self._sparse is not None:
            return False
        left = self._pending_data
        while left:
            if self._pos >= len(self._cur) and not self._next_chunk():
                raise TarFormatError("truncated tar stream")
            k = min(left, len(self._cur) - self._pos)
            consume(self._cur[self._pos : self._pos + k])
            self._pos += k
            left -= k
        self._skip(self._pending - self._pending_data)
        self._pending = self._pending_data = 0
        return True

    def _read_sparse(self, limit: int) -> bytes | None:
        assert self._sparse is not None  # read_data calls this for a sparse member only
        real_size, pairs, stored = self._sparse
        if real_size > limit or stored > limit + MAX_META:
            return None
        data = self._take(stored)
        self._skip(self._pending - stored)
        self._pending = self._pending_data = 0
        start = 0
        if pairs is None:  # 1.0: a decimal count, then offset/length lines, padded to a block
            numbers: list[str] = []
            lines = data.split(b"\n", 2 * MAX_SPARSE_ENTRIES + 1)
            try:
                count = _decimal(lines[0].decode("ascii"), "sparse map count")
                numbers = [lines[1 + i].decode("ascii") for i in range(2 * count)]
            except (IndexError, UnicodeDecodeError):
                raise TarFormatError("truncated GNU sparse 1.0 map") from None
            pairs = _sparse_pairs(numbers, real_size)
            start = self._padded(sum(len(x) + 1 for x in [lines[0].decode("ascii"), *numbers]))
        out = bytearray(real_size)
        for offset, length in pairs:
            chunk = data[start : start + length]
            if len(chunk) != length:
                raise TarFormatError("GNU sparse file holds less data than its map says")
            out[offset : offset + length] = chunk
            start += length
        return bytes(out)

    def drain(self) -> None:
        """Consume whatever follows the end-of-archive marker (so a digest covers it all)."""
        while self._next_chunk():
            pass

    def __iter__(self) -> Iterator[TarHeader]:
        long_name: str | None = None
        long_link: str | None = None
        pax: dict[str, str] = {}
        while True:
            self._sparse = None
            if self._pending:
                self._skip(self._pending)
                self._pending = self._pending_data = 0
            if self._at_end():
                return  # EOF without end-of-archive blocks: accepted, as GNU tar does
            header = self._take(BLOCK)
            total = sum(header.translate(None, b"\0"))  # headers are mostly NUL: summing only the rest is faster
            if total == 0:
                return  # end-of-archive marker (an all-zero block)
            if not _checksum_ok(header, total):
                raise TarFormatError("tar header checksum mismatch (corrupt or not a tar)")
            self.entries += 1
            typ = header[156:157]
            size = _number(header[124:136], "size")
            if typ in META_TYPES:
                if size > MAX_META:
                    raise TarFormatError(f"tar metadata record of {size} bytes is too large")
                data = self._take(size)
                self._skip(self._padded(size) - size)
                if typ == GNU_LONGNAME:
                    long_name = _text(data)
                elif typ == GNU_LONGLINK:
                    long_link = _text(data)
                elif typ == PAX_LOCAL:
                    pax = _parse_pax(data)
                else:
                    # A global header ('g') is an entry of its own to Go's archive/tar: it applies
                    # to no later member and uses up the extended headers before it.
                    pax, long_name, long_link = {}, None, None
                continue
            name = _text(header[0:100])
            if header[257:262] == b"ustar" and header[263:265] == b"00" and header[345] != 0:
                name = _text(header[345:500]) + "/" + name
            linkname = _text(header[157:257]) if header[157] else ""
            merged = pax
            if merged:
                name = merged.get("path", name)
                linkname = merged.get("linkpath", linkname)
                if "size" in merged:
                    size = _decimal(merged["size"], "PAX size")
                pax = {}
            if long_name is not None:
                name, long_name = long_name, None
            if long_link is not None:
                linkname, long_link = long_link, None
            _check_length(name, "name")
            _check_length(linkname, "link target")
            if typ == GNU_SPARSE:
                # Old GNU sparse members (GNU tar --sparse --format=gnu): Docker refuses the layer
                # ("unhandled tar header type 83", Docker 20.10), so it is no image a node runs.
                raise TarFormatError(f"{name}: old GNU sparse member (typeflag 'S'); Docker refuses such layers")
            if typ == b"\0" and name.endswith("/"):
                typ = DIRTYPE  # legacy archives mark directories by the trailing slash only
            if size < 0:
                raise TarFormatError("negative size in tar header")
            mode = _number(header[100:108], "mode")
            data_size = 0 if typ in NO_DATA_TYPES else size
            self._pending = self._padded(data_size)
            self._pending_data = data_size
            version = _sparse_version(merged) if merged and typ in REGTYPES else None
            if version is None:
                yield TarHeader(name, typ, data_size, mode, linkname)
                continue
            name = merged.get("GNU.sparse.name") or name
            real = merged.get("GNU.sparse.size") or merged.get("GNU.sparse.realsize")
            real_size = _decimal(real, "sparse size") if real else data_size
            pairs = None
            if version == "0":
                text = merged.get("GNU.sparse.map", "")
                pairs = _sparse_pairs(text.split(",") if text else [], real_size)
            self._sparse = (real_size, pairs, data_size)
            header_out = TarHeader(name, typ, real_size, mode, linkname, sparse=pairs or ())
            yield header_out
