"""A tar header walk over a stream that skips unwanted file data without parsing or copying it.

tarfile's stream mode builds a TarInfo per member and skips data through small reads; on large
layers that costs as much as the decompression itself. This walker reads the stream in large
chunks, parses only the 512-byte headers (ustar, GNU long names, PAX path/linkpath/size), and
moves past file data by offset arithmetic. Every header's checksum is verified.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from ..errors import BadInputError

BLOCK = 512
CHUNK = 1 << 20
MAX_META = 1 << 20  # GNU long names and PAX records: no legitimate one is near a megabyte

REGTYPES = (b"0", b"\0", b"7")
LNKTYPE, SYMTYPE, DIRTYPE = b"1", b"2", b"5"
GNU_LONGNAME, GNU_LONGLINK, PAX_LOCAL, PAX_GLOBAL, GNU_SPARSE = b"L", b"K", b"x", b"g", b"S"


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
        value = field[0] & 0x7F
        for byte in field[1:]:
            value = (value << 8) | byte
        return value
    text = field.split(b"\0", 1)[0].strip(b" ")
    if not text:
        return 0
    try:
        return int(text, 8)
    except ValueError:
        raise TarFormatError(f"invalid {what} {text[:20]!r} in tar header") from None


def _text(field: bytes) -> str:
    return field.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def _checksum_ok(header: bytes) -> bool:
    stored = header[148:156].split(b"\0", 1)[0].strip(b" ")
    try:
        expected = int(stored, 8)
    except ValueError:
        return False
    unsigned = sum(header[:148]) + 8 * 32 + sum(header[156:])
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


class TarWalker:
    """Iterate headers; after each, the caller may call read_data() once, else the data is skipped."""

    def __init__(self, read: Callable[[int], bytes], chunk: int = CHUNK):
        self._read = read
        self._chunk = chunk
        self._buf = b""
        self._pos = 0
        self._pending = 0  # data bytes (padded) of the current member not consumed yet
        self._pending_data = 0  # unpadded size, for read_data
        self.entries = 0

    # -- buffer primitives --------------------------------------------------------------------
    def _fill(self, n: int) -> bool:
        """Make n bytes available at _pos; False at a clean EOF before any of them."""
        have = len(self._buf) - self._pos
        if have >= n:
            return True
        parts = [self._buf[self._pos :]]
        while have < n:
            data = self._read(max(self._chunk, n - have))
            if not data:
                if have == 0:
                    self._buf, self._pos = b"", 0
                    return False
                raise TarFormatError("truncated tar stream")
            parts.append(data)
            have += len(data)
        self._buf, self._pos = b"".join(parts), 0
        return True

    def _take(self, n: int) -> bytes:
        if not self._fill(n):
            raise TarFormatError("truncated tar stream")
        out = self._buf[self._pos : self._pos + n]
        self._pos += n
        return out

    def _skip(self, n: int) -> None:
        have = len(self._buf) - self._pos
        if n <= have:
            self._pos += n
            return
        n -= have
        self._buf, self._pos = b"", 0
        while n > 0:
            data = self._read(min(self._chunk, n) if n > self._chunk else max(n, self._chunk))
            if not data:
                raise TarFormatError("truncated tar stream")
            if len(data) > n:  # read past the member: keep the rest
                self._buf, self._pos = data, n
                return
            n -= len(data)

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
        self._buf, self._pos = b"", 0
        while self._read(self._chunk):
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
            if not self._fill(BLOCK):
                return  # EOF without end-of-archive blocks: accepted, as GNU tar does
            header = self._take(BLOCK)
            if header.count(0) == BLOCK:
                return  # end-of-archive marker
            if not _checksum_ok(header):
                raise TarFormatError("tar header checksum mismatch (corrupt or not a tar)")
            self.entries += 1
            typ = header[156:157]
            size = _number(header[124:136], "size")
            if typ in (GNU_LONGNAME, GNU_LONGLINK, PAX_LOCAL, PAX_GLOBAL):
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
            if header[257:262] == b"ustar":
                prefix = _text(header[345:500]) if header[263:265] == b"00" else ""
                if prefix:
                    name = prefix + "/" + name
            linkname = _text(header[157:257])
            merged = {**global_pax, **pax} if global_pax else pax
            if merged:
                name = merged.get("path", name)
                linkname = merged.get("linkpath", linkname)
                if "size" in merged:
                    try:
                        size = int(merged["size"])
                    except ValueError:
                        raise TarFormatError("invalid PAX size") from None
            if long_name is not None:
                name = long_name
            if long_link is not None:
                linkname = long_link
            long_name = long_link = None
            pax = {}
            if size < 0:
                raise TarFormatError("negative size in tar header")
            mode = _number(header[100:108], "mode")
            # hard links, symlinks, dirs, devices carry no data regardless of the size field
            data_size = size if typ not in (LNKTYPE, SYMTYPE, DIRTYPE, b"3", b"4", b"6") else 0
            self._pending = self._padded(data_size)
            self._pending_data = data_size
            yield TarHeader(name, typ, data_size, mode, linkname)
