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


def pieces(fmt: str) -> Iterator[tuple[str, str | None]]:
    """(literal text, regex of the conversion after it) in order; the last pair has the trailing text and None."""
    pos = 0
    for m in SPEC.finditer(fmt):
        yield fmt[pos : m.start()], CONVERSIONS.get(m.group(5), FLOAT)
        pos = m.end()
    yield fmt[pos:], None
