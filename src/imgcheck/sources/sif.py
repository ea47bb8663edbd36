"""Apptainer/Singularity SIF files: find the squashfs system partition and supply it as one layer.

Layout (github.com/sylabs/sif, pkg/sif/sif.go `header`, pkg/sif/descriptor.go `rawDescriptor`,
written with encoding/binary little-endian, so packed without padding):

  global header, 128 bytes at offset 0:
    launch script [32]  magic "SIF_MAGIC\\0" [10]  version "01\\0" [3]  arch [3]  uuid [16]
    int64 created, modified, descriptors free, descriptors total, descriptors offset,
          descriptors size, data offset, data size
  descriptors, DescriptorsTotal x 585 bytes at DescriptorsOffset:
    int32 datatype  bool used  uint32 id, groupid, linkedid
    int64 offset, size, size with padding, created, modified, uid, gid
    name [128]  extra [384]   (a partition's extra: int32 fstype, int32 parttype, arch [3])

Data types start at 0x4001 (DataDeffile); DataPartition = 0x4004, DataGenericJSON = 0x4006.
FsSquash = 1, FsEncryptedSquashfs = 5; PartSystem = 1, PartPrimSys = 2. Apptainer stores the
image's OCI config (Env, Entrypoint, ...) as a generic-JSON object named "oci-config.json"
(apptainer internal/pkg/build/sources/conveyorPacker_oci.go insertOCIConfig,
pkg/image/sif.go SIFDescOCIConfigJSON) and the same Env as shell lines in
/.singularity.d/env/10-docker2singularity.sh (insertEnv in the same file).
"""

from __future__ import annotations

import json
import os
import re
import struct
from dataclasses import dataclass
from typing import Any

from ..errors import BadInputError
from ..fsutil import reading_input
from ..streams import SeekableByteStream
from .base import EnvFile, OpenedImage, Source
from .enroot import SquashfsRangeSource

HEADER = struct.Struct("<32s10s3s3s16s8q")
DESCRIPTOR = struct.Struct("<iBIII7q128s384s")
PARTITION_EXTRA = struct.Struct("<ii3s")
MAGIC = b"SIF_MAGIC\0"
VERSION = b"01\0"

DATA_PARTITION = 0x4004
DATA_GENERIC_JSON = 0x4006
FS_SQUASH, FS_EXT3, FS_IMMUOBJ, FS_RAW, FS_ENCRYPTED_SQUASH = 1, 2, 3, 4, 5
PART_SYSTEM, PART_PRIMSYS = 1, 2
OCI_CONFIG_NAME = "oci-config.json"

MAX_DESCRIPTORS = 4096  # sif creates 48 by default; far more is hostile
MAX_JSON = 4 * 1024 * 1024
ENV_SCRIPT = ".singularity.d/env/10-docker2singularity.sh"

# sif's arch codes (pkg/sif/arch.go; the v1 list in pkg/sif/sif.go HdrArch*) -> GOARCH
ARCHES = {
    b"01": "386",
    b"02": "amd64",
    b"03": "arm",
    b"04": "arm64",
    b"05": "ppc64",
    b"06": "ppc64le",
    b"07": "mips",
    b"08": "mipsle",
    b"09": "mips64",
    b"10": "mips64le",
    b"11": "s390x",
    b"12": "riscv64",
}


@dataclass(frozen=True)
class Descriptor:
    index: int
    datatype: int
    id: int
    offset: int
    size: int
    name: str
    extra: bytes

    def partition(self) -> tuple[int, int, str | None]:
        fstype, parttype, arch = PARTITION_EXTRA.unpack_from(self.extra)
        return fstype, parttype, ARCHES.get(arch.rstrip(b"\0"))


@dataclass(frozen=True)
class SifLayout:
    arch: str | None
    descriptors: tuple[Descriptor, ...]


def read_layout(fh: SeekableByteStream, file_size: int, what: str) -> SifLayout:
    """Parse and check the header and every used descriptor; anything malformed is BadInputError."""
    fh.seek(0)
    raw = fh.read(HEADER.size)
    if len(raw) < HEADER.size:
        raise BadInputError(f"{what}: truncated SIF ({file_size} bytes, shorter than its header)")
    (_launch, magic, version, arch, _uuid, _ctime, _mtime, _free, total, d_off, d_size, _data_off, _data_size) = (
        HEADER.unpack(raw)
    )
    if magic != MAGIC:
        raise BadInputError(f"{what}: not a SIF file (no SIF_MAGIC)")
    if version != VERSION:
        shown = version.rstrip(b"\0").decode("ascii", "replace")
        raise BadInputError(f"{what}: SIF version {shown!r} is not supported (only 01)")
    if not 0 < total <= MAX_DESCRIPTORS:
        raise BadInputError(f"{what}: corrupt SIF header ({total} descriptors)")
    need = total * DESCRIPTOR.size
    if d_off < HEADER.size or d_size < need or d_off + need > file_size:
        raise BadInputError(
            f"{what}: truncated or corrupt SIF (descriptor table at {d_off}+{need} outside the {file_size}-byte file)"
        )
    fh.seek(d_off)
    table = fh.read(need)
    if len(table) != need:
        raise BadInputError(f"{what}: truncated SIF (descriptor table)")
    descriptors = []
    for i in range(total):
        (datatype, used, ident, _group, _link, offset, size, _padded, _c, _m, _uid, _gid, name, extra) = (
            DESCRIPTOR.unpack_from(table, i * DESCRIPTOR.size)
        )
        if not used:
            continue
        if offset < 0 or size < 0 or offset + size > file_size:
            raise BadInputError(
                f"{what}: corrupt SIF (descriptor {i} points at {offset}+{size}, outside the {file_size}-byte file)"
            )
        descriptors.append(
            Descriptor(i, datatype, ident, offset, size, name.rstrip(b"\0").decode("utf-8", "replace"), extra)
        )
    return SifLayout(ARCHES.get(arch.rstrip(b"\0")), tuple(descriptors))


