"""What a C printf format prints, as regex pieces: shared by the message-catalog generators (tools/nccl/gen_messages.py,
tools/upstreams/gen_fabric_messages.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator

# a conversion spec: flags, width, precision, length, conversion (glibc's %m prints strerror(errno))
SPEC = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?(hh|h|ll|l|L|z|j|t)?([diouxXeEfgGcspm%])")
CONVERSIONS = {
    "d": r"-?\d+",
    "i": r"-?\d+",
    "u": r"\d+",
    "o": r"[0-7]+",
    "x": r"[0-9a-fA-F]+",
    "X": r"[0-9a-fA-F]+",
    "p": r"(?:0x[0-9a-fA-F]+|\(nil\))",
    "c": r".",
    "s": r".*?",
    "m": r".*?",
    "%": "%",
}
FLOAT = r"[-+0-9.eEinfa]+"
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')  # a C string literal
# <inttypes.h> macros between literals ("... %" PRIu64 " ..."): what they expand to, the length and conversion
# letters only (glibc: PRIu64 is "lu"); the "%" and any flags or width stay in the literal before them
PRI = {"PRIu64": "lu", "PRIx64": "lx", "PRId64": "ld", "PRIi64": "ld", "PRIu32": "u", "PRIx32": "x"}
PRI.update({"PRId32": "d", "PRIu16": "u", "PRIu8": "u", "PRIx8": "x", "PRIx16": "x", "PRIi32": "d"})


def pieces(fmt: str) -> Iterator[tuple[str, str | None]]:
    """(literal text, regex of the conversion after it) in order; the last pair has the trailing text and None."""
    pos = 0
    for m in SPEC.finditer(fmt):
        yield fmt[pos : m.start()], CONVERSIONS.get(m.group(5), FLOAT)
        pos = m.end()
    yield fmt[pos:], None


def format_of(arg: str) -> str | None:
    """The format string of a call's argument: adjacent literals joined, PRIx64-style macros expanded, any other
    identifier between literals (a macro string) read as %s. None when the argument holds no literal."""
    parts, pos, found = [], 0, False
    for m in STRING.finditer(arg):
        between = arg[pos : m.start()].strip()
        if between:
            parts.append(_between(between, parts))
        parts.append(bytes(m.group(1), "utf-8").decode("unicode_escape", "replace"))
        pos, found = m.end(), True
    if not found:
        return None
    tail = arg[pos:].strip()
    if tail and re.fullmatch(r"\w+", tail):
        parts.append(_between(tail, parts))
    return "".join(parts)


def _between(word: str, parts: list[str]) -> str:
    """A macro between literals: an <inttypes.h> one completes the conversion its "%" opened; any other identifier
    (a macro string) is a %s of its own."""
    opened = bool(parts) and re.search(r"%[-+ #0]*\d*(?:\.\d+)?$", parts[-1]) is not None
    if word in PRI and opened:
        return PRI[word]
    return "%" + PRI[word] if word in PRI else "%s"
