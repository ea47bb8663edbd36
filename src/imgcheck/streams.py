"""Stream plumbing shared by the sources and the layer walk."""

from __future__ import annotations

from typing import Callable


def readinto_of(stream) -> Callable[..., int]:
    """stream.readinto, or an equivalent over stream.read for streams that only offer read().

    Readers along the layer path pass the caller's buffer down, so the decompressor or the file
    writes straight into the walker's buffer instead of allocating and copying a chunk each time.
    """
    readinto = getattr(stream, "readinto", None)
    if readinto is not None:
        return readinto

    def via_read(buffer) -> int:
        data = stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    return via_read
