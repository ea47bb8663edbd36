"""Gzip seek points built during the one inflate of a layer, and inflating from them later (the zran scheme).

A deflate stream can be entered at the start of any block if the decoder is given the 32 KiB of output before it
(the window) and the bit the block starts at. zlib's inflate() with Z_BLOCK returns at every block boundary and says
where it stands in `data_type` (zlib.h: the unused bits of the last input byte, +64 in the last block, +128 right
after an end-of-block code or the header); inflateGetDictionary() gives the window, inflatePrime() and
inflateSetDictionary() resume there. This is Mark Adler's zran.c (zlib's examples/), reached here through ctypes.

The inflate is zlib-ng's (the `zlib-ng` wheel's extension exports its native zng_* API: about 1.15x ISA-L's CPU time
for the same layer on the benchmark machine, where the system zlib takes 2.2x), else the system libz; with neither,
layers are inflated by ISA-L as before and get no seek points. Points are taken every `spacing` compressed bytes (at
the first block boundary past it); past MAX_POINTS every other point is dropped and the spacing doubled, so a layer's
points hold at most MAX_POINTS windows (16 MiB) whatever its size: memory bounded by construction.

The index is written in the indexed_gzip version 1 layout (view/file_index.py check_seek_index validates its
structure): per point the compressed offset of the first whole byte of the block, the output offset, the number of
bits of the block in the byte before (0-7) and a 32 KiB window.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import io
import struct
import zlib
from collections.abc import Callable
from typing import Any

from ..streams import ReadintoStream, readinto_of

Z_OK, Z_STREAM_END, Z_NEED_DICT, Z_BUF_ERROR = 0, 1, 2, -5
Z_NO_FLUSH, Z_BLOCK = 0, 5
GZIP_WBITS, RAW_WBITS = 31, -15
WINDOW = 32768
MAX_POINTS = 512
IN_CHUNK = 1 << 18
GZIDX_HEAD = struct.Struct("<5sBBQQIII")  # as view/file_index.py reads it
GZIDX_POINT = struct.Struct("<QQBB")
FLAG_ZRAN = 1  # flags byte: written by this module (offsets as zran.c keeps them)


class _ZlibStream(ctypes.Structure):  # zlib.h z_stream on LP64
    _fields_ = [
        ("next_in", ctypes.c_void_p),
        ("avail_in", ctypes.c_uint),
        ("total_in", ctypes.c_ulong),
        ("next_out", ctypes.c_void_p),
        ("avail_out", ctypes.c_uint),
        ("total_out", ctypes.c_ulong),
        ("msg", ctypes.c_char_p),
        ("state", ctypes.c_void_p),
        ("zalloc", ctypes.c_void_p),
        ("zfree", ctypes.c_void_p),
        ("opaque", ctypes.c_void_p),
        ("data_type", ctypes.c_int),
        ("adler", ctypes.c_ulong),
        ("reserved", ctypes.c_ulong),
    ]


class _NgStream(ctypes.Structure):  # zlib-ng.h zng_stream
    _fields_ = [
        ("next_in", ctypes.c_void_p),
        ("avail_in", ctypes.c_uint32),
        ("total_in", ctypes.c_size_t),
        ("next_out", ctypes.c_void_p),
        ("avail_out", ctypes.c_uint32),
        ("total_out", ctypes.c_size_t),
        ("msg", ctypes.c_char_p),
        ("state", ctypes.c_void_p),
        ("zalloc", ctypes.c_void_p),
        ("zfree", ctypes.c_void_p),
        ("opaque", ctypes.c_void_p),
        ("data_type", ctypes.c_int),
        ("adler", ctypes.c_uint32),
        ("reserved", ctypes.c_ulong),
    ]


class Lib:
    """One inflate implementation reached by ctypes: zlib-ng's native API or the system zlib."""

    def __init__(self, dll: Any, prefix: str, stream: type[ctypes.Structure], version: bytes | None) -> None:
        self.name = "zlib-ng" if prefix else "zlib"
        self.stream = stream
        p = ctypes.POINTER(stream)
        self._version = version

        def fn(name: str, *args: Any) -> Any:
            f = getattr(dll, prefix + name)
            f.argtypes, f.restype = [p, *args], ctypes.c_int
            return f

        self.inflate = fn("inflate", ctypes.c_int)
        self.end = fn("inflateEnd")
        self.reset2 = fn("inflateReset2", ctypes.c_int)
        self.prime = fn("inflatePrime", ctypes.c_int, ctypes.c_int)
        self.set_dict = fn("inflateSetDictionary", ctypes.c_char_p, ctypes.c_uint)
        self.get_dict = fn("inflateGetDictionary", ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint))
        if version is None:
            self._init = fn("inflateInit2", ctypes.c_int)
        else:
            self._init = fn("inflateInit2_", ctypes.c_int, ctypes.c_char_p, ctypes.c_int)

    def new(self, wbits: int) -> Any:
        s = self.stream()
        if self._version is None:
            ret = self._init(ctypes.byref(s), wbits)
        else:
            ret = self._init(ctypes.byref(s), wbits, self._version, ctypes.sizeof(s))
        if ret != Z_OK:
            raise MemoryError(f"{self.name}: inflateInit2 failed ({ret})")
        return s


