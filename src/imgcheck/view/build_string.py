"""The release line a library prints about itself, found while its bytes stream (nothing is kept but a short tail).

NCCL compiles its version and the CUDA release it was built against into one string literal,
`"NCCL version " MAJOR.MINOR.PATCH SUFFIX "+cuda" CUDA_MAJOR.CUDA_MINOR` (NVIDIA/nccl src/init.cc
VERSION_STRING, the same from v2.4 to v2.30: "so that running strings on the lib can quickly reveal the
version"), e.g. `NCCL version 2.18.1+cuda12.1` in nvidia-nccl-cu12 2.18.1's libnccl.so.2. NCCL links the
CUDA runtime statically by default (src/Makefile CUDARTLIB ?= cudart_static), so that CUDA release is the
runtime NCCL's own calls use, whatever CUDA runtime the rest of the image has.
"""

from __future__ import annotations

import re

NCCL_BUILD = re.compile(rb"NCCL version (\d+\.\d+\.\d+)([A-Za-z0-9._-]{0,16})\+cuda(\d+)\.(\d+)\0")
_MARK = b"NCCL version "
_TAIL = 64  # longer than any match: a string split across two chunks is found in the next one


class NcclBuildScan:
    """Feed bytes in order; found is (nccl version, cuda release) of the first VERSION_STRING, or None."""

    def __init__(self) -> None:
        self._tail = b""
        self.found: tuple[str, str] | None = None

    def feed(self, chunk: memoryview | bytes) -> None:
        if self.found is not None:
            return
        data = self._tail + bytes(chunk)
        at = data.find(_MARK)
        while at >= 0:
            match = NCCL_BUILD.match(data, at)
            if match:
                self.found = (
                    match.group(1).decode() + match.group(2).decode(),
                    f"{int(match.group(3))}.{int(match.group(4))}",
                )
                return
            if len(data) - at < _TAIL:
                break  # maybe cut by the chunk's end: the tail keeps it
            at = data.find(_MARK, at + 1)
        self._tail = data[-_TAIL:]
