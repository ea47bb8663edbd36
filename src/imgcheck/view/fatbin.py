"""The GPU architectures a CUDA library carries device code for, read from its fat binaries while the file streams.

A library built with nvcc holds its device code in fat binary containers (the `.nv_fatbin` ELF section). Each
container is a 16-byte header followed by entries, each entry a header naming its kind (PTX or an ELF cubin,
i.e. SASS) and its SM architecture, then its payload:

    container: u32 magic 0xBA55ED50, u16 version (1), u16 header size (16), u64 size of what follows
    entry:     u16 kind (1 PTX, 2 ELF cubin), u16, u32 entry header size, u64 payload size, u64,
               u16 minor, u16 major, u32 SM architecture (35, 80, 90, 100 ...), ...
    next entry = entry + entry header size + payload size; the container ends at header + 16 + size

Layout from CUDA's fatbinary_section.h (FATBIN_MAGIC 0xBA55ED50, fatBinaryHeader {magic, version, headerSize,
fatSize}), n-eiling/cuda-fatbin-decompression fatbin-decompress.h (struct fat_elf_header, struct fat_text_header:
kind, header_size, fatbin_size, ..., arch) and fatbin-decompress.c (get_header: version 1 and header_size 16;
the next container at eh->size + eh->header_size), and GrigoryEvko/nvopen-tools fatbin/FORMAT_SPECIFICATION.md
(entry types 0x01 PTX, 0x02 and 0x10 ELF; next_entry = entry + size + aligned_data_size; 64/80/112-byte entry
headers).

The scan never holds more than one entry header: a file of 400 MB passes through in chunks. A section's
offset is only known from the section headers at the end of the file, so containers are found by their magic and
kept only when their entries chain exactly to the container's end (a stray magic in host code does not).

A library built with relocatable device code (NCCL is) holds two sets: the per-object fat binaries kept for later
device linking (`__nv_relfatbin`, PTX included) and the device-linked one the CUDA runtime loads (`.nv_fatbin`,
SASS only unless the link made PTX). A real nvidia-nccl-cu12 2.21.5 libnccl.so.2 has 112 containers with
sm_50..sm_90 cubins and compute_90 PTX in `__nv_relfatbin`, and one with the same cubins and no PTX in
`.nv_fatbin`. So the ELF section headers (e_shoff from the ELF header; .shstrtab just before them, as GNU ld lays
them out) are kept as they stream past, and the result names the containers of `.nv_fatbin` when that section is
found, every container otherwise (`section` says which).

Two ways to the same result. A layer streamed as tar (gzip, zstd) passes every byte by anyway, so FatbinScan takes
the stream and only looks at what it must (payloads are skipped by counting: 0.02 s for a 279 MB libnccl). A file
readable by offset (a squashfs image, where each 128 KiB block costs a decompression) is read by its structure
(scan_structure): the ELF header, the section headers, and inside `.nv_fatbin` only the container and entry headers
- 9 reads, 334 KB of a real 279 MB libnccl. When the structure does not locate the containers (no `.nv_fatbin`, or
none in it), the file is streamed, so both give one answer.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Protocol

MAGIC = b"\x50\xed\x55\xba"  # 0xBA55ED50 little-endian
_HEADER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIQQHHI")  # the first 32 bytes of an entry header
KIND_PTX = 1
KINDS_SASS = (2, 0x10)
_KNOWN_KINDS = (KIND_PTX, *KINDS_SASS, 0x40)
_MAX_ENTRY_HEADER = 4096
_ARCH_RANGE = range(10, 1000)  # sm_10 .. sm_999: anything else is not an entry header

_SEARCH, _CONTAINER, _ENTRY_HEAD, _SKIP = range(4)
_ELF64_LE = b"\x7fELF\x02\x01"
_BEFORE_SHT = 256 * 1024  # bytes kept before the section headers: where .shstrtab sits
_MAX_SHT = 1024 * 1024
_MAX_CONTAINERS = 100_000
RUNTIME_SECTION = ".nv_fatbin"


def _sht_window(head: bytes, size: int) -> tuple[int, int] | None:
    """The file range holding .shstrtab (as GNU ld lays it out, just before them) and the section headers of the
    64-bit little-endian ELF file whose first 64 bytes are `head`, or None."""
    if len(head) < 64 or not head.startswith(_ELF64_LE):
        return None
    shoff = int.from_bytes(head[0x28:0x30], "little")
    table = int.from_bytes(head[0x3A:0x3C], "little") * int.from_bytes(head[0x3C:0x3E], "little")
    if 0 < table <= _MAX_SHT and shoff + table <= size:
        return max(0, shoff - _BEFORE_SHT), shoff + table
    return None


def find_section(head: bytes, kept: bytes | bytearray, kept_from: int, name: str) -> tuple[int, int] | None:
    """(offset, size) of the section `name`, from the ELF header `head` and the bytes `kept` (the file from offset
    `kept_from` to the end of the section headers), or None."""
    shoff = int.from_bytes(head[0x28:0x30], "little")
    entsize = int.from_bytes(head[0x3A:0x3C], "little")
    count = int.from_bytes(head[0x3C:0x3E], "little")
    strndx = int.from_bytes(head[0x3E:0x40], "little")
    if entsize < 64 or strndx >= count or shoff < kept_from:
        return None
    table = kept[shoff - kept_from :]

    def header(i: int) -> tuple[int, int, int]:
        h = table[i * entsize : i * entsize + 64]
        name_off = int.from_bytes(h[0:4], "little")
        return name_off, int.from_bytes(h[0x18:0x20], "little"), int.from_bytes(h[0x20:0x28], "little")

    _n, str_off, str_size = header(strndx)
    if str_off < kept_from or str_off + str_size > shoff:
        return None  # .shstrtab is not in the kept bytes: no names
    names = kept[str_off - kept_from : str_off - kept_from + str_size]
    want = name.encode()
    for i in range(count):
        name_off, offset, size = header(i)
        if names[name_off : name_off + len(want) + 1] == want + b"\0":
            return offset, size
    return None


class Scanner(Protocol):
    """A streaming scanner (Want.scan): fed a file's bytes in order, then asked for its result."""

    def feed(self, chunk: memoryview | bytes) -> None: ...

    def result(self) -> str | None: ...