@functools.cache
def lib() -> Lib | None:
    """zlib-ng (the wheel's extension), else the system zlib, else None: no seek points are built or read."""
    try:
        from zlib_ng import zlib_ng

        return Lib(ctypes.CDLL(zlib_ng.__file__), "zng_", _NgStream, None)
    except (ImportError, OSError, AttributeError):
        pass
    try:
        name = ctypes.util.find_library("z")
        if name is None:
            return None
        dll = ctypes.CDLL(name)
        version = ctypes.c_char_p
        dll.zlibVersion.restype = version
        return Lib(dll, "", _ZlibStream, dll.zlibVersion())
    except (OSError, AttributeError):
        return None


def _error(s: Any, ret: int) -> zlib.error:
    msg = s.msg.decode("utf-8", "replace") if s.msg else "invalid data"
    return zlib.error(f"Error {ret} while decompressing data: {msg}")


class _Walk:
    """The one inflate loop both readers run: output into the caller's buffer, input from `_fill`, a member's end
    handed to `_next_member`, and with Z_BLOCK every block boundary to `_at_block` (where the indexing read takes its
    points). Subclasses set `_z`, `_s`, `_ps`, `_flush`, `_truncated` and say where input comes from."""

    _z: Lib
    _s: Any
    _ps: Any
    _flush = Z_NO_FLUSH
    _truncated = "the stream ends inside a deflate stream"
    _ended = False

    def _fill(self) -> bool:
        raise NotImplementedError

    def _next_member(self) -> bool:
        raise NotImplementedError

    def _at_block(self) -> None:
        """After a block's end-of-block code (Z_BLOCK only)."""

    def _inflate_into(self, buffer: Any) -> int:
        if self._ended:
            return 0
        view = memoryview(buffer).cast("B")
        n = len(view)
        if not n:
            return 0
        out = (ctypes.c_char * n).from_buffer(view)
        s, z, ps, flush, block = self._s, self._z, self._ps, self._flush, self._flush == Z_BLOCK
        s.next_out, s.avail_out = ctypes.addressof(out), n
        while s.avail_out:
            if not s.avail_in and not self._fill():
                raise EOFError(self._truncated)
            ret = z.inflate(ps, flush)
            if ret == Z_STREAM_END:
                if not self._next_member():
                    self._ended = True
                    break
                continue
            if ret == Z_NEED_DICT or (ret < 0 and ret != Z_BUF_ERROR):
                raise _error(s, ret)
            if block:
                dt = s.data_type
                if dt & 128 and not dt & 64:
                    self._at_block()
        produced: int = n - int(s.avail_out)
        s.next_out, s.avail_out = None, 0
        del out
        return produced


