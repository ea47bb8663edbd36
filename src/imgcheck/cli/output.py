"""`-o FORMAT[=PATH]` handling shared by the commands: render once per format, write atomically."""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass

from ..errors import UsageError
from ..fsutil import atomic_write


@dataclass(frozen=True)
class OutputSpec:
    format: str
    path: str | None  # None = stdout


def parse_outputs(values: list[str] | None, allowed: tuple[str, ...]) -> list[OutputSpec]:
    specs = []
    for value in values or []:
        fmt, sep, path = value.partition("=")
        if fmt not in allowed:
            raise UsageError(f"unknown output format {fmt!r} (choose from {', '.join(allowed)})")
        if sep and not path:
            raise UsageError(f"-o {value}: empty path")
        specs.append(OutputSpec(fmt, None if path in ("", "-") else path))  # `-`: standard output
    if sum(1 for s in specs if s.path is None) > 1:
        raise UsageError("only one -o format can go to stdout; give the others =PATH")
    if not specs:
        specs.append(OutputSpec("table" if sys.stdout.isatty() else "json", None))
    return specs


def write_output(spec: OutputSpec, text: str) -> None:
    if spec.path is None:
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

    A FIFO, terminal, /dev/null or /dev/stdout (a symlink to /proc/self/fd/1) is written through,
    never replaced by a regular file (as root that destroyed /dev/null machine-wide). A symlink to
    a regular file keeps being a symlink: its target is replaced. A regular file is replaced
    atomically (readers never see half a report) keeping its permissions; a new one gets
    0666 & ~umask, not mkstemp's 0600.
    """
    from ..errors import UnavailableError

    real = os.path.realpath(path)
    try:
        st = os.stat(path)  # through the kernel's own links: /dev/stdout -> /proc/self/fd/1 -> a pipe
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise UnavailableError(f"cannot write {path}: {exc.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UsageError(f"-o ...={path}: is a directory")
    if st is not None and (not stat.S_ISREG(st.st_mode) or real.startswith(("/proc/", "/dev/"))):
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise UnavailableError(f"cannot write {path}: {exc.strerror}") from None
        return
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask()
    atomic_write(real, text, mode=mode)  # readers never see half a report
