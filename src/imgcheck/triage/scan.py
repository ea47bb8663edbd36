"""Stream log files once, line by line: match signatures, collect INFO context per writer.

Memory stays bounded whatever the log size: only matched lines (a few per signature and
writer, the rest counted) and the context summaries are kept.
"""

from __future__ import annotations

import gzip
import io
import re

try:  # the regex parser moved in Python 3.11; both names work there
    import re._parser as _sre_parse  # type: ignore[import-not-found]  # typeshed has no stub for re._parser
    from re._constants import LITERAL as _LITERAL  # type: ignore[import-not-found]  # nor for re._constants
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_parse as _sre_parse
    from sre_constants import LITERAL as _LITERAL
import sys
import zlib
from collections import deque
from dataclasses import dataclass, field
from typing import IO, Any, cast

from ..errors import BadInputError
from ..fsutil import open_input
from . import fabric_catalog, nccl_catalog, outcome
from .context import ContextAccumulator
from .logparse import MAX_LINE, LogLine, parse_line
from .signatures import SignatureSet

READ_LIMIT = 1 << 20  # characters read per line at most; the rest of an overlong line counts as another line
MAX_LAST_ERRORS = 4096  # writers whose "Last error:" text is kept
KEEP_PER_KEY = 20  # matched lines kept per (writer, signature); the rest are only counted
# Writers (host:pid, rank, host) followed one by one: their matched lines, counts and INFO context. Lines of any
# further writer are counted together under their file's name, so 200,000 host:pid prefixes cost what 1,024 do.
MAX_WRITERS = 1024
STDIN = "-"
# A line this long or longer may have been wrapped by a terminal or an issue tracker (80-column terminals, trackers'
# fixed widths): a next line that starts without any producer's prefix may be its continuation
WRAP_MIN = 64
# Lines before a matched line that are kept with it (each cut to NEAR_CHARS): the component that printed them (a
# library's call that failed, a subsystem's own prefix) selects among the causes of a generic code (`near~` conditions)
NEAR_LINES = 4
NEAR_CHARS = 240

# A writer as the line itself says: ("proc", host, pid) for NCCL lines, ("rank", n) for labelled
# lines, ("host", name) for kernel log lines, ("file", source) otherwise. decide.py merges these into one stream per rank.
RawKey = tuple[Any, ...]


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
    before: tuple[str, ...] = ()  # up to NEAR_LINES lines before it in the same input, nearest last


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
    context_lines_dropped: int = 0  # INFO lines of writers beyond MAX_WRITERS (their context is not kept)
    nccl_messages: dict[str, list[Any]] = field(default_factory=dict)  # nccl_catalog.observe: NCCL messages recognised
    fabric_messages: dict[str, list[Any]] = field(
        default_factory=dict
    )  # fabric_catalog.observe: libfabric/OFI/UCX lines
    lines_merged: int = 0  # lines of writers beyond MAX_WRITERS, counted under their file's name
    # PyTorch's "Last error:" text (NCCL's ncclGetLastError) per writer: the line after "Last error:",
    # or the rest of the same line; the first MAX_LAST_ERRORS writers only
    last_errors: dict[RawKey, LogLine] = field(default_factory=dict)
    # per input file: the run-outcome markers seen (outcome.py: completed, progressed, failed, ended)
    outcomes: dict[str, outcome.SourceOutcome] = field(default_factory=dict)
    # the first line that shows the job ran in a container (a runtime's command or message)
    container_evidence: LogLine | None = None


_QUOTE = re.compile(r"^(?:> ?)+")


def continues(line: LogLine, raw: str) -> bool:
    """Whether `line` can be the rest of the line before it: it carries no prefix of its own (no launcher label, no
    NCCL or kernel-log writer, no timestamp) and starts with neither space nor an empty line."""
    text = line.text
    return (
        bool(text)
        and not text[0].isspace()
        and line.rank is None
        and line.host is None
        and line.when is None
        and _QUOTE.sub("", raw).startswith(text)  # a quoted reply's marks are no producer's prefix
    )


