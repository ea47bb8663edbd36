"""Files the user names: opened for reading with one clear line per failure, and written
atomically (readers see the old file or the new one, never half of one)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from .errors import BadInputError, ImgcheckError, UnavailableError


def open_input(
    path: str, expected: str, *, where: str | None = None, unavailable: type[ImgcheckError] = UnavailableError
) -> BinaryIO:
    """Open a file the user named for reading; each way that fails is one line and its exit code.

    Missing or unreadable: `unavailable` (could not be obtained, exit 3, unless a command documents
    otherwise, as triage does for its logs); a directory: bad input. `expected` names what was wanted.
    """
    where = where or path
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise unavailable(f"{where}: no such file") from None
    except IsADirectoryError:
        raise BadInputError(f"{where}: is a directory, expected {expected}") from None
    except OSError as exc:
        raise unavailable(f"{where}: cannot read ({exc.strerror or exc})") from None


@contextmanager
def reading_input(path: str, expected: str, *, where: str | None = None) -> Iterator[BinaryIO]:
    """open_input() for a block that reads the file: an OS error while reading is one line too."""
    where = where or path
    with open_input(path, expected, where=where) as fh:
        try:
            yield fh
        except OSError as exc:
            raise UnavailableError(f"{where}: cannot read ({exc.strerror or exc})") from None


def atomic_write(
    path: str, data: bytes | str, *, mode: int | None = None, fsync: bool = False, temp_prefix: str = ".tmp-"
) -> str:
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