class FatbinScan:
    """Feed a file's bytes in order (feed), then result(): a small JSON text, or None when no container was found."""

    def __init__(self, size: int):
        self.size = size
        self._buf = bytearray()
        self._pos = 0  # file offset of _buf[0]
        self._state = _SEARCH
        self._skip = 0
        self._end = 0  # the current container's end (file offset)
        self._pending: list[tuple[int, int]] = []  # (kind, arch) of the container being read
        self.found: list[tuple[int, frozenset[tuple[int, int]]]] = []  # (file offset, {(kind, arch)}) per container
        self._start = 0  # the current container's file offset
        self.rejected = 0
        self._fed = 0  # bytes fed so far (file offset of the next chunk)
        self._head = bytearray()  # the ELF header
        self._window: tuple[int, int] | None = None  # file range kept for the section headers
        self._kept = bytearray()
        self._kept_from = 0

    @property
    def containers(self) -> int:
        return len(self.found)

    def feed(self, chunk: memoryview | bytes) -> None:
        data = memoryview(chunk)
        self._keep(data)
        self._fed += len(data)
        if self._state == _SKIP and not self._buf:
            if len(data) <= self._skip:  # most of a large file: payload bytes nobody looks at
                self._skip -= len(data)
                self._pos += len(data)
                return
            data = data[self._skip :]
            self._pos += self._skip
            self._skip = 0
            self._state = _ENTRY_HEAD
        self._buf += data
        self._run()

    def _keep(self, data: memoryview) -> None:
        """Keep the ELF header, then the bytes of the window holding .shstrtab and the section headers."""
        at = self._fed
        if len(self._head) < 64:
            self._head += data[: 64 - len(self._head)]
            if len(self._head) == 64:
                self._window = _sht_window(bytes(self._head), self.size)
                if self._window is not None:
                    self._kept_from = self._window[0]
        if self._window is None:
            return
        lo, hi = max(at, self._window[0]), min(at + len(data), self._window[1])
        if lo < hi:
            self._kept += data[lo - at : hi - at]

    def _section(self, name: str) -> tuple[int, int] | None:
        """(offset, size) of the section `name`, from the kept section headers, or None."""
        if self._window is None or len(self._kept) != self._window[1] - self._window[0]:
            return None
        return find_section(bytes(self._head), self._kept, self._kept_from, name)

    def start_at(self, offset: int) -> None:
        """Start the scan at file `offset` instead of the file's start (the ELF header is not read then)."""
        self._pos = self._fed = offset
        self._head = bytearray(64)  # not an ELF header: nothing is kept for the section headers

    def searching(self) -> bool:
        """True between containers (searching for the next magic)."""
        return self._state == _SEARCH

    def jump(self) -> int:
        """In a payload, move past the rest of it without its bytes; the number of bytes moved past (0 elsewhere).
        After feed() returns in a payload, nothing is buffered: the payload's remaining bytes are all skipped."""
        if self._state != _SKIP or self._buf:
            return 0
        n, self._skip = self._skip, 0
        self._pos += n
        self._fed += n
        self._state = _ENTRY_HEAD
        return n

    def _drop(self, n: int) -> None:
        del self._buf[:n]
        self._pos += n

    def _reject(self) -> None:
        self.rejected += 1
        self._pending = []
        self._state = _SEARCH

    def _run(self) -> None:
        while True:
            buf = self._buf
            if self._state == _SKIP:
                if len(buf) < self._skip:
                    self._skip -= len(buf)
                    self._drop(len(buf))
                    return
                self._drop(self._skip)
                self._skip = 0
                self._state = _ENTRY_HEAD
            elif self._state == _SEARCH:
                at = buf.find(MAGIC)
                if at < 0:
                    self._drop(max(0, len(buf) - (len(MAGIC) - 1)))
                    return
                self._drop(at)
                self._state = _CONTAINER
            elif self._state == _CONTAINER:
                if len(buf) < _HEADER.size:
                    return
                _magic, version, header_size, size = _HEADER.unpack_from(buf)
                end = self._pos + _HEADER.size + size
                if version != 1 or header_size != _HEADER.size or size == 0 or end > self.size:
                    self.rejected += 1
                    self._drop(1)  # not a container: search on from the next byte
                    self._state = _SEARCH
                    continue
                self._end = end
                self._start = self._pos
                self._pending = []
                self._drop(_HEADER.size)
                self._state = _ENTRY_HEAD
            else:  # _ENTRY_HEAD
                if self._pos == self._end:
                    self._commit()
                    continue
                if len(buf) < _ENTRY.size:
                    return
                kind, _u, head, payload, _c, _minor, _major, arch = _ENTRY.unpack_from(buf)
                nxt = self._pos + head + payload
                if kind not in _KNOWN_KINDS or not _ENTRY.size <= head <= _MAX_ENTRY_HEADER or nxt > self._end:
                    self._reject()
                    continue
                if kind == KIND_PTX or kind in KINDS_SASS:
                    if arch not in _ARCH_RANGE:
                        self._reject()
                        continue
                    self._pending.append((kind, arch))
                self._skip = nxt - self._pos
                self._state = _SKIP

    def _commit(self) -> None:
        if self._pending and len(self.found) < _MAX_CONTAINERS:
            self.found.append((self._start, frozenset(self._pending)))
        self._pending = []
        self._state = _SEARCH

    def result(self) -> str | None:
        if not self.found:
            return None
        chosen, section = self.found, None
        runtime = self._section(RUNTIME_SECTION)
        if runtime is not None:
            offset, size = runtime
            inside = [c for c in self.found if offset <= c[0] < offset + size]
            if inside:
                chosen, section = inside, RUNTIME_SECTION
        return _result(chosen, section)