def required_literal(pattern: re.Pattern[str]) -> str | None:
    """The longest literal text every match of `pattern` contains (top-level only), or None.

    Used as a cheap `in` test before the regex runs: most log lines contain none of them.
    """
    if pattern.flags & re.IGNORECASE:
        return None
    try:
        parsed = _sre_parse.parse(pattern.pattern, pattern.flags)
    except Exception:  # noqa: BLE001 - an unparseable pattern simply gets no gate
        return None
    best, run = "", []
    for op, arg in list(parsed) + [(None, None)]:
        if op == _LITERAL:
            run.append(chr(arg))
            continue
        if len(run) > len(best):
            best = "".join(run)
        run = []
    return best if len(best) >= 3 else None


def trie_pattern(literals: list[str]) -> str:
    """One regex matching any of `literals`, factored by common prefix ("NET/IB" once, then its
    continuations): Python's re tries a flat alternation branch by branch at every position, so
    the gate's cost would grow with the number of signatures; a prefix tree keeps it flat."""
    trie: dict[str, Any] = {}  # character -> subtree; "" marks the end of a literal
    for lit in literals:
        node = trie
        for ch in lit:
            node = node.setdefault(ch, {})
        node[""] = {}  # end of a literal

    def build(node: dict[str, Any]) -> str:
        if "" in node:  # a literal ends here: any literal suffices, so the rest is optional
            return ""
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return build(trie)


