"""Stream log files once, line by line: match signatures, collect INFO context per writer.

Memory stays bounded whatever the log size: only matched lines (a few per signature and
writer, the rest counted) and the context summaries are kept.
"""

from __future__ import annotations

import gzip
import io
import re
import sys
import zlib
from dataclasses import dataclass, field
from typing import IO, Iterable

from ..errors import BadInputError
from .context import ContextAccumulator
from .logparse import LogLine, parse_line
from .signatures import SignatureSet

KEEP_PER_KEY = 20  # matched lines kept per (writer, signature); the rest are only counted
STDIN = "-"

# A writer as the line itself says: ("proc", host, pid) for NCCL lines, ("rank", n) for labelled
# lines, ("host", name) for kernel log lines, ("file", source) otherwise. decide.py merges these into one stream per rank.
RawKey = tuple


def raw_key(line: LogLine) -> RawKey:
    if line.host is not None and line.pid is not None:
        return ("proc", line.host, line.pid)
    if line.rank is not None:
        return ("rank", line.rank)
    if line.host is not None:
        return ("host", line.host)
    return ("file", line.source)


@dataclass(frozen=True)
class Event:
    signature: str
    line: LogLine
    order: int  # position in the whole input, for stable ordering without timestamps
    key: RawKey
    captures: tuple[tuple[str, str], ...] = ()  # named groups of the pattern that matched


@dataclass
class ScanResult:
    events: list[Event] = field(default_factory=list)
    counts: dict[tuple[RawKey, str], int] = field(default_factory=dict)
    contexts: dict[RawKey, ContextAccumulator] = field(default_factory=dict)
    keys_by_source: dict[str, set[RawKey]] = field(default_factory=dict)
    proc_rank_labels: dict[tuple[str, int], int] = field(default_factory=dict)  # NCCL proc seen on a labelled line
    lines_by_source: dict[str, int] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    full_year: int | None = None  # a year seen in any full timestamp


class Scanner:
    def __init__(self, sigset: SignatureSet):
        self.sigs = [s for s in sigset.signatures if s.patterns]
        # One combined search rejects most lines before the per-signature regexes run.
        # (named groups are dropped there: several patterns may reuse a name)
        self.prefilter = re.compile("|".join(f"(?:{_unnamed(p.pattern)})" for s in self.sigs for p in s.patterns))
        self.result = ScanResult()
        self.order = 0

    def feed(self, line: LogLine) -> None:
        res = self.result
        self.order += 1
        key = raw_key(line)
        res.keys_by_source.setdefault(line.source, set()).add(key)
        if line.host is not None and line.pid is not None and line.rank is not None:
            res.proc_rank_labels.setdefault((line.host, line.pid), line.rank)
        if line.when is not None and line.has_year and res.full_year is None:
            res.full_year = line.when.year
        res.contexts.setdefault(key, ContextAccumulator()).feed(line)
        if not self.prefilter.search(line.text):
            return
        for sig in self.sigs:
            m = next((m for m in (p.search(line.text) for p in sig.patterns) if m), None)
            if m is not None:
                ck = (key, sig.id)
                n = res.counts.get(ck, 0) + 1
                res.counts[ck] = n
                if n <= KEEP_PER_KEY:
                    caps = tuple((k, v) for k, v in m.groupdict().items() if v is not None)
                    res.events.append(Event(sig.id, line, self.order, key, caps))

    def feed_stream(self, name: str, fh: Iterable[str]) -> None:
        self.result.sources.append(name)
        n = 0
        for n, raw in enumerate(fh, 1):
            self.feed(parse_line(raw, name, n))
        self.result.lines_by_source[name] = n


def _unnamed(pattern: str) -> str:
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


def _open_text(path: str) -> IO[str]:
    """Open a log (plain or gzip) as text; binary input is rejected, not guessed at."""
    try:
        raw = open(path, "rb")
    except FileNotFoundError:
        raise BadInputError(f"{path}: no such log file") from None
    except IsADirectoryError:
        raise BadInputError(f"{path}: is a directory, expected a log file") from None
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read ({exc.strerror})") from None
    head = raw.read(2)
    raw.seek(0)
    stream: IO[bytes] = gzip.GzipFile(fileobj=raw) if head == b"\x1f\x8b" else raw
    return _checked_text(stream, path)


def _checked_text(stream: IO[bytes], name: str) -> IO[str]:
    try:
        sample = stream.peek(4096)[:4096] if hasattr(stream, "peek") else b""
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
        raise BadInputError(f"{name}: cannot read ({exc})") from None
    if b"\x00" in sample:
        raise BadInputError(f"{name}: looks binary (NUL bytes), expected a text log")
    return io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline="")


def scan_logs(paths: list[str], sigset: SignatureSet, stdin: IO[bytes] | None = None) -> ScanResult:
    """Read every log once. "-" means standard input (at most once)."""
    if not paths:
        raise BadInputError("no log given (pass files, or - for standard input)")
    if paths.count(STDIN) > 1:
        raise BadInputError("standard input (-) can be given only once")
    scanner = Scanner(sigset)
    for path in paths:
        if path == STDIN:
            src = stdin if stdin is not None else sys.stdin.buffer
            fh = _checked_text(io.BufferedReader(src) if not hasattr(src, "peek") else src, "<stdin>")
            name = "<stdin>"
        else:
            fh = _open_text(path)
            name = path
        try:
            scanner.feed_stream(name, fh)
        except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
            raise BadInputError(f"{name}: cannot read ({exc})") from None
        finally:
            if path != STDIN:
                fh.close()
    return scanner.result
