"""Quoting what a user typed in one-line messages: long input cut short, and a close match suggested."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

MAX_QUOTED = 80  # characters of a user's word an error repeats; a 100k-character name stays one short line
_LONG_WORD = re.compile(r"\S{" + str(2 * MAX_QUOTED + 1) + ",}")


def clip(text: str, limit: int = MAX_QUOTED) -> str:
    """`text`, or its first `limit` characters and how long it was."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def clip_words(message: str) -> str:
    """Every very long word of a message (user input an error quoted) cut to MAX_QUOTED characters; the
    quote and punctuation that close it are kept, so the message still reads."""

    def cut(match: re.Match[str]) -> str:
        word = match.group(0)
        body = word.rstrip("'\":,;)]")
        tail = word[len(body) :]
        inner = body.lstrip("'\"([")
        return body[: len(body) - len(inner)] + clip(inner) + tail

    return _LONG_WORD.sub(cut, message)


def did_you_mean(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """ " (did you mean 'X'?)" for the closest of `choices`, or "" when none is close."""
    close = difflib.get_close_matches(word.upper() if word.isupper() else word, list(choices), n=1, cutoff=cutoff)
    if not close and not word.isupper():  # a rule id typed in lower case
        close = difflib.get_close_matches(word.upper(), list(choices), n=1, cutoff=cutoff)
    return f" (did you mean {close[0]!r}?)" if close else ""
