"""Open a layer stream as uncompressed tar bytes, whatever its compression.

The compression is sniffed from the magic bytes rather than trusted from the media type:
docker-archive layers carry no media type, and mislabelled layers exist in the wild.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, cast

from ..errors import BadInputError
from ..streams import ByteStream, ReadintoStream, readinto_of

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

try:  # ISA-L inflates several times faster than zlib; zlib is the fallback
    from isal import igzip as _gzip_impl
except ImportError:  # pragma: no cover - isal is a dependency, but keep working without it
    import gzip as _gzip_impl  # type: ignore[no-redef]  # the same GzipFile interface under the same name


class _Replay:
    """Replays sniffed bytes, then reads straight from the stream (no buffering layer, no copy)."""

    def __init__(self, head: bytes, raw: ByteStream) -> None:
        self._head = head
        self._raw = raw
        self._readinto = readinto_of(raw)

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if not self._head:
            return self._raw.read(n)
        if n is None or n < 0:
            out, self._head = self._head + self._raw.read(), b""
            return out
        out, self._head = self._head[:n], self._head[n:]
        return out

    def readinto(self, b: bytearray | memoryview) -> int:
        if not self._head:
            return self._readinto(b)
        n = min(len(b), len(self._head))
        b[:n] = self._head[:n]
        self._head = self._head[n:]
        return n


class _Inflating:
    """A GzipFile read with readinto() that inflates straight into the caller's buffer.

    GzipFile.readinto is the generic one (read, then copy); the BufferedReader it reads through
    has a real one (gzip and isal both keep it as `_buffer`; without it, one copy slower). The
    GzipFile is kept referenced: collecting it would close that reader.
    """

    def __init__(self, gz: gzip.GzipFile) -> None:
        self._gz = gz
        self.readinto: Callable[[WriteableBuffer], int] = getattr(gz, "_buffer", gz).readinto


def sniff(head: bytes) -> str:
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    return "tar"


def decompressed(raw: ByteStream) -> ReadintoStream:
    return open_decompressed(raw)[0]


def open_decompressed(raw: ByteStream, seek_spacing: int | None = None) -> tuple[ReadintoStream, str]:
    """The uncompressed stream and the compression sniffed ("gzip", "zstd" or "tar"). With `seek_spacing`, a gzip
    stream is inflated by view/zran.py, which takes a seek point about every `seek_spacing` compressed bytes (when
    zlib-ng or zlib can be reached; else ISA-L inflates it, without points)."""
    head = raw.read(4)
    kind = sniff(head)
    stream = _Replay(head, raw)
    if kind == "gzip" and seek_spacing:
        from . import zran

        z = zran.lib()
        if z is not None:
            return zran.Inflater(stream, z, seek_spacing), kind
    if kind == "gzip":
        gz = _Inflating(_gzip_impl.GzipFile(fileobj=stream, mode="rb"))  # type: ignore[no-untyped-call]  # isal's GzipFile has no annotations
        return gz, kind
    if kind == "zstd":
        import zstandard

        # zstandard only calls read() on its source; its stub names IO[bytes]
        return zstandard.ZstdDecompressor().stream_reader(cast("IO[bytes]", stream), read_size=1 << 20), kind
    return stream, kind


# Errors the decompressors raise on corrupt input; mapped to BadInputError by callers.
DECOMPRESS_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error, ValueError)
try:
    import zstandard as _zstd

    DECOMPRESS_ERRORS = (*DECOMPRESS_ERRORS, _zstd.ZstdError)
except ImportError:  # pragma: no cover
    pass
try:
    from isal.igzip_lib import IsalError as _IsalError

    DECOMPRESS_ERRORS = DECOMPRESS_ERRORS + (_IsalError,)  # type: ignore[operator]  # isal's stub: an instance, not the class
except ImportError:  # pragma: no cover
    pass


def bad_stream(what: str, exc: BaseException) -> BadInputError:
    return BadInputError(f"{what}: corrupt or truncated data ({exc.__class__.__name__}: {exc})")
