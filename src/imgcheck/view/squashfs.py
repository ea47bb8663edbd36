"""Read and index a squashfs 4.0 filesystem (Enroot `.sqsh`, the partition inside a SIF) in place.

Nothing is mounted, nothing is extracted to disk, nothing from the image runs. The directory tree is
walked from its metadata tables; only the files extractors want are decompressed, into memory.

Why a reader of our own: PySquashfsImage (0.9.0, 2023) builds the whole tree in memory, decompresses
without an output bound and reads LZ4 as frames (squashfs writes raw LZ4 blocks); dissect.squashfs
is AGPL-3.0 (imgcheck is Apache-2.0); Debian bookworm's unsquashfs 4.5.1 cannot read a filesystem
at an offset (SIF) and runs one process per extracted file. The read-only v4.0 format is small and
stable since Linux 2.6.29: Documentation/filesystems/squashfs.rst and fs/squashfs/squashfs_fs.h in
the Linux kernel, and squashfs-tools' squashfs_fs.h (github.com/plougher/squashfs-tools).

Every size and offset read from the image is checked against the image before it is used, every
decompression is bounded by the size the format allows, and caches are LRU-bounded, so a hostile
image costs bounded memory and ends in one BadInputError line.

Sources hand over the filesystem as a seekable byte range (media type SQUASHFS_LAYER); the view
indexes it here as one layer, as the tar walk indexes a layer tar.
"""

from __future__ import annotations

import functools
import io
import itertools
import lzma
import struct
import zlib
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..errors import BadInputError, LimitExceededError, UnavailableError
from ..inroot import MAX_LINK_TARGET, PATH_MAX
from ..sources.read_options import Limits
from ..streams import SeekableByteStream
from .layer_index import FILE, OTHER, SYMLINK, Entry, LayerIndex, path_hash, scan_entry
from .wants import WantSet

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")

MAGIC = 0x73717368  # "hsqs" little-endian
SUPERBLOCK = struct.Struct("<IIIIIHHHHHHQQQQQQQQ")  # 96 bytes, squashfs_fs.h struct squashfs_super_block
METADATA_SIZE = 8192  # uncompressed size of a metadata block
METADATA_UNCOMPRESSED = 0x8000  # bit of the 2-byte metadata header
DATA_UNCOMPRESSED = 1 << 24  # bit of a data block / fragment size word
INVALID_FRAG = 0xFFFFFFFF
MAX_DIR_COUNT = 256  # entries per directory header (kernel: SQUASHFS_DIR_COUNT)
MAX_NAME = 256  # SQUASHFS_NAME_LEN
MAX_SYMLINK = MAX_LINK_TARGET  # as the tar walk: a longer target is ENAMETOOLONG to the kernel
NO_TABLE = 0xFFFFFFFFFFFFFFFF

COMPRESSORS = {1: "gzip", 2: "lzma", 3: "lzo", 4: "xz", 5: "lz4", 6: "zstd"}

# inode types (squashfs_fs.h); directory entries carry the basic type
DIR_T, REG_T, SYMLINK_T, BLKDEV_T, CHRDEV_T, FIFO_T, SOCKET_T = range(1, 8)
LDIR_T, LREG_T, LSYMLINK_T = 8, 9, 10


