"""Stream plumbing shared by the sources and the layer walk."""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, Any, Protocol, cast, runtime_checkable


class ByteStream(Protocol):
    """What a reader along the layer path needs of the stream under it: bytes by count, then close.
    (BinaryIO, a gzip file, and the wrappers in sources/ and view/ all qualify; readinto is optional,
    see readinto_of.)"""

    def read(self, n: int = -1, /) -> bytes: ...

    def close(self) -> None: ...


class ReadintoStream(Protocol):
    """A stream read into the caller's buffer only: what the tar walk pulls a (decompressed) layer from."""

    def readinto(self, buffer: bytearray | memoryview, /) -> int: ...


@runtime_checkable
class SeekableByteStream(ByteStream, Protocol):
    """A ByteStream that can also be read where it lies (a squashfs layer, a FileRange)."""

    def seek(self, pos: int, whence: int = 0, /) -> int: ...

    def tell(self) -> int: ...


def readinto_of(stream: Any) -> Callable[..., int]:
    """stream.readinto, or an equivalent over stream.read for streams that only offer read().

    Readers along the layer path pass the caller's buffer down, so the decompressor or the file
    writes straight into the walker's buffer instead of allocating and copying a chunk each time.
    """
    readinto = getattr(stream, "readinto", None)
    if readinto is not None:
        return cast("Callable[..., int]", readinto)

    def via_read(buffer: bytearray | memoryview) -> int:
        data = stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    return via_read


class FileRange:
    """A read-only, seekable window [offset, offset+size) of a file, with its own handle: how a
    source hands over a layer that is not a stream (a squashfs inside a SIF, a whole .sqsh)."""

    def __init__(self, fh: IO[bytes], offset: int, size: int) -> None:
        self._fh, self._offset, self.size = fh, offset, size
        self._pos = 0

    def seek(self, pos: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self.size}[whence]
        self._pos = max(0, base + pos)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def read(self, n: int | None = -1) -> bytes:
        left = max(0, self.size - self._pos)
        n = left if n is None or n < 0 else min(n, left)
        self._fh.seek(self._offset + self._pos)
        data = self._fh.read(n)
        self._pos += len(data)
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> FileRange:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