_SEARCH_READ = 64 * 1024  # bytes read at a time where containers are searched for
_HEAD_READ = 512  # bytes read at an entry header: the header, and past it only payload the scan skips


def scan_structure(read_at: Callable[[int, int], bytes], size: int) -> str | None:
    """The result() of FatbinScan for a file read by offset (`read_at(offset, n)`), reading only the ELF header,
    the section headers and, inside `.nv_fatbin`, the container and entry headers: payloads are skipped, not read.
    Raises NeedStream when the file has no readable `.nv_fatbin` holding a container, which is when the streaming
    scan looks at every container of the file."""
    return _fatbin_by_structure(read_at, size, *_elf_structure(read_at, size))


def _elf_structure(read_at: Callable[[int, int], bytes], size: int) -> tuple[bytes, int, bytes]:
    """(ELF header, offset of the kept window, the window: .shstrtab and the section headers); NeedStream if none."""
    head = read_at(0, 64)
    window = _sht_window(head, size)
    if window is None:
        raise NeedStream("not a 64-bit ELF file with section headers")
    return head, window[0], read_at(window[0], window[1] - window[0])


def _fatbin_by_structure(
    read_at: Callable[[int, int], bytes], size: int, head: bytes, kept_from: int, kept: bytes
) -> str | None:
    section = find_section(head, kept, kept_from, RUNTIME_SECTION)
    if section is None or section[0] + section[1] > size:
        raise NeedStream(f"no {RUNTIME_SECTION} section")
    start, end = section[0], section[0] + section[1]
    scan = FatbinScan(size)
    scan.start_at(start)
    pos = start
    while pos < size and not (pos >= end and scan.searching()):
        pos += scan.jump()  # past an entry's payload, unread
        if pos >= size:
            break
        chunk = read_at(pos, min(_SEARCH_READ if scan.searching() else _HEAD_READ, size - pos))
        if not chunk:
            raise NeedStream("short read")
        scan.feed(chunk)
        pos += len(chunk)
    scan.feed(b"")  # a container ending at the end of the file is complete
    inside = [c for c in scan.found if start <= c[0] < end]
    if not inside:
        raise NeedStream(f"no container in {RUNTIME_SECTION}")
    return _result(inside, RUNTIME_SECTION)


