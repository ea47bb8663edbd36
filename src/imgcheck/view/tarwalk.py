"""A tar header walk over a stream that skips unwanted file data without parsing or copying it.

tarfile's stream mode builds a TarInfo per member and skips data through small reads; on large
layers that costs as much as the decompression itself. This walker reads the stream in large
chunks into one reused buffer (the decompressor writes straight into it), parses only the
512-byte headers (ustar, GNU long names, PAX path/linkpath/size), and moves past file data by
offset arithmetic. Every header's checksum is verified.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ..errors import BadInputError
from ..streams import readinto_of

BLOCK = 512
CHUNK = 1 << 20
MAX_META = 1 << 20  # GNU long names and PAX records: no legitimate one is near a megabyte

REGTYPES = (b"0", b"\0", b"7")
LNKTYPE, SYMTYPE, DIRTYPE = b"1", b"2", b"5"
GNU_LONGNAME, GNU_LONGLINK, PAX_LOCAL, PAX_GLOBAL, GNU_SPARSE = b"L", b"K", b"x", b"g", b"S"
META_TYPES = (GNU_LONGNAME, GNU_LONGLINK, PAX_LOCAL, PAX_GLOBAL)
NO_DATA_TYPES = (LNKTYPE, SYMTYPE, DIRTYPE, b"3", b"4", b"6")  # regardless of the size field


@dataclass(slots=True)
class TarHeader:
    name: str
    type: bytes
    size: int  # bytes of data that follow in the archive
    mode: int
    linkname: str

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
    records: dict[str, str] = {}
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
            records[key.decode("utf-8", "replace")] = value.decode("utf-8", "surrogateescape")
        pos += length
    return records


class _Chunks:
    """One buffer, refilled with readinto() each time the walker moves past what it holds."""

    def __init__(self, stream, size: int):
        self._readinto = readinto_of(stream)
        self._buf = memoryview(bytearray(size))

    def next(self) -> memoryview | None:
        """The next chunk (valid until the following call), or None at the end of the stream."""
        n = self._readinto(self._buf)
        return self._buf[:n] if n else None


class TarWalker:
    """Iterate headers; after each, the caller may call read_data() once, else the data is skipped.

    Only headers and kept files are copied out of a chunk.
    """

    def __init__(self, stream, chunk: int = CHUNK):
        self._chunks = _Chunks(stream, max(chunk, BLOCK))
        self._cur = memoryview(b"")  # the chunk being walked
        self._pos = 0
        self._pending = 0  # data bytes (padded) of the current member not consumed yet
        self._pending_data = 0  # unpadded size, for read_data
        self.entries = 0

    # -- chunk primitives ---------------------------------------------------------------------
    def _next_chunk(self) -> bool:
        chunk = self._chunks.next()
        if chunk is None:
            self._cur, self._pos = memoryview(b""), 0
            return False
        self._cur, self._pos = chunk, 0
        return True

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
        """The current member's bytes, if its size is at most `limit`."""
        size = self._pending_data
        if self._pending == 0 or size > limit:
            return None
        data = self._take(size)
        self._skip(self._pending - size)
        self._pending = self._pending_data = 0
        return data

    def drain(self) -> None:
        """Consume whatever follows the end-of-archive marker (so a digest covers it all)."""
        while self._next_chunk():
            pass

    def __iter__(self) -> Iterator[TarHeader]:
        long_name: str | None = None
        long_link: str | None = None
        pax: dict[str, str] = {}
        global_pax: dict[str, str] = {}
        while True:
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
                    global_pax.update(_parse_pax(data))
                continue
            name = _text(header[0:100])
            if header[257:262] == b"ustar" and header[263:265] == b"00" and header[345] != 0:
                name = _text(header[345:500]) + "/" + name
            linkname = _text(header[157:257]) if header[157] else ""
            merged = {**global_pax, **pax} if global_pax else pax
            if merged:
                name = merged.get("path", name)
                linkname = merged.get("linkpath", linkname)
                if "size" in merged:
                    try:
                        size = int(merged["size"])
                    except ValueError:
                        raise TarFormatError("invalid PAX size") from None
                pax = {}
            if long_name is not None:
                name, long_name = long_name, None
            if long_link is not None:
                linkname, long_link = long_link, None
            if size < 0:
                raise TarFormatError("negative size in tar header")
            mode = _number(header[100:108], "mode")
            data_size = 0 if typ in NO_DATA_TYPES else size
            self._pending = self._padded(data_size)
            self._pending_data = data_size
            yield TarHeader(name, typ, data_size, mode, linkname)
