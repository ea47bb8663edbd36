"""A dotted version as the range of releases it can name: "2.13" is any 2.13.x, never taken as 2.13.4.

Hand-written facts, catalog rows and webhook inputs often give fewer components than a release has
("2.13", "535", "5.15"). Reading the missing parts as zeros would make "2.13" older than 2.13.4 and
answer confidently; instead the version covers [2.13, 2.14) and a comparison whose answer differs
inside that range is undecided (None). A full version ("2.21.5") is a range of one release's builds,
so comparisons with floors of the same or lower precision behave as before.
"""

from __future__ import annotations

from .ecosystems import numeric_tuple


def _pad(a: tuple[int, ...], width: int) -> tuple[int, ...]:
    return a + (0,) * (width - len(a))


def _cmp(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    width = max(len(a), len(b))
    a, b = _pad(a, width), _pad(b, width)
    return (a > b) - (a < b)


def bounds(version: str | None) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """[low, high) of the releases `version` can name, or None if it has no leading number."""
    low = numeric_tuple(version or "")
    if not low:
        return None
    return low, low[:-1] + (low[-1] + 1,)


def at_least(version: str | None, minimum: str) -> bool | None:
    """True if every release `version` can name is >= minimum, False if none is, None if it depends (or unknown)."""
    span = bounds(version)
    floor = numeric_tuple(minimum)
    if span is None or not floor:
        return None
    low, high = span
    if _cmp(low, floor) >= 0:
        return True
    if _cmp(high, floor) <= 0:  # high is exclusive: every release is below the floor
        return False
    return None


def below(version: str | None, bound: str) -> bool | None:
    """True if every release `version` can name is < bound (the negation of at_least, None kept)."""
    ok = at_least(version, bound)
    return None if ok is None else not ok


def within(version: str | None, minimum: str, below_bound: str | None) -> bool | None:
    """minimum <= version < below_bound (no upper bound when below_bound is None), decided over the range."""
    low_ok = at_least(version, minimum)
    if below_bound is None or low_ok is False:
        return low_ok
    high_ok = below(version, below_bound)
    if high_ok is False:
        return False
    return True if low_ok and high_ok else None
