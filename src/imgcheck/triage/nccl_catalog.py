"""NCCL's own message catalog (data/triage/nccl_messages.json, generated from every release tag by
tools/nccl/gen_messages.py): recognise any NCCL WARN line, and the INFO lines that report a failure, with the source
site that prints it and the releases that have it, including lines no signature or thread has quoted.

The signatures (signatures.json) say what a line means and what to do; this catalog says where NCCL printed it and in
which releases, so a line from an unseen release or code path is still named rather than passed over."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from ..versions import ranges

_LINE = re.compile(
    r"(?:(?P<file>[\w./+-]+\.(?:cc|cu|c|h|cpp|hpp)):(?P<line>\d+)(?: \([^)]*\))? )?NCCL (?P<level>WARN|INFO) (?P<msg>.*)"
)
_SPEC = re.compile(r"%[-+ #0-9.*]*[hlLzjt]*[diouxXeEfgGcsp%]")
_BUCKET = 4  # leading characters of a format's fixed prefix used to pick candidate formats
KEEP = 30  # distinct messages kept per triage run; the rest are counted


@dataclass(frozen=True)
class Message:
    level: str
    format: str
    first: str  # first release that has it
    last: str  # last release scanned that has it
    sites: tuple[tuple[str, str, str], ...]  # (first, last, "src/path:line") runs
    pattern: re.Pattern[str]
    fixed: int  # fixed characters of the format: the more, the more specific
    gate: str  # the format's longest fixed piece: a substring test rejects most lines before the regex runs


@dataclass(frozen=True)
class Recognised:
    message: Message
    site: str  # the site that prints it (at the releases the line's own file:line names, else the newest)
    releases: tuple[str, str]  # the release range the line is consistent with
    by_site: bool = False  # the range comes from the line's own file:line, not only from its wording

    def words(self) -> str:
        m = self.message
        span = f"{self.releases[0]}..{self.releases[1]}"
        return f'NCCL {m.level} "{m.format.strip()}" is printed at {self.site} (NCCL {span})'


@dataclass(frozen=True)
class Catalog:
    releases: tuple[str, ...]
    buckets: dict[tuple[str, str], tuple[Message, ...]]  # (level, first characters of the fixed prefix)
    open_start: dict[str, tuple[Message, ...]]  # per level, formats that start with a conversion: tried on every line


def _fixed_prefix(fmt: str) -> str:
    return fmt.split("%", 1)[0]


@cache
def load() -> Catalog:
    raw = json.loads(resources.files("imgcheck.data.triage").joinpath("nccl_messages.json").read_text())
    buckets: dict[tuple[str, str], list[Message]] = {}
    open_start: dict[str, list[Message]] = {}
    for row in raw["messages"]:
        pieces = _SPEC.split(row["format"].split("\n")[0])
        fixed = len("".join(pieces).strip())
        msg = Message(
            row["level"],
            row["format"],
            row["first"],
            row["last"],
            tuple((a, b, c) for a, b, c in row["sites"]),
            re.compile(row["regex"]),
            fixed,
            max((p.strip() for p in pieces), key=len),
        )
        prefix = _fixed_prefix(row["format"])
        if len(prefix) >= _BUCKET:
            buckets.setdefault((msg.level, prefix[:_BUCKET]), []).append(msg)
        else:
            open_start.setdefault(msg.level, []).append(msg)
    return Catalog(
        tuple(raw["releases"]),
        {k: tuple(v) for k, v in buckets.items()},
        {k: tuple(v) for k, v in open_start.items()},
    )


def recognise(text: str) -> Recognised | None:
    """The catalog entry for one log line, or None (not an NCCL WARN/INFO line, or a message not in the catalog)."""
    if "NCCL WARN" not in text and "NCCL INFO" not in text:
        return None
    m = _LINE.search(text)
    if m is None:
        return None
    cat = load()
    msg = m.group("msg")
    level = m.group("level")
    candidates = cat.buckets.get((level, msg[:_BUCKET]), ()) + cat.open_start.get(level, ())
    hits = [c for c in candidates if c.gate in msg and c.pattern.search(msg)]
    if not hits:
        return None
    where = f"{m.group('file')}:{m.group('line')}" if m.group("file") else None

    def runs_at(c: Message) -> list[tuple[str, str, str]]:
        if where is None:
            return []
        tail = where.split("/src/")[-1].removeprefix("src/")
        return [r for r in c.sites if r[2].removeprefix("src/") == tail or r[2].endswith("/" + tail)]

    best = max(hits, key=lambda c: (bool(runs_at(c)), c.fixed))
    runs = runs_at(best)
    if runs:
        return Recognised(best, runs[-1][2], (runs[0][0], runs[-1][1]), by_site=True)
    return Recognised(best, best.sites[-1][2], (best.first, best.last))


def observe(seen: dict[str, list[Any]], text: str) -> None:
    """Count one log line into `seen` (format -> [Recognised, count]), kept bounded by KEEP."""
    found = recognise(text)
    if found is None:
        if "NCCL WARN" in text:
            seen.setdefault("", [None, 0])[1] += 1  # a WARN the catalog does not hold
        return
    entry = seen.get(found.message.format)
    if entry is not None:
        entry[1] += 1
    elif len(seen) < KEEP:
        seen[found.message.format] = [found, 1]


def _outside(version: str, releases: tuple[str, str], catalog: Catalog) -> bool:
    """Whether NCCL `version` is shown to be outside the release range (False when it may be inside)."""
    low, high = releases
    after = catalog.releases.index(high) + 1 if high in catalog.releases else len(catalog.releases)
    below = ranges.below(version, low)
    above = ranges.at_least(version, catalog.releases[after]) if after < len(catalog.releases) else False
    return bool(below or above)


def notes(seen: dict[str, list[Any]], image_nccl: str | None = None) -> tuple[str, ...]:
    """Report notes: each recognised NCCL message with its site and releases, and the WARNs the catalog lacks.
    With the image's NCCL version, a line whose own file:line places it in other releases is said to be printed by
    another NCCL than the image's."""
    out = []
    cat = load()
    for fmt, (found, count) in seen.items():
        if fmt:
            out.append(f"{found.words()}; seen {count}x")
            if image_nccl and found.by_site and _outside(image_nccl, found.releases, cat):
                out.append(
                    f"that line's file:line places it in NCCL {found.releases[0]}..{found.releases[1]}, not the "
                    f"image's NCCL {image_nccl}: the job loaded another NCCL (a pip wheel, LD_LIBRARY_PATH, a "
                    "container's own copy) or the log is from another image"
                )
    missing = seen.get("", [None, 0])[1]
    if missing:
        out.append(
            f"{missing} NCCL WARN line(s) match no message of NCCL {cat.releases[0]}..{cat.releases[-1]}: "
            "a newer NCCL, a plugin (net, tuner, profiler) or a truncated line"
        )
    return tuple(out)
