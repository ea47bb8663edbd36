"""Atomic file writes: readers see the old file or the new one, never half of one."""

from __future__ import annotations

import os
import tempfile

from .errors import UnavailableError


def atomic_write(path: str, data: bytes | str, *, mode: int | None = None, fsync: bool = False,
                 temp_prefix: str = ".tmp-") -> str:
    """Write `data` to `path` through a temporary file in the same directory and a rename.

    A dot-prefixed temporary name keeps watchers (NFD's features.d, globbing readers) off it. On any
    failure nothing is left behind and UnavailableError names the path.
    """
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix, dir=directory)
    except OSError as exc:
        raise UnavailableError(f"cannot write to {directory}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise UnavailableError(f"cannot write {path}: {exc.strerror}") from None
    return path
