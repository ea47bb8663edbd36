"""`-o FORMAT[=PATH]` handling shared by the commands: stdout however spelled, files written in place or atomically."""

from __future__ import annotations

import os
import re
import stat
import sys
from dataclasses import dataclass

from ..errors import UsageError
from ..fsutil import atomic_write


@dataclass(frozen=True)
class OutputSpec:
    format: str
    path: str | None  # None = stdout


# names of an open file descriptor: the file behind them may be a log opened for append
_FD_NAME = re.compile(r"/dev/(fd/\d+|stdout|stderr)|/proc/(self|thread-self|\d+)/fd/\d+")
# spellings of standard output that do not depend on what fd 1 is (`-`, and the kernel's own names for fd 1)
STDOUT_NAMES = ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def is_stdout(path: str | None) -> bool:
    """Does `path` name our standard output: `-`, /dev/stdout, /dev/fd/1, /proc/self/fd/1, or any other
    name of the very file fd 1 is (`-o json=build.log >> build.log`)? Such a path is written through
    fd 1, never replaced: a rename would give build.log a new inode and drop every earlier line."""
    if path is None or path in STDOUT_NAMES:
        return True
    if os.path.realpath(path) in ("/proc/self/fd/1", f"/proc/{os.getpid()}/fd/1"):
        return True
    try:
        ours, theirs = os.fstat(sys.stdout.fileno()), os.stat(path)
    except (OSError, ValueError, AttributeError):  # no fd 1 (closed, a test's StringIO), or no such path
        return False
    if not (stat.S_ISREG(ours.st_mode) or stat.S_ISFIFO(ours.st_mode)):
        return False  # /dev/null or a terminal: a second writer there loses nothing
    return (ours.st_dev, ours.st_ino) == (theirs.st_dev, theirs.st_ino)


def parse_outputs(values: list[str] | None, allowed: tuple[str, ...]) -> list[OutputSpec]:
    """`-o FORMAT[=PATH]` values. Without any, the concise `table` report to stdout, terminal or not:
    a CI log wants the readable verdict; programs ask for `-o json` (as trivy and grype do)."""
    specs = []
    for value in values or []:
        fmt, sep, path = value.partition("=")
        if fmt not in allowed:
            raise UsageError(f"unknown output format {_short(fmt)!r} (choose from {', '.join(allowed)})")
        if sep and not path:
            raise UsageError(f"-o {_short(value)}: empty path")
        specs.append(OutputSpec(fmt, None if not path or is_stdout(path) else path))
    if sum(1 for s in specs if s.path is None) > 1:
        raise UsageError(
            "only one -o format can go to stdout (-, /dev/stdout, /dev/fd/1 and a file stdout is redirected "
            "to are all stdout); give the others =PATH"
        )
    if not specs:
        specs.append(OutputSpec("table" if "table" in allowed else allowed[0], None))
    return specs


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def write_output(spec: OutputSpec, text: str) -> None:
    if spec.path is None or is_stdout(spec.path):
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_file(spec.path, text)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_file(path: str, text: str) -> None:
    """Write a report to `path` the way a shell redirection would, but atomically where it can.

    Only a regular file named by its own path is replaced atomically (readers never see half a
    report), keeping its permissions; a new one gets 0666 & ~umask, not mkstemp's 0600. A symlink to
    a regular file keeps being a symlink: its target is replaced. Everything else is written in place,
    never replaced: a FIFO, terminal or /dev/null (as root a rename destroyed /dev/null machine-wide),
    and any /dev/fd/N, /dev/stderr or /proc/.../fd/N name of an open file, which may be a CI log opened
    for append (a rename would drop its earlier lines; opening it for append adds to them).
    """
    from ..errors import UnavailableError

    real = os.path.realpath(path)
    try:
        st = os.stat(path)  # through the kernel's own links: /dev/stdout -> /proc/self/fd/1 -> a pipe
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise UnavailableError(f"cannot write {_short(path)}: {exc.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UsageError(f"-o ...={_short(path)}: is a directory")
    through_fd = _FD_NAME.fullmatch(path) is not None or real.startswith(("/proc/", "/dev/"))
    if st is not None and (not stat.S_ISREG(st.st_mode) or through_fd):
        try:
            with open(path, "a", encoding="utf-8") as fh:  # append: what an open fd's writer expects
                fh.write(text)
        except OSError as exc:
            raise UnavailableError(f"cannot write {_short(path)}: {exc.strerror}") from None
        return
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask()
    atomic_write(real, text, mode=mode)  # readers never see half a report
