"""Text from images, node facts and logs, made safe to print in a terminal table or Markdown.

File names, Env values and log lines are the attacker's: an ESC (\\x1b) starts an ANSI sequence
that can recolour, move the cursor or rewrite earlier lines; \\r and \\n forge whole report lines;
Unicode bidi controls reorder what a reviewer reads. Each becomes a visible escape instead
(`\\x1b`, `\\n`, `\\u202e`). Rich markup in data (`[red]`, `[/ib0]`) is escaped for Rich, never
interpreted (an unmatched closing tag would even raise).
"""

from __future__ import annotations

import re

from rich.markup import escape as _rich_escape
from rich.text import Text

# C0 controls and DEL, C1 controls, and the bidi embedding/override/isolate controls
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_KEEP_NEWLINES = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, keep_newlines: bool = False) -> str:
    """`text` with every control character shown as an escape (newlines kept if asked)."""
    text = str(text)
    return (_UNSAFE_KEEP_NEWLINES if keep_newlines else _UNSAFE).sub(_visible, text)


def escape_markup(text: object) -> str:
    """For a Rich markup string: printable, and any `[...]` shown literally."""
    return _rich_escape(printable(text))


def cell(text: object) -> Text:
    """A Rich table cell holding `text` literally (cells given as str are parsed as markup)."""
    return Text(printable(text))
