"""Timestamps found at the start of log lines, in the formats multi-node GPU jobs produce.

Only the first part of a line is searched, so a time quoted inside a message does not count.
Formats without a year (glog/c10, syslog, vLLM) are returned with has_year=False; the caller
fills the year from a full timestamp elsewhere in the input (see decide.normalise_years).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

HEAD = 64  # characters of a line searched for a timestamp (launcher prefixes included)

_MONTHS = {
    m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)
}


@dataclass(frozen=True)
class Stamp:
    when: datetime
    has_year: bool
    kind: str  # iso | glog | dmesg | syslog | vllm


def _frac(text: str | None) -> int:
    """Fraction digits -> microseconds (NCCL and c10 print up to nanoseconds)."""
    if not text:
        return 0
    return int((text + "000000")[:6])


# [2025-03-18 21:25:51] (NCCL_DEBUG_TIMESTAMP_FORMAT default), ISO 8601, Python logging "2024-03-21 02:07:08,123"
_ISO = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?")
# c10/glog: "[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607]" month is not zero-padded, no year
_GLOG = re.compile(r"(?:^|[\[\s:])[IWEF](\d{3,4}) (\d{2}):(\d{2}):(\d{2})\.(\d{1,9})\b")
# dmesg -T: "[Wed Jun 24 15:44:42 2026]"
_DMESG = re.compile(r"\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})\]")
# syslog/journalctl: "Mar 21 02:07:08 host kernel: ..."
_SYSLOG = re.compile(r"^([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2})\b")
# vLLM: "INFO 04-13 19:52:24 [file.py:1]"
_VLLM = re.compile(r"\b(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\b")


def _make(year: int, month: int, day: int, h: int, mi: int, s: int, us: int = 0) -> datetime | None:
    try:
        return datetime(year, month, day, h, mi, s, us)
    except ValueError:
        return None


def find_stamp(line: str) -> Stamp | None:
    head = line[:HEAD]
    if ":" not in head:  # every format has hh:mm:ss
        return None
    m = _ISO.search(head) if "-" in head else None
    if m:
        y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
        when = _make(y, mo, d, h, mi, s, _frac(m.group(7)))
        if when:
            return Stamp(when, True, "iso")
    m = _DMESG.search(head) if "[" in head else None
    if m and m.group(1) in _MONTHS:
        when = _make(
            int(m.group(6)), _MONTHS[m.group(1)], int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5))
        )
        if when:
            return Stamp(when, True, "dmesg")
    m = _GLOG.search(head) if "." in head else None
    if m:
        md = m.group(1)
        month, day = int(md[:-2]), int(md[-2:])
        # 1900 is a placeholder year; 1904 would be needed for Feb 29, so use a leap year
        when = _make(1904, month, day, int(m.group(2)), int(m.group(3)), int(m.group(4)), _frac(m.group(5)))
        if when:
            return Stamp(when, False, "glog")
    m = _VLLM.search(head) if "-" in head else None
    if m:
        when = _make(1904, int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)))
        if when:
            return Stamp(when, False, "vllm")
    m = _SYSLOG.search(head)
    if m and m.group(1) in _MONTHS:
        when = _make(1904, _MONTHS[m.group(1)], int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)))
        if when:
            return Stamp(when, False, "syslog")
    return None
