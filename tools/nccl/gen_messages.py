"""Generate src/imgcheck/data/triage/nccl_messages.json: every WARN and failure-relevant INFO format string of every
NCCL release (2.3.5 on), with its source sites per release range and a regex derived from the format.

Re-run after fetching a newer snapshot of github:NVIDIA/nccl:
    NCCL_MIRROR=/path/to/bare/nccl.git python tools/nccl/gen_messages.py

NCCL prints WARN(fmt, ...) as "<host>:<pid>:<tid> [<dev>] <file>:<line> NCCL WARN <message>" and INFO(flags, fmt, ...)
as "... [<dev>] NCCL INFO <message>" (src/debug.cc). The regex matches <message>.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import nccl_git  # noqa: E402
from gen_params import _args, _in_comment  # noqa: E402
from printf_formats import pieces  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/nccl_messages.json"
CALL = re.compile(r"\b(WARN|INFO)\(")
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
PRI = {
    "PRIu64": "%lu",
    "PRIx64": "%lx",
    "PRId64": "%ld",
    "PRIi64": "%ld",
    "PRIu32": "%u",
    "PRIx32": "%x",
    "PRId32": "%d",
}
FAILURE_INFO = re.compile(
    r"(?i)fail|error|unable|cannot|can't|could not|couldn't|not supported|unsupported|disabl|invalid|timeout|timed out"
    r"|abort|mismatch|fall(?:ing)? ?back|not found|refus|denied|insufficient|exceed|too (?:small|large|many)"
    # the lines whose outcome is in a conversion ("GPU Direct RDMA %s", "Plugin load ... returned %d : %s")
    r"|returned|GPU Direct RDMA|dma-?buf|peermem|nv_peer_mem|async|fatal|event|retr(?:y|ies)|\bNo \w+ found"
)
MIN_FIXED = 8  # a format with less fixed text than this would match almost any line: left out (counted)


def _format(arg: str) -> str | None:
    """The format string of a WARN/INFO argument: adjacent literals joined, PRIx64-style macros expanded, any other
    identifier between literals (a macro string) read as %s. None when the argument holds no literal."""
    parts = []
    pos = 0
    found = False
    for m in STRING.finditer(arg):
        between = arg[pos : m.start()].strip()
        if between:
            parts.append(PRI.get(between, "%s") if re.fullmatch(r"\w+", between) else "%s")
        parts.append(bytes(m.group(1), "utf-8").decode("unicode_escape", "replace"))
        pos = m.end()
        found = True
    if not found:
        return None
    tail = arg[pos:].strip()
    if tail and re.fullmatch(r"\w+", tail):
        parts.append(PRI.get(tail, "%s"))
    return "".join(parts)


def regex_of(fmt: str) -> tuple[str, int]:
    """A regex for the first line of what printf(fmt) prints, and how many fixed characters it holds."""
    fmt = fmt.split("\n")[0] if fmt.strip("\n") else fmt
    out, fixed = ["^"], 0
    for lit, conversion in pieces(fmt):
        if conversion is None:
            lit = lit.rstrip()
        out.append(re.escape(lit))
        fixed += len(lit.strip())
        if conversion is not None:
            out.append(conversion)
    out.append(r"[\s\"',.]*$")  # logs quoted in JSON or a thread keep a trailing quote or comma
    return "".join(out), fixed


def scan(tag: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(level, format) -> (site, INFO flags) at this tag."""
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for path, text in nccl_git.files_text(tag).items():
        for m in CALL.finditer(text):
            if _in_comment(text, m.start()) or text[max(0, m.start() - 8) : m.start()].endswith("define "):
                continue
            args, _ = _args(text, m.end() - 1)
            level = m.group(1)
            if level == "INFO":
                if len(args) < 2:
                    continue
                flags, arg = args[0], args[1]
            else:
                if not args:
                    continue
                flags, arg = "", args[0]
            fmt = _format(arg)
            if fmt is None:
                fmt = "<dynamic>"
            line = text.count("\n", 0, m.start()) + 1
            found.setdefault((level, fmt), (f"{path}:{line}", flags))
    return found


def build() -> dict:
    tags = nccl_git.release_tags()
    versions = [v for _, v in tags]
    per = []
    for tag, version in tags:
        print(f"scanning {tag}", file=sys.stderr)
        per.append((version, scan(tag)))
    keys = sorted({k for _, f in per for k in f})
    messages, left_out = [], {"dynamic": 0, "too little fixed text": 0, "INFO not about a failure": 0}
    for level, fmt in keys:
        present = [(v, f[(level, fmt)]) for v, f in per if (level, fmt) in f]
        if fmt == "<dynamic>":
            left_out["dynamic"] += 1
            continue
        if level == "INFO" and not FAILURE_INFO.search(fmt):
            left_out["INFO not about a failure"] += 1
            continue
        regex, fixed = regex_of(fmt)
        if fixed < MIN_FIXED:
            left_out["too little fixed text"] += 1
            continue
        sites: list[list[str]] = []  # [first, last, path:line] runs of consecutive releases with the same site
        for v, (site, _flags) in present:
            if sites and sites[-1][2] == site and versions.index(sites[-1][1]) + 1 == versions.index(v):
                sites[-1][1] = v
            else:
                sites.append([v, v, site])
        messages.append(
            {
                "level": level,
                "subsys": present[-1][1][1] or None,
                "format": fmt,
                "regex": regex,
                "first": present[0][0],
                "last": present[-1][0],
                "releases": len(present),
                "sites": sites,
            }
        )
    return {
        "source": f"github:NVIDIA/nccl release tags {versions[0]} .. {versions[-1]} ({len(versions)} releases), "
        "WARN( and INFO( calls in src/ and the in-tree plugins; generated by tools/nccl/gen_messages.py",
        "confidence": "verified",
        "releases": versions,
        "left_out": left_out,
        "messages": messages,
    }


def main() -> None:
    data = build()
    OUT.write_text(json.dumps(data, indent=0, separators=(",", ":")) + "\n")
    print(f"{len(data['messages'])} messages, left out {data['left_out']} -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
