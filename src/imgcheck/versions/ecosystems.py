"""Comparison per ecosystem: dpkg (python-debian), rpm (rpmvercmp), and dotted numeric versions."""

from __future__ import annotations

import re

from debian.debian_support import Version as DebianVersion
from rpm_vercmp import vercmp as _rpm_vercmp  # type: ignore[import-untyped]  # ships no type hints

# No real version, count or size has more digits; Python's int() refuses strings of more than 4,300 (a
# ValueError deep inside a comparison), so longer runs from an image are bad values (model/bounded_numbers.py).
MAX_DIGITS = 18


def compare_dpkg(a: str, b: str) -> int:
    va, vb = DebianVersion(a), DebianVersion(b)
    return (va > vb) - (va < vb)


def compare_rpm(a: str, b: str) -> int:
    """Compare EVR strings ("[epoch:]version-release") the way rpm does."""

    def split(evr: str) -> tuple[int, str, str]:
        epoch, sep, rest = evr.partition(":")
        if not sep:
            epoch, rest = "0", evr
        version, _, release = rest.partition("-")
        return (int(epoch) if epoch.isdigit() and len(epoch) <= MAX_DIGITS else 0, version, release)

    ea, va, ra = split(a)
    eb, vb, rb = split(b)
    if ea != eb:
        return (ea > eb) - (ea < eb)
    return int(_rpm_vercmp(va, vb) or _rpm_vercmp(ra, rb))


_NUM = re.compile(r"\d+")


def numeric_tuple(version: str) -> tuple[int, ...]:
    """Leading dotted numbers of a version: "2.21.5-1+cuda12.4" -> (2, 21, 5). Empty if none."""
    match = re.match(r"\d+(?:\.\d+)*", version.strip())
    if not match:
        return ()
    parts = match.group(0).split(".")
    if any(len(p) > MAX_DIGITS for p in parts):
        return ()  # no real version has such a number; facts readers drop them first (model/bounded_numbers.py)
    return tuple(int(p) for p in parts)


def compare_numeric(a: str, b: str) -> int:
    """Compare dotted numeric versions (NCCL, CUDA, drivers, kernels), padding with zeros."""
    ta, tb = numeric_tuple(a), numeric_tuple(b)
    width = max(len(ta), len(tb))
    ta, tb = ta + (0,) * (width - len(ta)), tb + (0,) * (width - len(tb))
    return (ta > tb) - (ta < tb)


def at_least(version: str | None, minimum: str) -> bool | None:
    """version >= minimum by dotted numbers; None when the version is unknown or not numeric."""
    if not version or not numeric_tuple(version):
        return None
    return compare_numeric(version, minimum) >= 0
