"""`imgcheck cache info|prune`: the per-layer fact cache under $IMGCHECK_HOME."""

from __future__ import annotations

import re

from .. import api
from ..errors import UsageError

NAMES = ("cache",)
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?$", re.I)


def parse_size(text: str) -> int:
    match = _SIZE.match(text.strip())
    if not match:
        raise UsageError(f"invalid size {text!r}: use e.g. 500M or 2G")
    factor = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}[match.group(2).upper()]
    return int(float(match.group(1)) * factor)


def register(sub) -> None:
    p = sub.add_parser("cache", help="inspect or prune the per-layer fact cache")
    csub = p.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    info = csub.add_parser("info", help="where the cache is and how big")
    info.set_defaults(func=run_info)
    prune = csub.add_parser("prune", help="remove least recently used entries")
    prune.add_argument("--max-size", default="0", help="keep at most this much (default 0: empty the cache)")
    prune.set_defaults(func=run_prune)


def run_info(args) -> int:
    cache = api.layer_cache()
    entries = cache.entries()
    print(f"{cache.root}: {len(entries)} layer entries, {sum(s for _, s, _ in entries)} bytes")
    return 0


def run_prune(args) -> int:
    cache = api.layer_cache()
    removed, freed = cache.prune(parse_size(args.max_size))
    print(f"removed {removed} entries ({freed} bytes)")
    return 0
