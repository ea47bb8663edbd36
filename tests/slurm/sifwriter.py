"""A minimal SIF writer for tests, following github.com/sylabs/sif (pkg/sif/sif.go, descriptor.go,
create.go): a 128-byte global header, DescriptorsTotal 585-byte descriptors at 4096, data objects
after them, all little-endian and packed as encoding/binary writes them.

Apptainer is not packaged for Debian bookworm (`apt-cache policy apptainer singularity-container`
finds no candidate), so the tests build SIFs with this writer instead.
"""

from __future__ import annotations

import os
import shutil
import struct
import uuid
from dataclasses import dataclass

HEADER = struct.Struct("<32s10s3s3s16s8q")
DESCRIPTOR = struct.Struct("<iBIII7q128s384s")
LAUNCH = b"#!/usr/bin/env run-singularity\n"
DATA_DEFFILE, DATA_PARTITION, DATA_GENERIC_JSON = 0x4001, 0x4004, 0x4006
FS_SQUASH, FS_EXT3, FS_ENCRYPTED_SQUASH = 1, 2, 5
PART_SYSTEM, PART_PRIMSYS = 1, 2
GROUP = 0xF0000000 | 1  # descrDefaultGroup


@dataclass
class Obj:
    datatype: int
    name: str = ""
    data: bytes | None = None  # in memory, or
    path: str | None = None  # streamed from a file
    fstype: int = FS_SQUASH
    parttype: int = PART_PRIMSYS
    arch: bytes = b"02"  # amd64
    align: int = 4096

    def size(self) -> int:
        return len(self.data) if self.data is not None else os.path.getsize(self.path)

    def extra(self) -> bytes:
        if self.datatype == DATA_PARTITION:
            return struct.pack("<ii3s", self.fstype, self.parttype, self.arch)
        return b""


def write_sif(path: str, objects: list[Obj], total: int = 48, header_arch: bytes = b"02") -> str:
    descr_off = 4096
    data_off = descr_off + total * DESCRIPTOR.size
    pos = data_off
    descriptors = []
    with open(path + ".tmp", "wb") as out:
        for i, obj in enumerate(objects):
            start = (pos + obj.align - 1) // obj.align * obj.align if obj.align else pos
            out.seek(start)
            if obj.data is not None:
                out.write(obj.data)
            else:
                with open(obj.path, "rb") as src:
                    shutil.copyfileobj(src, out, 1 << 20)
            size = obj.size()
            descriptors.append(
                DESCRIPTOR.pack(
                    obj.datatype,
                    1,
                    i + 1,
                    GROUP,
                    0,
                    start,
                    size,
                    start - pos + size,
                    0,
                    0,
                    0,
                    0,
                    obj.name.encode(),
                    obj.extra(),
                )
            )
            pos = start + size
        out.seek(descr_off)
        for d in descriptors:
            out.write(d)
        out.write(bytes(DESCRIPTOR.size * (total - len(descriptors))))
        out.seek(0)
        out.write(
            HEADER.pack(
                LAUNCH,
                b"SIF_MAGIC\0",
                b"01\0",
                header_arch + b"\0",
                uuid.uuid4().bytes,
                0,
                0,
                total - len(objects),
                total,
                descr_off,
                total * DESCRIPTOR.size,
                data_off,
                pos - data_off,
            )
        )
        out.truncate(max(pos, descr_off + total * DESCRIPTOR.size))
    os.replace(path + ".tmp", path)
    return path