def system_partition(layout: SifLayout, what: str) -> Descriptor:
    """The primary system partition (what `apptainer run` mounts), else the only system one."""
    parts = [d for d in layout.descriptors if d.datatype == DATA_PARTITION]
    if any(d.partition()[0] == FS_ENCRYPTED_SQUASH for d in parts):
        raise BadInputError(f"{what}: the SIF's filesystem is encrypted; imgcheck cannot read it")
    squash = [d for d in parts if d.partition()[0] == FS_SQUASH]
    primary = [d for d in squash if d.partition()[1] == PART_PRIMSYS]
    if primary:
        return primary[0]
    system = [d for d in squash if d.partition()[1] == PART_SYSTEM]
    if len(system) == 1:
        return system[0]
    if not squash:
        kinds = sorted({d.partition()[0] for d in parts})
        raise BadInputError(f"{what}: the SIF holds no squashfs partition (filesystem types {kinds})")
    raise BadInputError(f"{what}: the SIF holds {len(squash)} squashfs partitions and none is primary")


def _go_unquote(text: str) -> str | None:
    """A Go %q string literal (with its quotes) -> its value; None if it uses an escape we don't read."""
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return None
    out, i, body = [], 0, text[1:-1]
    simple = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\\": "\\", '"': '"'}
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt in simple:
            out.append(simple[nxt])
            i += 2
        elif nxt in ("x", "u", "U"):
            width = {"x": 2, "u": 4, "U": 8}[nxt]
            digits = body[i + 2 : i + 2 + width]
            if len(digits) != width or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                return None
            out.append(chr(int(digits, 16)))
            i += 2 + width
        else:
            return None
    return "".join(out)


def _shell_unescape(text: str) -> str:
    # apptainer's shell.Escape puts a backslash before \ " ` $
    return re.sub(r'\\([\\"`$])', r"\1", text)


_NEEDS_SHELL = re.compile(r"(?<!\\)[$`]")  # an unescaped expansion: only a shell could give its value
_EXPORT_DEFAULT = re.compile(r'export ([A-Za-z_][A-Za-z0-9_]*)="\$\{\1:-(".*")\}"')
_EXPORT_EMPTY = re.compile(r'export ([A-Za-z_][A-Za-z0-9_]*)="\$\{\1:-\}"')
_EXPORT_PLAIN = re.compile(r'export ([A-Za-z_][A-Za-z0-9_]*)=(".*")')


def parse_docker2singularity(text: str) -> list[str]:
    """Env lines from /.singularity.d/env/10-docker2singularity.sh as Apptainer writes it.

    Only the exact shapes Apptainer writes are read (`export N="${N:-"V"}"`, `export N="V"`); a
    line that would need a shell to evaluate is skipped, never run.
    """
    env = []
    for line in text.splitlines():
        line = line.strip()
        m = _EXPORT_DEFAULT.fullmatch(line)
        if m:
            value = _go_unquote(m.group(2))
        elif _EXPORT_EMPTY.fullmatch(line):
            m, value = _EXPORT_EMPTY.fullmatch(line), ""
        else:
            m = _EXPORT_PLAIN.fullmatch(line)
            value = _go_unquote(m.group(2)) if m else None
        if m and value is not None and not _NEEDS_SHELL.search(value):
            env.append(f"{m.group(1)}={_shell_unescape(value)}")
    return env


SIF_ENV = EnvFile(ENV_SCRIPT, parse_docker2singularity, MAX_JSON)


class SifSource(Source):
    """`sif:PATH`: the squashfs system partition of a SIF, as a one-layer image (a byte range the
    view reads, see view/squashfs.py)."""

    def __init__(self, path: str):
        self.path = path
        self.location = f"sif:{path}"

    def _layout(self) -> tuple[SifLayout, Descriptor, dict[str, Any], list[str]]:
        with reading_input(self.path, "a SIF file", where=self.location) as fh:
            size = os.fstat(fh.fileno()).st_size
            layout = read_layout(fh, size, self.location)
            part = system_partition(layout, self.location)
            config, notes = self._oci_config(fh, layout)
        arch = part.partition()[2] or layout.arch
        if arch:
            config = {"os": "linux", "architecture": arch, **config}
        return layout, part, config, notes

    def _oci_config(self, fh: SeekableByteStream, layout: SifLayout) -> tuple[dict[str, Any], list[str]]:
        found = [d for d in layout.descriptors if d.datatype == DATA_GENERIC_JSON and d.name == OCI_CONFIG_NAME]
        if not found:
            return {}, []
        desc = found[0]
        if desc.size > MAX_JSON:
            raise BadInputError(f"{self.location}: {OCI_CONFIG_NAME} object of {desc.size} bytes is too large")
        fh.seek(desc.offset)
        try:
            doc = json.loads(fh.read(desc.size))
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadInputError(f"{self.location}: {OCI_CONFIG_NAME} is not valid JSON ({exc})") from None
        if not isinstance(doc, dict):
            raise BadInputError(f"{self.location}: {OCI_CONFIG_NAME} is not a JSON object")
        return {"config": doc}, [f"image config read from the SIF's {OCI_CONFIG_NAME} object"]

    def open(self) -> OpenedImage:
        _layout, part, config, notes = self._layout()
        return SquashfsRangeSource(
            self.path,
            location=self.location,
            offset=part.offset,
            size=part.size,
            config=config,
            env_file=SIF_ENV,
            notes=tuple(notes),
        ).open()
