"""JSON from untrusted places, parsed with bounded depth: one BadInputError, never a RecursionError.

json's C parser recurses per nesting level and raises RecursionError near the interpreter's limit;
a document a few hundred levels deep that parses would still overflow the recursive code that
walks it afterwards (serde, reports). Real manifests, configs, facts and caches nest under 16
levels, so anything past MAX_DEPTH is refused. Integers longer than Python's digit limit (4300)
are a ValueError from the parser already, and end here as the same one line.
"""

from __future__ import annotations

import json
from typing import IO

from .errors import BadInputError

MAX_DEPTH = 64


def depth_exceeds(doc: object, limit: int = MAX_DEPTH) -> bool:
    """Whether `doc` nests deeper than `limit` (iterative: it cannot overflow the stack itself)."""
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = node.values()
        elif not isinstance(node, list):
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in node if isinstance(child, (dict, list)))
    return False


def loads(data: bytes | str, what: str, error: type[Exception] = BadInputError) -> object:
    """Parse `data`; malformed, too deep or with an absurd number -> `error` naming `what`."""
    try:
        doc = json.loads(data)
    except RecursionError:
        raise error(f"{what}: JSON nested too deeply (more than {MAX_DEPTH} levels)") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise error(f"{what} is not valid JSON: {exc}") from None
    if depth_exceeds(doc):
        raise error(f"{what}: JSON nested too deeply (more than {MAX_DEPTH} levels)")
    return doc


def load(fh: IO[str] | IO[bytes], what: str, error: type[Exception] = BadInputError) -> object:
    return loads(fh.read(), what, error)
