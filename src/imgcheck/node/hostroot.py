"""Read files of a host mounted under a root directory, never leaving that root.

sysfs is made of symlinks (`/sys/class/infiniband/mlx5_0 -> ../../devices/pci.../infiniband/mlx5_0`),
and a host mounted at /host has absolute links that mean /host/..., not the probe container's /.
Every path is resolved component by component the way the kernel would inside a chroot at `root`:
absolute link targets restart at `root`, `..` stops at `root`. Nothing is ever executed.
"""

from __future__ import annotations

import errno
import os
import stat

from ..inroot import LinkLoop, resolve_in_root

DEFAULT_MAX_BYTES = 1024 * 1024


class HostReadError(Exception):
    """A file exists (or may) but could not be read; the message is the reason recorded as unknown."""


class _Missing(Exception):
    """A component of the path does not exist: the whole path does not."""


class HostRoot:
    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)

    # -- path resolution ---------------------------------------------------------------------------
    def resolve(self, path: str) -> str | None:
        """The real on-disk path of host `path`, or None if it does not exist.

        Raises HostReadError on symlink loops or permission problems along the way.
        """
        try:
            return os.path.join(self.root, *resolve_in_root(path, self._link_target))
        except _Missing:
            return None
        except LinkLoop:
            raise HostReadError(f"too many symlinks resolving {path}") from None

    def _link_target(self, parts: list[str]) -> str | None:
        """The symlink target at `parts` below root (None: not a link); _Missing when it is not there."""
        candidate = os.path.join(self.root, *parts)
        try:
            st = os.lstat(candidate)
        except (FileNotFoundError, NotADirectoryError):
            raise _Missing() from None
        except PermissionError:
            raise HostReadError(f"permission denied: {self._show(parts)}") from None
        except OSError as exc:
            raise HostReadError(f"{self._show(parts)}: {exc.strerror}") from None
        return os.readlink(candidate) if stat.S_ISLNK(st.st_mode) else None

    def _show(self, parts: list[str]) -> str:
        return "/" + "/".join(parts)

    # -- queries -----------------------------------------------------------------------------------
    def exists(self, path: str) -> bool:
        try:
            return self.resolve(path) is not None
        except HostReadError:
            return False

    def is_dir(self, path: str) -> bool:
        try:
            real = self.resolve(path)
        except HostReadError:
            return False
        return real is not None and os.path.isdir(real)

    def listdir(self, path: str) -> list[str]:
        """Sorted entries of a host directory; [] when it does not exist."""
        real = self.resolve(path)
        if real is None or not os.path.isdir(real):
            return []
        try:
            return sorted(os.listdir(real))
        except OSError as exc:
            raise HostReadError(f"cannot list {path}: {exc.strerror}") from None

    def read_bytes(self, path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes | None:
        """File content, None if absent. Raises HostReadError if unreadable or larger than max_bytes."""
        real = self.resolve(path)
        if real is None:
            return None
        try:
            # O_NOFOLLOW: the last component was resolved above; refuse if it became a link since
            fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise HostReadError(f"{path} changed into a symlink while reading") from None
            raise HostReadError(f"cannot read {path}: {exc.strerror}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise HostReadError(f"{path} is not a regular file")
            chunks = []
            total = 0
            while True:  # sysfs reports st_size 4096 whatever the content: read to EOF
                try:
                    chunk = os.read(fd, 65536)
                except OSError as exc:  # e.g. EIO/ENODEV from a sysfs attribute the device refuses
                    raise HostReadError(f"cannot read {path}: {exc.strerror}") from None
                if not chunk:
                    break
                total += len(chunk)
                if total > max_bytes:
                    raise HostReadError(f"{path} is larger than {max_bytes} bytes")
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def read_text(self, path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> str | None:
        data = self.read_bytes(path, max_bytes)
        return None if data is None else data.decode("utf-8", "replace")

    def read_value(self, path: str) -> str | None:
        """A one-value sysfs/procfs attribute, stripped; None if absent."""
        text = self.read_text(path, 64 * 1024)
        return None if text is None else text.strip()
