"""`-o FORMAT[=PATH]` handling shared by the commands: render once per format, write atomically."""

from __future__ import annotations

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
        specs.append(OutputSpec(fmt, path or None))
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
    atomic_write(spec.path, text)  # readers never see half a report
