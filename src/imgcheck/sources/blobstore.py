"""Read-only named-blob access to the containers of an image: a directory or a tar file.

Neither is ever extracted; members are streamed from their offset in the archive.
"""

from __future__ import annotations

import io
import os
import posixpath
import stat
import tarfile
from collections.abc import Callable
from typing import TYPE_CHECKING, BinaryIO

from .. import safejson
from ..errors import BadInputError, LimitExceededError, UnavailableError
from ..streams import ByteStream, SeekableByteStream

if TYPE_CHECKING:
    from tarfile import _Fileobj as TarFileobj  # typeshed's name for what tarfile.open(fileobj=...) accepts

    from _typeshed import WriteableBuffer

MAX_JSON_BYTES = 8 * 1024 * 1024  # manifests and configs are kilobytes; refuse absurd ones
# A compressed outer archive (docker save | gzip) is read by decompressing: its members may not
# claim more than this many times the file's size, nor 1 TiB (a bomb, not an image).
MAX_INFLATE_RATIO = 200
MIN_INFLATE_CAP = 1024**3  # small archives may always inflate this far
MAX_INFLATED_BYTES = 1024**4
MAX_KEPT_SMALL = 4 * MAX_JSON_BYTES  # small members of a compressed archive held from its first pass


def open_regular(path: str, what: str) -> BinaryIO:
    """Open a file for reading only if it is a regular file: a FIFO, socket or device named
    where a blob should be would block or never end (O_NONBLOCK: the open itself cannot hang)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise BadInputError(f"{what} is missing") from None
    except IsADirectoryError:
        raise BadInputError(f"{what} is a directory") from None
    except OSError as exc:
        raise UnavailableError(f"{what}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file (FIFO, socket or device)"
            raise BadInputError(f"{what} is {kind}")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


class BlobStore:
    def open(self, name: str) -> ByteStream:
        raise NotImplementedError

    def exists(self, name: str) -> bool:
        raise NotImplementedError

    def size(self, name: str) -> int | None:
        return None

    def close(self) -> None:
        pass

    def read_json(self, name: str, what: str) -> object:
        return safejson.loads(self.read_bytes(name, what), what)

    def read_bytes(self, name: str, what: str) -> bytes:
        fh = self.open(name)
        try:
            data = fh.read(MAX_JSON_BYTES + 1)
        finally:
            fh.close()
        if len(data) > MAX_JSON_BYTES:
            raise BadInputError(f"{what} is larger than {MAX_JSON_BYTES} bytes")
        return data


def _clean(name: str) -> str:
    """Normalise a member name; refuse any that climbs out of the container."""
    norm = posixpath.normpath(name.lstrip("/")) if name else ""
    if not norm or norm == "." or norm.startswith("../") or norm == "..":
        raise BadInputError(f"refusing path {name!r}: outside the archive")
    return norm


class DirStore(BlobStore):
    def __init__(self, root: str) -> None:
        if not os.path.isdir(root):
            raise UnavailableError(f"{root}: no such directory")
        self.root = os.path.realpath(root)

    def _path(self, name: str) -> str:
        path = os.path.realpath(os.path.join(self.root, _clean(name)))
        if not path.startswith(self.root + os.sep):
            raise BadInputError(f"refusing path {name!r}: outside {self.root}")
        return path

    def open(self, name: str) -> BinaryIO:
        return open_regular(self._path(name), f"{name} in {self.root}")

    def exists(self, name: str) -> bool:
        return os.path.isfile(self._path(name))

    def size(self, name: str) -> int | None:
        return os.path.getsize(self._path(name))


class _Section(io.RawIOBase):
    """A read-only window [start, start+size) of a file, with its own file handle."""

    def __init__(self, path: str, start: int, size: int) -> None:
        self._fh = open(path, "rb")
        self._fh.seek(start)
        self._start, self._size = start, size
        self._left = size

    def read_at(self, offset: int, n: int) -> bytes:
        """Up to `n` bytes at `offset` of the window, not moving the stream (a file index's re-read of an
        uncompressed layer, view/file_index.py)."""
        n = max(0, min(n, self._size - offset))
        return os.pread(self._fh.fileno(), n, self._start + offset) if n and offset >= 0 else b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: WriteableBuffer) -> int:
        if self._left <= 0:
            return 0
        view = memoryview(b)
        n = self._fh.readinto(view[: min(len(view), self._left)])
        if not n:
            raise BadInputError("archive member is truncated")
        self._left -= n
        return n

    def read(self, n: int | None = -1) -> bytes:
        if n is None or n < 0:
            n = self._left
        data = self._fh.read(min(n, self._left))
        self._left -= len(data)
        return data

    def close(self) -> None:
        self._fh.close()
        super().close()


class _Closing:
    """A member stream that also closes the TarFile it came from."""

    def __init__(self, fh: ByteStream, owner: tarfile.TarFile) -> None:
        self._fh, self._owner = fh, owner

    def read(self, n: int = -1) -> bytes:
        return self._fh.read(n)

    def __enter__(self) -> _Closing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._fh.close()
        self._owner.close()


class _Inflated(io.RawIOBase):
    """A decompressed archive that refuses to inflate past `cap` bytes. tarfile reads a PAX
    header's whole claimed size in one read() and skips members by seeking through the
    decompressor: either could inflate a bomb without limit."""

    def __init__(self, inner: SeekableByteStream, cap: int, path: str) -> None:
        self._inner, self._cap, self._path = inner, cap, path

    def _over(self) -> LimitExceededError:
        return LimitExceededError(
            f"{self._path}: the compressed archive inflates to more than {self._cap} bytes (limit)"
        )

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def read(self, n: int | None = -1) -> bytes:
        room = self._cap - self._inner.tell()
        if room < 0:
            raise self._over()
        data = self._inner.read(room + 1 if n is None or n < 0 else min(n, room + 1))
        if len(data) > room:
            raise self._over()
        return data

    def readinto(self, b: WriteableBuffer) -> int:
        view = memoryview(b)
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        target = offset if whence == 0 else self._inner.tell() + offset if whence == 1 else None
        if target is None:
            raise io.UnsupportedOperation("seek from the end of a compressed archive")
        if target > self._cap:
            raise self._over()
        return self._inner.seek(target)

    def tell(self) -> int:
        return self._inner.tell()

    def close(self) -> None:
        self._inner.close()
        super().close()


def _open_tar(path: str) -> tuple[tarfile.TarFile, bool]:
    """(the archive, whether it is compressed); compressed ones inflate within a cap."""
    import bz2
    import gzip
    import lzma

    with open(path, "rb") as fh:
        magic = fh.read(6)
    opener = {b"\x1f\x8b": gzip.GzipFile, b"BZ": bz2.BZ2File, b"\xfd7": lzma.LZMAFile}.get(magic[:2])
    if opener is None:
        return tarfile.open(path, "r:"), False
    cap = min(MAX_INFLATED_BYTES, max(MIN_INFLATE_CAP, MAX_INFLATE_RATIO * os.path.getsize(path)))
    inner = opener(path, "rb")
    try:
        return tarfile.open(fileobj=_Inflated(inner, cap, path), mode="r:"), True
    except BaseException:
        inner.close()
        raise


class TarStore(BlobStore):
    """Members of a tar archive by name; the member index is built once from headers only."""

    def __init__(self, path: str, max_members: int = 100_000) -> None:
        if not os.path.exists(path):
            raise UnavailableError(f"{path}: no such file")
        open_regular(path, path).close()  # a FIFO would block tarfile (and cannot be seeked anyway)
        try:
            self._tar, compressed = _open_tar(path)
        except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
            reason = str(exc).splitlines()[0].rstrip(":")
            raise BadInputError(f"{path}: not a readable tar archive ({reason})") from None
        self.path = path
        self._members: dict[str, tarfile.TarInfo] = {}
        self._small: dict[str, bytes] = {}  # small members of a compressed archive, read in the one pass
        kept = 0
        inflate_cap = min(MAX_INFLATED_BYTES, max(MIN_INFLATE_CAP, MAX_INFLATE_RATIO * os.path.getsize(path)))
        try:
            for i, member in enumerate(self._tar):
                if i >= max_members:
                    raise BadInputError(f"{path}: more than {max_members} members; not an image archive")
                if compressed and member.offset_data + member.size > inflate_cap:
                    # checked before tarfile inflates its way past the member to the next header
                    raise LimitExceededError(
                        f"{path}: the compressed archive inflates to more than {inflate_cap} bytes (limit)"
                    )
                try:
                    key = _clean(member.name)
                except BadInputError:
                    continue  # a hostile name is never addressable, so it can be skipped
                self._members[key] = member
                if compressed and member.isfile() and member.size <= MAX_JSON_BYTES and kept < MAX_KEPT_SMALL:
                    # manifest.json, index.json and the config, read now while the stream passes them: opened
                    # later, each would inflate the archive again up to its offset (manifest.json is at the end)
                    fh = self._tar.extractfile(member)
                    if fh is not None:
                        self._small[key] = fh.read()
                        kept += member.size
        except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
            raise BadInputError(f"{path}: corrupt or truncated tar archive ({exc})") from None
        self._compressed = compressed

    def _member(self, name: str) -> tarfile.TarInfo:
        key = _clean(name)
        member = self._members.get(key)
        hops = 0
        while member is not None and (member.issym() or member.islnk()) and hops < 8:
            # docker save links identical layers; resolve inside the archive only
            target = member.linkname if member.islnk() else posixpath.join(posixpath.dirname(key), member.linkname)
            key = _clean(target)
            member = self._members.get(key)
            hops += 1
        if member is None or not member.isfile():
            raise BadInputError(f"{name} is missing from {self.path}")
        return member

    def open(self, name: str) -> ByteStream:
        member = self._member(name)
        small = self._small.get(_clean(member.name))
        if small is not None:
            return io.BytesIO(small)
        # Each open gets its own file handle, so layers can be read from several threads at once.
        if not self._compressed and member.sparse is None:
            return _Section(self.path, member.offset_data, member.size)
        # A compressed archive (docker save | gzip) has no byte offsets: a private TarFile seeks
        # through its own decompressor to the member.
        private, _ = _open_tar(self.path)
        fh = private.extractfile(member)
        assert fh is not None
        return _Closing(fh, private)

    def exists(self, name: str) -> bool:
        try:
            self._member(name)
            return True
        except BadInputError:
            return False

    def size(self, name: str) -> int | None:
        return self._member(name).size

    @property
    def compressed(self) -> bool:
        """No byte offsets: opening a member inflates the archive from its start (docker save | gzip)."""
        return self._compressed

    def open_whole(self) -> tuple[TarFileobj, Callable[[], None]]:
        """The whole archive as one decompressed stream (within the inflate cap), and its closer."""
        private, _ = _open_tar(self.path)
        stream = private.fileobj
        assert stream is not None
        stream.seek(0)
        return stream, private.close

    def close(self) -> None:
        self._tar.close()