class Scanner:
    def __init__(self, sigset: SignatureSet):
        self.sigs = [s for s in sigset.signatures if s.patterns]
        # a fabric-catalog line is counted as the signature of its condition class, when the signature set has it
        self.fabric_ids = {s.id for s in sigset.signatures if s.derived == "fabric_catalog"}
        self.by_id = sigset.by_id()
        # (signature, pattern, literal gate) triples; a pattern without a gate always runs
        self.checks = [(s, p, required_literal(p)) for s in self.sigs for p in s.patterns]
        gates = sorted({lit for _s, _p, lit in self.checks if lit}, key=len, reverse=True)
        # one C-level search rejects most lines; patterns without a literal always run
        self.gate = re.compile(trie_pattern(gates)) if gates else None
        self.ungated = [(s, p, lit) for s, p, lit in self.checks if lit is None]
        self.result = ScanResult()
        self.order = 0
        self._writers: set[RawKey] = set()
        self.pending_last_error: set[RawKey] = set()
        self.outcome = outcome.OutcomeScanner(outcome.load_markers())
        self.result.outcomes = self.outcome.by_source
        self._recent: deque[str] = deque(maxlen=NEAR_LINES)  # the input's last lines, for the events' `before`

    def feed(self, line: LogLine) -> None:
        res = self.result
        self.order += 1
        key = raw_key(line)
        followed = key in self._writers
        if not followed and len(self._writers) < MAX_WRITERS:
            self._writers.add(key)
            followed = True
        if not followed:
            res.lines_merged += 1
            key = ("file", line.source)  # one stream for every writer past the limit
        res.keys_by_source.setdefault(line.source, set()).add(key)
        if followed and line.host is not None and line.pid is not None and line.rank is not None:
            res.proc_rank_labels.setdefault((line.host, line.pid), line.rank)
        if line.when is not None and line.has_year and res.full_year is None:
            res.full_year = line.when.year
        ctx = res.contexts.get(key)
        if ctx is None and ContextAccumulator.relevant(line.text):
            # created on a writer's first context line only, and for at most MAX_WRITERS writers:
            # a log with millions of distinct host:pid prefixes must not build millions of contexts
            if len(res.contexts) < MAX_WRITERS:
                ctx = res.contexts[key] = ContextAccumulator()
            else:
                res.context_lines_dropped += 1
        if ctx is not None:
            ctx.feed(line)
        text = line.text
        nccl_catalog.observe(res.nccl_messages, text)
        self.outcome.feed(line)
        if res.container_evidence is None and outcome.container_line(text):
            res.container_evidence = line
        if key in self.pending_last_error:
            self.pending_last_error.discard(key)
            if text.strip():
                res.last_errors.setdefault(key, line)
        if "Last error:" in text and len(res.last_errors) < MAX_LAST_ERRORS and key not in res.last_errors:
            rest = text.split("Last error:", 1)[1].strip()
            if rest:
                res.last_errors[key] = line._replace(text=rest)
            else:
                self.pending_last_error.add(key)
        matched: dict[str, re.Match[str]] = {}
        checks = self.checks if self.gate is None or self.gate.search(text) else self.ungated
        for sig, pat, lit in checks:
            if sig.id in matched or (lit is not None and lit not in text):
                continue
            m = pat.search(text)
            if m is not None:
                matched[sig.id] = m
        for sig in self.sigs:
            m = matched.get(sig.id)
            if m is not None:
                self._count(key, sig.id, line, tuple((k, v) for k, v in m.groupdict().items() if v is not None))
        fabric = fabric_catalog.observe(res.fabric_messages, text)
        if (
            fabric is not None
            and fabric.signature in self.fabric_ids
            and not fabric.informational
            and self._fabric_adds(fabric.signature, matched)
        ):
            caps = (("component", fabric.component), ("condition", fabric.klass)) + (
                (("site", fabric.site),) if fabric.site else ()
            )
            self._count(key, fabric.signature, line, caps)
        if text.strip():
            self._recent.append(text[:NEAR_CHARS])

    def feed_seam(self, before: LogLine, after: LogLine) -> None:
        """Signatures whose message was cut over two lines (`before` ends where `after` goes on, as a terminal or an
        issue tracker wraps a long line): matched on the rejoined text, counted on `after`'s line only when neither
        part matches alone, so an unwrapped log counts exactly what it did."""
        key = raw_key(after)
        if key not in self._writers:
            key = ("file", after.source)
        glued = [before.text + after.text]  # a cut inside a word
        if before.text[-1:].isalnum() or before.text[-1:] in ",;:." and after.text[:1].isalnum():
            glued.append(before.text + " " + after.text)  # a tracker wraps at a space and drops it
        found: set[str] = set()
        for text in glued:
            if self.gate is not None and not self.gate.search(text):
                continue
            for sig, pat, lit in self.checks:
                if sig.id in found or (lit is not None and lit not in text):
                    continue
                m = pat.search(text)
                if m is None or pat.search(before.text) or pat.search(after.text):
                    continue
                found.add(sig.id)
                caps = tuple((k, v) for k, v in m.groupdict().items() if v is not None)
                self._count(key, sig.id, after._replace(text=text), caps)

    def _fabric_adds(self, sig_id: str, matched: dict[str, re.Match[str]]) -> bool:
        """A catalog condition is counted unless a signature already names this line more specifically: only generic
        result codes and the signatures it explains (its `suppresses`) give way to it."""
        explains = set(self.by_id[sig_id].suppresses)
        return all(self.by_id[s].generic or s in explains for s in matched)

    def _count(self, key: RawKey, sig_id: str, line: LogLine, caps: tuple[tuple[str, str], ...]) -> None:
        res = self.result
        ck = (key, sig_id)
        n = res.counts.get(ck, 0) + 1
        res.counts[ck] = n
        if n <= KEEP_PER_KEY:
            res.events.append(Event(sig_id, line, self.order, key, caps, tuple(self._recent)))

    def feed_stream(self, name: str, fh: IO[str]) -> None:
        self.result.sources.append(name)
        self._recent.clear()  # another input: its lines are not near the last one's
        n = 0
        before: LogLine | None = None  # the text a wrapped line continues (the rejoined text when it wraps again)
        while True:
            raw = fh.readline(READ_LIMIT)  # bounded: a log without newlines cannot fill memory
            if not raw:
                break
            n += 1
            line = parse_line(raw, name, n)
            self.feed(line)
            if before is not None and continues(line, raw):
                self.feed_seam(before, line)
                before = line._replace(text=(before.text + line.text)[-MAX_LINE:])
            else:
                before = line if len(line.text) >= WRAP_MIN else None
        self.result.lines_by_source[name] = n


def _open_text(path: str) -> IO[str]:
    """Open a log (plain or gzip) as text; binary input is rejected, not guessed at."""
    raw = open_input(path, "a log file", unavailable=BadInputError)  # triage documents exit 2 for these
    head = raw.read(2)
    raw.seek(0)
    stream: IO[bytes] | gzip.GzipFile = gzip.GzipFile(fileobj=raw) if head == b"\x1f\x8b" else raw
    return _checked_text(stream, path)


def _checked_text(stream: IO[bytes] | gzip.GzipFile | io.BufferedReader, name: str) -> IO[str]:
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
            # a stream without peek() gets a buffer; BufferedReader only reads it (read/readinto), as any binary stream allows
            fh = _checked_text(
                io.BufferedReader(cast("io.RawIOBase", src)) if not hasattr(src, "peek") else src, "<stdin>"
            )
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