class Inflater(_Walk):
    """A gzip stream (one or more members) inflated into the caller's buffer, with seek points taken on the way."""

    def __init__(self, raw: ReadintoStream, z: Lib, spacing: int) -> None:
        self._raw_readinto = readinto_of(raw)
        self._z = z
        self._s = z.new(GZIP_WBITS)
        self._ps = ctypes.pointer(self._s)
        self._in = ctypes.create_string_buffer(IN_CHUNK)
        self._in_view = memoryview(self._in).cast("B")
        self._in_addr = ctypes.addressof(self._in)
        self._read = 0  # compressed bytes taken from raw
        self._out_base = 0  # output of the members before this one
        self._flush = Z_BLOCK
        self._truncated = "Compressed file ended before the end-of-stream marker was reached"
        self.spacing = spacing
        self.points: list[tuple[int, int, int]] = []
        self.windows: list[bytes] = []
        self._window = ctypes.create_string_buffer(WINDOW)
        self._window_len = ctypes.c_uint(0)

    def readable(self) -> bool:
        return True

    def _fill(self) -> bool:
        n = self._raw_readinto(self._in_view)
        if not n:
            return False
        self._read += n
        self._s.next_in, self._s.avail_in = self._in_addr, n
        return True

    def _consumed(self) -> int:
        return self._read - int(self._s.avail_in)

    def _at_block(self) -> None:
        """Take a seek point here when `spacing` compressed bytes have passed since the last one."""
        at = self._consumed()
        if self.points and at - self.points[-1][0] < self.spacing:
            return
        self._window_len.value = 0
        if self._z.get_dict(self._ps, self._window, ctypes.byref(self._window_len)) != Z_OK:
            return
        n = self._window_len.value
        window = bytes(WINDOW - n) + self._window.raw[:n]  # leading zeros: never referred to by a valid stream
        self.points.append((at, self._out_base + self._s.total_out, self._s.data_type & 7))
        self.windows.append(window)
        if len(self.points) > MAX_POINTS:  # bounded: every other point, twice the spacing
            self.points, self.windows = self.points[::2], self.windows[::2]
            self.spacing *= 2

    def _next_member(self) -> bool:
        """After a member's trailer: skip zero padding (as gzip does); True when another member follows."""
        while True:
            if not self._s.avail_in and not self._fill():
                return False
            offset = self._s.next_in - self._in_addr
            view = self._in_view[offset : offset + self._s.avail_in]
            zeros = len(view) - len(bytes(view).lstrip(b"\0"))
            self._s.next_in += zeros
            self._s.avail_in -= zeros
            if self._s.avail_in:
                if view[zeros] != 0x1F:
                    raise OSError("Not a gzipped file (trailing garbage after the last member)")
                self._out_base += self._s.total_out
                if self._z.reset2(self._ps, GZIP_WBITS) != Z_OK:
                    raise zlib.error("inflateReset2 failed")
                return True

    def readinto(self, buffer: Any) -> int:
        return self._inflate_into(buffer)

    def close(self) -> None:
        self._z.end(self._ps)

    def index(self, blob_size: int, uncompressed: int) -> bytes | None:
        """The seek points in the indexed_gzip version 1 layout (None: no point was taken). Called once, at the end:
        each window is let go as it is written, so the windows (up to MAX_POINTS x 32 KiB) are not held twice."""
        if not self.points:
            return None
        out = io.BytesIO()
        out.write(
            GZIDX_HEAD.pack(b"GZIDX", 1, FLAG_ZRAN, blob_size, uncompressed, self.spacing, WINDOW, len(self.points))
        )
        for c, u, bits in self.points:
            out.write(GZIDX_POINT.pack(c, u, bits, 1))
        windows, self.windows, self.points = self.windows, [], []
        windows.reverse()
        while windows:
            out.write(windows.pop())
        return out.getvalue()  # the buffer itself, not a copy (BytesIO gives its bytes when nothing else holds them)


