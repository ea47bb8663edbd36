"""One log line -> who wrote it (rank label, host, pid, CUDA device), when, and the message.

Launchers prefix lines differently: PyTorch "[rank3]:", `srun -l` "3: ", `mpirun
--tag-output` "[1,3]<stdout>:", Ray/vLLM "(Worker pid=12) ". Collectors add their own: `kubectl logs
--timestamps` (RFC 3339 with nanoseconds), `kubectl logs --prefix` "[pod/NAME/CONTAINER] ", `docker compose`
"SERVICE-1  | ", journald/syslog "Mar 21 02:07:08 HOST IDENT[PID]: ", and a tracker's quote marks "> ". All are
removed before matching. NCCL itself writes
"host:pid:tid [cudaDev] " (optionally after a "[%F %T] " timestamp); the number in brackets
is the *local CUDA device*, not the rank, so ranks come from the labels or from NCCL's
"comm ... rank R nranks N" lines (see context.py).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import NamedTuple

from .timestamps import find_stamp

MAX_LINE = 8192  # longer lines are cut; signatures live near the start of a line

_PREFIXES = (
    re.compile(r"^\[\d{4}-\d{2}-\d{2}[ T][\d:.,]+\]\s*"),  # NCCL "[%F %T] " timestamp
    re.compile(r"^\[rank(?P<rank>\d+)\]:\s?"),  # PyTorch
    # mpirun --tag-output / PRRTE --output tag: "[JOBID,RANK]<stdout>:" (job 1 unless the job spawned others)
    re.compile(r"^\[\d+,(?P<rank>\d+)\]<(?:stdout|stderr|stddiag)>:\s?"),
    re.compile(r"^\s{0,4}(?P<rank>\d{1,6}): "),  # srun -l
    re.compile(r"^\((?:\w+ )?pid=\d+(?:, ip=[\d.]+)?\)\s*"),  # Ray / vLLM worker
    re.compile(r"^\[default\d+\]:\s?"),  # torchrun --tee (local rank only)
    re.compile(r"^\[\d+\] "),  # "[80746] " line numbers of pasted logs
    # kubectl logs --timestamps: RFC 3339 with nanoseconds and a zone, then one space
    re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:?\d{2}) "),
    re.compile(r"^\[pod/[^\]\s]+\] "),  # kubectl logs --prefix
    re.compile(r"^(?:> ?)+"),  # a quoted reply on an issue tracker or in a mail ("> host:1:2 [0] NCCL WARN ...")
)
# Prefixes that start with a letter: tested only when the line's first word ends as theirs does
# docker compose "trainer-1  | ", compose v1 "proj_trainer_1  | " (names padded to one width, then "| ")
_COMPOSE = re.compile(r"^[A-Za-z0-9][\w.\-]{0,62}\s+\|(?: |$)")
# journald / syslog "Mar 21 02:07:08 host ident[pid]: " (journalctl's short and short-iso formats); kernel lines keep
# their "kernel: " tag, which signatures of kernel messages and the host reading below rely on
_JOURNAL = re.compile(
    # journalctl's default (short) format: the month-day stamp is distinctive enough for an ident without a pid
    r"^(?:[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2} [\w.\-]+ (?!kernel:)[\w.\-/@]{1,64}(?:\[\d+\])?: "
    # -o short-iso[-precise]: an RFC 3339 stamp is also kubectl's, so only with the ident's [pid] ("2024-...Z
    # undefined symbol: x" is a kubectl line whose message has a colon, not a host and an ident)
    r"|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})"
    r" [\w.\-]+ (?!kernel:)[\w.\-/@]{1,64}\[\d+\]: )"
)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PREFIX_START = set("[( 0123456789>")  # every launcher prefix starts with one of these
_NCCL_PREFIX = re.compile(
    r"(?P<host>[\w.\-<>]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] (?=NCCL |[\w/.\-]+\.(?:cc|cu|c|cpp|h):\d+)"
)
# PyTorch's "[rankN]:" label after a wrapper's own prefix (e.g. "2025-02-18 12:54 [rank13]:[E218 ...")
_RANK_LABEL = re.compile(r"\[rank(?P<rank>\d+)\]:")
# Old PyTorch messages name only "[Rank N]": the rank in that process group (the global rank for the default group)
_TORCH_RANK = re.compile(r"\[Rank (?P<rank>\d+)\] ")
# journalctl/syslog kernel lines name the host: "Mar 21 02:07:08 node12 kernel: NVRM: Xid ..."
_SYSLOG_HOST = re.compile(r"^[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2} (?P<host>[\w.\-]+) kernel: ")


class LogLine(NamedTuple):  # a NamedTuple: immutable and cheap to build millions of times
    source: str
    lineno: int
    text: str  # the line with launcher prefixes removed
    rank: int | None = None  # from a launcher label or PyTorch "[Rank N]"
    host: str | None = None
    pid: int | None = None
    cuda_dev: int | None = None
    when: datetime | None = None
    has_year: bool = True


def parse_line(raw: str, source: str, lineno: int) -> LogLine:
    line = raw.rstrip("\r\n")
    if "\x1b" in line:  # colour codes from rich/tqdm/loguru consoles
        line = _ANSI.sub("", line)
    if len(line) > MAX_LINE:
        line = line[:MAX_LINE]
    stamp = find_stamp(line)
    text = line
    rank = None
    if text[:1].isalnum():
        m = _JOURNAL.match(text) or _COMPOSE.match(text)
        if m:  # a service's journal line stays the file's stream: only kernel lines name a node's own stream
            text = text[m.end() :]
    for _ in range(4):  # prefixes can stack: "[rank3]:[2025-...] host:..."
        if text[:1] not in _PREFIX_START:
            break
        for rx in _PREFIXES:
            m = rx.match(text)
            if m:
                if m.groupdict().get("rank") is not None and rank is None:
                    rank = int(m.group("rank"))
                text = text[m.end() :]
                break
        else:
            break
    host = pid = dev = None
    m = _NCCL_PREFIX.match(text) or (_NCCL_PREFIX.search(text, 0, 400) if "] " in text[:400] else None)
    if m:
        host, pid, dev = m.group("host"), int(m.group("pid")), int(m.group("dev"))
    else:
        m = _SYSLOG_HOST.match(text)
        if m:
            host = m.group("host")

    if rank is None:
        m = _RANK_LABEL.search(line, 0, 80) or _TORCH_RANK.search(text, 0, 200)
        if m:
            rank = int(m.group("rank"))
    return LogLine(
        source=source,
        lineno=lineno,
        text=text,
        rank=rank,
        host=host,
        pid=pid,
        cuda_dev=dev,
        when=stamp.when if stamp else None,
        has_year=stamp.has_year if stamp else True,
    )