def _decompressor(comp_id: int, what: str) -> Callable[[bytes, int], bytes]:
    """A function (data, max_out) -> bytes that never produces more than max_out bytes."""
    name = COMPRESSORS.get(comp_id)
    if name == "gzip":

        def gzip_(data: bytes, max_out: int) -> bytes:
            d = zlib.decompressobj()
            out = d.decompress(data, max_out + 1)
            if len(out) > max_out or d.unconsumed_tail:
                raise BadInputError(f"{what}: a block decompresses to more than {max_out} bytes")
            return out

        return gzip_
    if name in ("xz", "lzma"):

        def xz_(data: bytes, max_out: int) -> bytes:
            d = lzma.LZMADecompressor(lzma.FORMAT_AUTO)  # xz streams, and lzma-alone for id 2
            out = d.decompress(data, max_out + 1)
            if len(out) > max_out:
                raise BadInputError(f"{what}: a block decompresses to more than {max_out} bytes")
            return out

        return xz_
    if name == "zstd":
        import zstandard

        dctx = zstandard.ZstdDecompressor()

        def zstd_(data: bytes, max_out: int) -> bytes:
            # stream_reader honours the read size even when a frame declares a huge content size
            with dctx.stream_reader(io.BytesIO(data)) as reader:
                out = reader.read(max_out + 1)
            if len(out) > max_out:
                raise BadInputError(f"{what}: a block decompresses to more than {max_out} bytes")
            return out

        return zstd_
    if name == "lz4":
        try:
            import lz4.block  # type: ignore[import-untyped]  # ships no type hints
        except ImportError:
            raise UnavailableError(f"{what}: LZ4-compressed squashfs needs the 'lz4' Python package") from None

        def lz4_(data: bytes, max_out: int) -> bytes:
            # squashfs stores raw LZ4 blocks (LZ4_decompress_safe), not LZ4 frames
            out: bytes = lz4.block.decompress(data, uncompressed_size=max_out)
            return out

        return lz4_
    if name == "lzo":
        try:
            import lzallright
        except ImportError:
            raise UnavailableError(
                f"{what}: LZO-compressed squashfs (Enroot's default) needs the 'lzallright' Python package"
            ) from None

        def lzo_(data: bytes, max_out: int) -> bytes:
            out = lzallright.LZOCompressor.decompress(data, output_size_hint=max_out)
            if len(out) > max_out:
                raise BadInputError(f"{what}: a block decompresses to more than {max_out} bytes")
            return out

        return lzo_
    raise BadInputError(f"{what}: unknown squashfs compressor id {comp_id}")


@dataclass(frozen=True)
class Superblock:
    inodes: int
    block_size: int
    fragments: int
    compression: int
    block_log: int
    flags: int
    root_inode: int
    bytes_used: int
    id_table_start: int
    inode_table_start: int
    directory_table_start: int
    fragment_table_start: int


@dataclass(frozen=True)
class Inode:
    type: int
    mode: int  # permission bits, as a tar header carries them
    # directories
    dir_block: int = 0
    dir_offset: int = 0
    dir_size: int = 0
    # regular files
    file_size: int = 0
    start_block: int = 0
    fragment: int = INVALID_FRAG
    frag_offset: int = 0
    blocks_at: tuple[int, int] = (0, 0)  # (block, offset) of the block list in the inode table
    # symlinks
    target: bytes = b""