def parse_index(seek: bytes) -> list[tuple[int, int, int, int]]:
    """(compressed offset, output offset, bits, window offset in `seek`) per point of an index this module wrote
    (its structure checked first by file_index.check_seek_index); ValueError when another tool wrote it."""
    _magic, _version, flags, _c, _u, _spacing, _window, count = GZIDX_HEAD.unpack_from(seek)
    if not flags & FLAG_ZRAN:
        raise ValueError("the seek index was not written by imgcheck's inflate")
    at = GZIDX_HEAD.size
    windows = at + count * GZIDX_POINT.size
    points = []
    for k in range(count):
        c, u, bits, _has = GZIDX_POINT.unpack_from(seek, at + k * GZIDX_POINT.size)
        points.append((c, u, bits, windows + k * WINDOW))
    return points


class PointReader(_Walk):
    """The output of a gzip blob from any offset, inflated from the seek point before it. `read_at(offset, n)` gives
    the blob's bytes (fewer at its end); nothing here trusts them more than the caller does."""

    def __init__(self, z: Lib, seek: bytes, read_at: Callable[[int, int], bytes]) -> None:
        self._z, self._seek, self._read_at = z, seek, read_at
        self._points = parse_index(seek)
        self._s = z.new(RAW_WBITS)
        self._ps = ctypes.pointer(self._s)
        self._in = b""
        self._in_at = 0  # blob offset of the next byte to hand to inflate
        self.pos = -1  # output offset of the next byte (-1: not started)
        self.compressed = 0
        self._truncated = "the blob ends inside a deflate stream"

    def _start(self, point: tuple[int, int, int, int]) -> None:
        c, u, bits, window_at = point
        if self._z.reset2(self._ps, RAW_WBITS) != Z_OK:
            raise zlib.error("inflateReset2 failed")
        if bits:
            byte = self._read_at(c - 1, 1)
            self.compressed += len(byte)
            if len(byte) != 1 or self._z.prime(self._ps, bits, byte[0] >> (8 - bits)) != Z_OK:
                raise zlib.error("the seek point's first bits cannot be read")
        window = self._seek[window_at : window_at + WINDOW]
        if self._z.set_dict(self._ps, window, WINDOW) != Z_OK:
            raise zlib.error("the seek point's window is not accepted")
        self._in, self._in_at, self.pos, self._ended = b"", c, u, False
        self._s.avail_in = 0

    def seek(self, offset: int, discard: memoryview) -> None:
        best = None
        for point in self._points:
            if point[1] > offset:
                break
            best = point
        if best is None:
            raise ValueError("no seek point before this offset")
        if self.pos < 0 or offset < self.pos or best[1] > self.pos:
            self._start(best)
        while self.pos < offset:
            if not self.readinto(discard[: min(len(discard), offset - self.pos)]):
                raise EOFError("the stream ends before the offset")

    def _fill(self) -> bool:
        data = self._read_at(self._in_at, IN_CHUNK)
        if not data:
            return False
        self.compressed += len(data)
        self._in = data  # kept referenced while inflate reads it
        self._s.next_in = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p)
        self._s.avail_in = len(data)
        self._in_at += len(data)
        return True

    def _consumed_at(self) -> int:
        return self._in_at - int(self._s.avail_in)

    def _next_member(self) -> bool:
        """A member ended (raw inflate): past its 8-byte trailer and any zero padding, the next member's header."""
        at = self._consumed_at() + 8
        while True:
            head = self._read_at(at, 64)
            self.compressed += len(head)
            if not head:
                return False
            zeros = len(head) - len(head.lstrip(b"\0"))
            at += zeros
            if zeros < len(head):
                break
        if self._z.reset2(self._ps, GZIP_WBITS) != Z_OK:
            raise zlib.error("inflateReset2 failed")
        self._in, self._in_at = b"", at
        self._s.avail_in = 0
        return True

    def readinto(self, buffer: memoryview) -> int:
        produced = self._inflate_into(buffer)
        self.pos += produced
        return produced

    def close(self) -> None:
        self._z.end(self._ps)