class NeedStream(Exception):
    """The file's structure does not locate its fat binaries: stream every byte through FatbinScan instead."""


def _result(chosen: list[tuple[int, frozenset[tuple[int, int]]]], section: str | None) -> str:
    pairs = set().union(*(entries for _offset, entries in chosen))
    return json.dumps(
        {
            "sass": sorted({a for k, a in pairs if k != KIND_PTX}),
            "ptx": sorted({a for k, a in pairs if k == KIND_PTX}),
            "containers": len(chosen),
            "section": section,
        }
    )


def parse_result(text: str | None) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(SASS architectures, PTX architectures) from a result(), or None."""
    if not text:
        return None
    try:
        doc = json.loads(text)
        sass = tuple(int(a) for a in doc["sass"])
        ptx = tuple(int(a) for a in doc["ptx"])
    except (ValueError, KeyError, TypeError):
        return None
    return sass, ptx


class NcclScan:
    """libnccl: its fat binaries (FatbinScan), its build line (build_string.NcclBuildScan) and the newest GLIBC_x.y
    its .gnu.version_r needs, in one pass.

    The version-needs section sits near the start of the file (GNU ld puts .dynsym, .dynstr and .gnu.version_r in
    the first segment) and is found through the section headers FatbinScan keeps from the end; the first
    HEAD_BYTES are kept for it. The result is FatbinScan's JSON with "nccl", "cuda" and "glibc" added, or None."""

    HEAD_BYTES = 1024 * 1024

    def __init__(self, size: int):
        from .build_string import NcclBuildScan

        self._fatbin = FatbinScan(size)
        self._build = NcclBuildScan()
        self._head = bytearray()

    def feed(self, chunk: memoryview | bytes) -> None:
        if len(self._head) < self.HEAD_BYTES:
            self._head += bytes(chunk[: self.HEAD_BYTES - len(self._head)])
        self._fatbin.feed(chunk)
        self._build.feed(chunk)

    def _glibc(self) -> str | None:
        from ..elf.reader import glibc_need_of

        verneed = self._fatbin._section(".gnu.version_r")
        dynstr = self._fatbin._section(".dynstr")
        if verneed is None or dynstr is None:
            return None
        needs = parse_verneed(bytes(self._head), verneed, dynstr)
        found = glibc_need_of(needs) if needs is not None else None
        return found[0] if found else None

    def result(self) -> str | None:
        fat = self._fatbin.result()
        doc = json.loads(fat) if fat else {}
        if self._build.found is not None:
            doc["nccl"], doc["cuda"] = self._build.found
        glibc = self._glibc()
        if glibc is not None:
            doc["glibc"] = glibc
        return json.dumps(doc) if doc else None


_VERNEED = struct.Struct("<HHIII")  # Elf64_Verneed: vn_version, vn_cnt, vn_file, vn_aux, vn_next
_VERNAUX = struct.Struct("<IHHII")  # Elf64_Vernaux: vna_hash, vna_flags, vna_other, vna_name, vna_next
_MAX_NEEDS = 256