class _LRU(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self._size = size
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self._size:
            self._data.popitem(last=False)


class SquashfsImage:
    """A squashfs filesystem stored at [offset, offset+size) of a seekable file."""

    def __init__(self, fh: SeekableByteStream, offset: int, size: int, what: str) -> None:
        self._fh = fh
        self._base = offset
        self.region_size = size
        self.what = what
        self._limit = size
        raw = self._read_raw(0, SUPERBLOCK.size, "superblock")
        (
            magic,
            inodes,
            _mkfs_time,
            block_size,
            fragments,
            compression,
            block_log,
            flags,
            _no_ids,
            major,
            minor,
            root_inode,
            bytes_used,
            id_table_start,
            _xattr_start,
            inode_table_start,
            directory_table_start,
            fragment_table_start,
            _lookup_start,
        ) = SUPERBLOCK.unpack(raw)
        if magic != MAGIC:
            raise BadInputError(f"{what}: not a squashfs filesystem (bad magic)")
        if (major, minor) != (4, 0):
            raise BadInputError(f"{what}: squashfs version {major}.{minor} is not supported (only 4.0)")
        if not (4096 <= block_size <= 1 << 20) or block_size != 1 << block_log:
            raise BadInputError(f"{what}: corrupt squashfs superblock (block size {block_size})")
        if bytes_used > size:
            raise BadInputError(f"{what}: truncated squashfs ({size} bytes, superblock says {bytes_used})")
        if not (SUPERBLOCK.size <= inode_table_start < directory_table_start < bytes_used):
            raise BadInputError(f"{what}: corrupt squashfs superblock (table offsets)")
        self.sb = Superblock(
            inodes,
            block_size,
            fragments,
            compression,
            block_log,
            flags,
            root_inode,
            bytes_used,
            id_table_start,
            inode_table_start,
            directory_table_start,
            fragment_table_start,
        )
        self._limit = bytes_used
        self._decompress = _decompressor(compression, what)
        self._meta: _LRU[int, tuple[bytes, int]] = _LRU(512)  # <= 4 MiB of metadata blocks
        self._frags: _LRU[int, bytes] = _LRU(8)  # <= 8 MiB of fragment blocks; many small files share one

    @property
    def compressor(self) -> str:
        return COMPRESSORS.get(self.sb.compression, str(self.sb.compression))

    # -- raw access ----------------------------------------------------------------------
    def _read_raw(self, pos: int, n: int, part: str) -> bytes:
        if pos < 0 or n < 0 or pos + n > self._limit:
            raise BadInputError(f"{self.what}: corrupt squashfs ({part} at {pos}+{n} lies outside the image)")
        self._fh.seek(self._base + pos)
        data = self._fh.read(n)
        if len(data) != n:
            raise BadInputError(f"{self.what}: truncated squashfs (short read of {part})")
        return data

    def _metadata_block(self, pos: int) -> tuple[bytes, int]:
        """The metadata block at `pos`: (its bytes, where the next block starts)."""
        cached = self._meta.get(pos)
        if cached is not None:
            return cached
        (header,) = struct.unpack("<H", self._read_raw(pos, 2, "metadata header"))
        length = header & ~METADATA_UNCOMPRESSED
        if length == 0 or length > METADATA_SIZE:
            raise BadInputError(f"{self.what}: corrupt squashfs (metadata block of {length} bytes)")
        data = self._read_raw(pos + 2, length, "metadata block")
        if not header & METADATA_UNCOMPRESSED:
            data = self._inflate(data, METADATA_SIZE)
        result = (data, pos + 2 + length)
        self._meta.put(pos, result)
        return result

    def _inflate(self, data: bytes, max_out: int) -> bytes:
        try:
            return self._decompress(data, max_out)
        except (BadInputError, UnavailableError):
            raise
        except Exception as exc:  # each library has its own error type; all mean corrupt data here
            raise BadInputError(f"{self.what}: corrupt {self.compressor} block in squashfs ({exc})") from None

    def _meta_read(self, table: int, block: int, offset: int, n: int) -> tuple[bytes, int, int]:
        """n bytes of a metadata table from (block, offset); returns them and the position after."""
        out = bytearray()
        while n > 0:
            data, nxt = self._metadata_block(table + block)
            if offset > len(data):
                raise BadInputError(f"{self.what}: corrupt squashfs (offset {offset} past a metadata block)")
            chunk = data[offset : offset + n]
            out += chunk
            n -= len(chunk)
            offset += len(chunk)
            if offset >= len(data):
                block, offset = nxt - table, 0
                if n > 0 and nxt >= self.sb.bytes_used:
                    raise BadInputError(f"{self.what}: truncated squashfs metadata")
        return bytes(out), block, offset

    # -- inodes ----------------------------------------------------------------------------
    def inode(self, ref: int) -> Inode:
        block, offset = ref >> 16, ref & 0xFFFF
        table = self.sb.inode_table_start
        if table + block >= self.sb.directory_table_start:
            raise BadInputError(f"{self.what}: corrupt squashfs (inode reference outside the inode table)")
        head, block, offset = self._meta_read(table, block, offset, 16)
        itype, mode, _uid, _gid, _mtime, _number = struct.unpack("<HHHHII", head)
        mode &= 0o7777
        if itype == DIR_T:
            raw, block, offset = self._meta_read(table, block, offset, 16)
            start, _nlink, size, off, _parent = struct.unpack("<IIHHI", raw)
            return Inode(itype, mode, dir_block=start, dir_offset=off, dir_size=size)
        if itype == LDIR_T:
            raw, block, offset = self._meta_read(table, block, offset, 24)
            _nlink, size, start, _parent, _icount, off, _xattr = struct.unpack("<IIIIHHI", raw)
            return Inode(itype, mode, dir_block=start, dir_offset=off, dir_size=size)
        if itype == REG_T:
            raw, block, offset = self._meta_read(table, block, offset, 16)
            start, frag, frag_off, size = struct.unpack("<IIII", raw)
            return Inode(
                itype,
                mode,
                file_size=size,
                start_block=start,
                fragment=frag,
                frag_offset=frag_off,
                blocks_at=(block, offset),
            )
        if itype == LREG_T:
            raw, block, offset = self._meta_read(table, block, offset, 40)
            start, size, _sparse, _nlink, frag, frag_off, _xattr = struct.unpack("<QQQIIII", raw)
            return Inode(
                itype,
                mode,
                file_size=size,
                start_block=start,
                fragment=frag,
                frag_offset=frag_off,
                blocks_at=(block, offset),
            )
        if itype in (SYMLINK_T, LSYMLINK_T):
            raw, block, offset = self._meta_read(table, block, offset, 8)
            _nlink, length = struct.unpack("<II", raw)
            if length > MAX_SYMLINK:
                raise BadInputError(f"{self.what}: corrupt squashfs (symlink target of {length} bytes)")
            target, _, _ = self._meta_read(table, block, offset, length)
            return Inode(itype, mode, target=target)
        if 4 <= itype <= 14:
            return Inode(itype, mode)  # devices, fifos, sockets: nothing more is needed
        raise BadInputError(f"{self.what}: corrupt squashfs (unknown inode type {itype})")

    # -- directories -----------------------------------------------------------------------
    def listdir(self, inode: Inode) -> Iterator[tuple[bytes, int, int]]:
        """(name, basic type, inode reference) of each entry of a directory inode."""
        remaining = inode.dir_size - 3  # the size counts "." and ".." as 3 bytes
        if remaining <= 0:
            return
        table = self.sb.directory_table_start
        if table + inode.dir_block >= self.sb.bytes_used:
            raise BadInputError(f"{self.what}: corrupt squashfs (directory outside the image)")
        cur = _Cursor(self, table, inode.dir_block, inode.dir_offset)
        unpack_header, unpack_entry = struct.Struct("<III").unpack, struct.Struct("<HhHH").unpack
        while remaining > 0:
            count, start, _number = unpack_header(cur.read(12))
            remaining -= 12
            if count + 1 > MAX_DIR_COUNT:
                raise BadInputError(f"{self.what}: corrupt squashfs (directory header of {count + 1} entries)")
            for _ in range(count + 1):
                ino_off, _delta, etype, name_size = unpack_entry(cur.read(8))
                if name_size + 1 > MAX_NAME:
                    raise BadInputError(f"{self.what}: corrupt squashfs (name of {name_size + 1} bytes)")
                name = cur.read(name_size + 1)
                remaining -= 8 + name_size + 1
                yield name, etype, (start << 16) | ino_off
            if remaining < 0:
                raise BadInputError(f"{self.what}: corrupt squashfs (directory listing overruns its size)")

    def walk(self, max_entries: int) -> Iterator[tuple[str, int, int]]:
        """Every entry below the root, depth first: (path, basic type, inode reference).

        Directory inodes already visited are not entered again, so a hostile image whose
        directories loop cannot make the walk endless.
        """
        root = self.inode(self.sb.root_inode)
        if root.type not in (DIR_T, LDIR_T):
            raise BadInputError(f"{self.what}: corrupt squashfs (root is not a directory)")
        seen = {self.sb.root_inode}
        stack: list[tuple[str, Inode]] = [("", root)]
        count = 0
        while stack:
            prefix, dir_inode = stack.pop()
            subdirs = []
            for raw_name, etype, ref in self.listdir(dir_inode):
                count += 1
                if count > max_entries:
                    raise LimitExceededError(f"{self.what}: more than {max_entries} entries (limit)")
                if b"/" in raw_name or b"\0" in raw_name or raw_name in (b".", b".."):
                    raise BadInputError(f"{self.what}: corrupt squashfs (directory entry {raw_name!r})")
                name = raw_name.decode("utf-8", "surrogateescape")
                path = prefix + name
                if len(path) >= PATH_MAX // 4 and len(path.encode("utf-8", "surrogateescape")) >= PATH_MAX:
                    raise BadInputError(f"{self.what}: a path is longer than PATH_MAX ({PATH_MAX} bytes)")
                if etype in (DIR_T, LDIR_T):
                    if ref in seen:
                        raise BadInputError(f"{self.what}: corrupt squashfs (directory {path!r} loops)")
                    seen.add(ref)
                    sub = self.inode(ref)
                    if sub.type not in (DIR_T, LDIR_T):
                        raise BadInputError(
                            f"{self.what}: corrupt squashfs ({path!r} is not the directory its entry says)"
                        )
                    subdirs.append((path + "/", sub))
                yield path, etype, ref
            stack.extend(reversed(subdirs))

    def lookup(self, path: str) -> Inode | None:
        """The inode at a plain path (no symlinks followed), or None."""
        node = self.inode(self.sb.root_inode)
        for part in [p for p in path.split("/") if p]:
            if node.type not in (DIR_T, LDIR_T):
                return None
            want = part.encode("utf-8", "surrogateescape")
            found = None
            for name, _etype, ref in self.listdir(node):
                if name == want:
                    found = ref
                    break
            if found is None:
                return None
            node = self.inode(found)
        return node

    # -- file contents -----------------------------------------------------------------------
    def _fragment_block(self, index: int) -> bytes:
        cached = self._frags.get(index)
        if cached is not None:
            return cached
        if index >= self.sb.fragments:
            raise BadInputError(f"{self.what}: corrupt squashfs (fragment {index} of {self.sb.fragments})")
        # 512 16-byte entries per metadata block; the table start holds one u64 pointer per block
        (entry_pos,) = struct.unpack(
            "<Q", self._read_raw(self.sb.fragment_table_start + 8 * (index // 512), 8, "fragment index")
        )
        data, _ = self._metadata_block(entry_pos)
        at = (index % 512) * 16
        if at + 16 > len(data):
            raise BadInputError(f"{self.what}: corrupt squashfs (fragment table)")
        start, size_word, _unused = struct.unpack_from("<QII", data, at)
        block = self._data_block(start, size_word, self.sb.block_size)
        self._frags.put(index, block)
        return block

    def _data_block(self, pos: int, size_word: int, expect_max: int) -> bytes:
        length = size_word & ~DATA_UNCOMPRESSED
        if length > self.sb.block_size:
            raise BadInputError(f"{self.what}: corrupt squashfs (data block of {length} bytes)")
        data = self._read_raw(pos, length, "data block")
        if not size_word & DATA_UNCOMPRESSED:
            data = self._inflate(data, expect_max)
        return data

    def read_file(self, inode: Inode) -> bytes:
        """The whole content of a regular file inode (callers bound the size first)."""
        out = b"".join(self.iter_file(inode))
        if len(out) != inode.file_size:
            raise BadInputError(f"{self.what}: corrupt squashfs (file of {inode.file_size} bytes read as {len(out)})")
        return out

    def iter_file(self, inode: Inode) -> Iterator[bytes]:
        """A regular file's content block by block (one block held at a time)."""
        size, bs = inode.file_size, self.sb.block_size
        has_frag = inode.fragment != INVALID_FRAG
        nblocks = size // bs if has_frag else (size + bs - 1) // bs
        raw, _, _ = self._meta_read(self.sb.inode_table_start, inode.blocks_at[0], inode.blocks_at[1], 4 * nblocks)
        sizes = struct.unpack(f"<{nblocks}I", raw)
        pos = inode.start_block
        for i, word in enumerate(sizes):
            want = min(bs, size - i * bs)
            if word == 0:  # a sparse block
                yield bytes(want)
                continue
            block = self._data_block(pos, word, bs)
            pos += word & ~DATA_UNCOMPRESSED
            if len(block) < want:
                raise BadInputError(f"{self.what}: corrupt squashfs (short data block)")
            yield bytes(block[:want])
        if has_frag:
            tail = size - nblocks * bs
            frag = self._fragment_block(inode.fragment)
            if inode.frag_offset + tail > len(frag):
                raise BadInputError(f"{self.what}: corrupt squashfs (fragment shorter than the file's tail)")
            yield bytes(frag[inode.frag_offset : inode.frag_offset + tail])


class FileRanges:
    """A regular file's bytes read by offset, decompressing only the blocks a read touches (the last one kept)."""

    def __init__(self, fs: SquashfsImage, inode: Inode):
        self.fs, self.inode = fs, inode
        size, bs = inode.file_size, fs.sb.block_size
        self.has_frag = inode.fragment != INVALID_FRAG
        self.nblocks = size // bs if self.has_frag else (size + bs - 1) // bs
        raw, _, _ = fs._meta_read(fs.sb.inode_table_start, inode.blocks_at[0], inode.blocks_at[1], 4 * self.nblocks)
        self.sizes = struct.unpack(f"<{self.nblocks}I", raw)
        self.starts = list(
            itertools.accumulate((w & ~DATA_UNCOMPRESSED for w in self.sizes), initial=inode.start_block)
        )
        self._last: tuple[int, bytes] | None = None

    def _block(self, i: int) -> bytes:
        if self._last is not None and self._last[0] == i:
            return self._last[1]
        fs, inode, bs = self.fs, self.inode, self.fs.sb.block_size
        if i < self.nblocks:
            want = min(bs, inode.file_size - i * bs)
            word = self.sizes[i]
            if word == 0:  # a sparse block
                block = bytes(want)
            else:
                block = fs._data_block(self.starts[i], word, bs)
                if len(block) < want:
                    raise BadInputError(f"{fs.what}: corrupt squashfs (short data block)")
                block = bytes(block[:want])
        else:  # the tail, in a fragment
            tail = inode.file_size - self.nblocks * bs
            frag = fs._fragment_block(inode.fragment)
            if inode.frag_offset + tail > len(frag):
                raise BadInputError(f"{fs.what}: corrupt squashfs (fragment shorter than the file's tail)")
            block = bytes(frag[inode.frag_offset : inode.frag_offset + tail])
        self._last = (i, block)
        return block

    def read_at(self, offset: int, n: int) -> bytes:
        """Up to n bytes from `offset` (fewer at the end of the file)."""
        bs = self.fs.sb.block_size
        n = max(0, min(n, self.inode.file_size - offset))
        parts = []
        while n > 0:
            i, within = divmod(offset, bs)
            piece = self._block(i)[within : within + n]
            if not piece:
                raise BadInputError(f"{self.fs.what}: corrupt squashfs (file shorter than its size)")
            parts.append(piece)
            offset += len(piece)
            n -= len(piece)
        return b"".join(parts)


class _Cursor:
    """Sequential reads through a metadata table; small reads are slices of the current block."""

    __slots__ = ("fs", "table", "block", "offset", "data")

    def __init__(self, fs: SquashfsImage, table: int, block: int, offset: int):
        self.fs, self.table, self.block, self.offset = fs, table, block, offset
        self.data: bytes | None = None  # the current block, loaded when first needed

    def read(self, n: int) -> bytes:
        if self.data is None:
            self.data = self.fs._metadata_block(self.table + self.block)[0]
        end = self.offset + n
        if end < len(self.data):
            chunk = self.data[self.offset : end]
            self.offset = end
            return chunk
        chunk, self.block, self.offset = self.fs._meta_read(self.table, self.block, self.offset, n)
        self.data = None
        return chunk


CORRUPT_ERRORS = (struct.error, IndexError, OverflowError, ValueError, MemoryError)


def guarded(what: str, fn: Callable[..., T], *args: object) -> T:
    """Run a reader call; map low-level failures from corrupt data to one BadInputError line."""
    try:
        return fn(*args)
    except (BadInputError, UnavailableError):
        raise
    except CORRUPT_ERRORS as exc:
        raise BadInputError(f"{what}: corrupt squashfs ({type(exc).__name__}: {exc})") from None


# -- one squashfs = one layer ----------------------------------------------------------------------


def index_squashfs(
    fh: SeekableByteStream, size: int, digest: str, wants: WantSet, limits: Limits, what: str
) -> LayerIndex:
    """The LayerIndex of the squashfs in the seekable `fh` (`size` bytes from its start)."""
    if size < SUPERBLOCK.size:
        raise BadInputError(f"{what}: truncated or not a squashfs filesystem ({size} bytes)")
    fs = guarded(what, SquashfsImage, fh, 0, size, what)
    return guarded(what, build_index, fs, digest, wants, limits)


def _feed(fs: SquashfsImage, inode: Inode, consume: Callable[[bytes], object]) -> bool:
    for block in fs.iter_file(inode):
        consume(block)
    return True


def build_index(fs: SquashfsImage, digest: str, wants: WantSet, limits: Limits) -> LayerIndex:
    """A LayerIndex from the squashfs tree, with what the tar walk would have kept."""
    idx = LayerIndex(digest=digest)
    hashes: list[int] = []
    symlinks = 0
    read_bytes = 0
    for raw_path, etype, ref in fs.walk(limits.max_entries):
        idx.entry_count += 1
        if etype in (DIR_T, LDIR_T):
            continue
        # walk() refuses names with '/', NUL, '.' or '..', so its paths are already what
        # layer_index.normalise makes of a tar member name (tests compare both walks' hashes)
        path = raw_path
        hashes.append(path_hash(path))
        if etype in (SYMLINK_T, LSYMLINK_T):
            symlinks += 1
            if symlinks > limits.max_symlinks:
                raise LimitExceededError(f"{fs.what}: more than {limits.max_symlinks} symlinks (limit)")
            inode = fs.inode(ref)
            if inode.type not in (SYMLINK_T, LSYMLINK_T):
                raise BadInputError(f"{fs.what}: corrupt squashfs ({path!r} is not the symlink its entry says)")
            target = inode.target.decode("utf-8", "surrogateescape")
            idx.entries[path] = Entry(path, SYMLINK, linkname=target, layer=digest)
            continue
        if not wants.wanted(path):
            continue
        inode = fs.inode(ref)
        if inode.type in (REG_T, LREG_T):
            entry = Entry(path, FILE, size=inode.file_size, mode=inode.mode, layer=digest)
            limit = wants.content_limit(path)
            if limit is not None:
                if inode.file_size <= limit:
                    read_bytes += inode.file_size
                    if read_bytes > limits.max_uncompressed:
                        raise LimitExceededError(
                            f"{fs.what}: wanted files exceed {limits.max_uncompressed} bytes (limit)"
                        )
                    entry.data = fs.read_file(inode)
                else:
                    entry.truncated = True
            scanner = wants.scanner(path)
            if scanner is not None:
                if entry.data is None:
                    read_bytes += inode.file_size
                    if read_bytes > limits.max_uncompressed:
                        raise LimitExceededError(
                            f"{fs.what}: wanted files exceed {limits.max_uncompressed} bytes (limit)"
                        )
                entry.scan = scan_entry(
                    scanner,
                    inode.file_size,
                    entry.data,
                    functools.partial(_feed, fs, inode),
                    read_at=FileRanges(fs, inode).read_at if entry.data is None else None,
                )
            idx.entries[path] = entry
        else:
            idx.entries[path] = Entry(path, OTHER, layer=digest)
    idx.uncompressed_bytes = read_bytes
    idx.nondir_hashes = array("Q", sorted(set(hashes)))
    return idx