def parse_verneed(head: bytes, verneed: tuple[int, int], dynstr: tuple[int, int]) -> dict[str, tuple[str, ...]] | None:
    """{library: versions} from a .gnu.version_r held in `head` (file offsets), names from .dynstr; None when either
    section lies outside the kept bytes or the chain is malformed."""
    (voff, vsize), (soff, ssize) = verneed, dynstr
    if voff + vsize > len(head) or soff + ssize > len(head):
        return None
    strings = head[soff : soff + ssize]

    def name(at: int) -> str | None:
        end = strings.find(b"\0", at)
        return strings[at:end].decode("ascii", "replace") if 0 <= at < end else None

    found: dict[str, tuple[str, ...]] = {}
    at, count = voff, 0
    while count < _MAX_NEEDS and at + _VERNEED.size <= voff + vsize:
        _v, cnt, file_off, aux, nxt = _VERNEED.unpack_from(head, at)
        library = name(file_off)
        if library is None:
            return None
        versions, a = [], at + aux
        for _ in range(min(cnt, _MAX_NEEDS)):
            if not voff <= a <= voff + vsize - _VERNAUX.size:
                return None
            _h, _f, _o, name_off, anext = _VERNAUX.unpack_from(head, a)
            version = name(name_off)
            if version is None:
                return None
            versions.append(version)
            if not anext:
                break
            a += anext
        found[library] = tuple(versions)
        count += 1
        if not nxt:
            break
        at += nxt
    return found


def parse_glibc(text: str | None) -> str | None:
    """The newest GLIBC_x.y a libnccl needs, from an NcclScan result."""
    if not text:
        return None
    try:
        value = json.loads(text).get("glibc")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def parse_build(text: str | None) -> tuple[str, str] | None:
    """(NCCL version, CUDA release) of a libnccl's build line from an NcclScan result, or None."""
    if not text:
        return None
    try:
        doc = json.loads(text)
        nccl, cuda = doc["nccl"], doc["cuda"]
    except (ValueError, KeyError, TypeError):
        return None
    return (nccl, cuda) if isinstance(nccl, str) and isinstance(cuda, str) else None


SCANNERS: dict[str, Callable[[int], Scanner]] = {"fatbin": FatbinScan, "nccl": NcclScan}
_RODATA_READ = 1 << 20


def scan_nccl_structure(read_at: Callable[[int, int], bytes], size: int) -> str | None:
    """NcclScan's result for a file read by offset (squashfs): the fat binaries by their headers (scan_structure),
    the GLIBC needs from the first HEAD_BYTES, and the build line from .rodata (where the compiler puts NCCL's
    VERSION_STRING) read until it is found; NeedStream when a section is missing, so the whole file is streamed."""
    from .build_string import NcclBuildScan

    head, kept_from, kept = _elf_structure(read_at, size)
    fat = _fatbin_by_structure(read_at, size, head, kept_from, kept)
    doc = json.loads(fat) if fat else {}
    verneed, dynstr = (
        find_section(head, kept, kept_from, ".gnu.version_r"),
        find_section(head, kept, kept_from, ".dynstr"),
    )
    if verneed is not None and dynstr is not None and max(verneed[1], dynstr[1]) <= NcclScan.HEAD_BYTES:
        from ..elf.reader import glibc_need_of

        # the two sections alone, at their file offsets (parse_verneed reads by offset)
        sparse = bytearray(max(verneed[0] + verneed[1], dynstr[0] + dynstr[1]))
        for offset, length in (verneed, dynstr):
            sparse[offset : offset + length] = read_at(offset, length)
        needs = parse_verneed(bytes(sparse), verneed, dynstr)
        found = glibc_need_of(needs) if needs is not None else None
        if found:
            doc["glibc"] = found[0]
    # the string literal is in .rodata (the linker merges .rodata.str*); a file without one has no build line
    build = NcclBuildScan()
    for name in (".rodata", ".data"):
        section = find_section(head, kept, kept_from, name)
        if section is None:
            continue
        if section[0] + section[1] > size:
            raise NeedStream(f"{name} runs past the end of the file")
        pos, end = section[0], section[0] + section[1]
        while pos < end and build.found is None:
            chunk = read_at(pos, min(_RODATA_READ, end - pos))
            if not chunk:
                raise NeedStream("short read")
            build.feed(chunk)
            pos += len(chunk)
        if build.found is not None:
            break
    if build.found is not None:
        doc["nccl"], doc["cuda"] = build.found
    return json.dumps(doc) if doc else None


# the same results for a file read by offset (squashfs), reading its structure instead of every byte
STRUCTURE_SCANNERS = {"fatbin": scan_structure, "nccl": scan_nccl_structure}
