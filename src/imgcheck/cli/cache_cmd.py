"""`imgcheck cache info|prune`: the per-layer caches (indexes, file indexes) and the facts cache under $IMGCHECK_HOME."""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:
    from .common_args import Subparsers

NAMES = ("cache",)
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?$", re.I)


def parse_size(text: str) -> int:
    match = _SIZE.match(text.strip())
    if not match:
        raise UsageError(f"invalid size {text!r}: use e.g. 500M or 2G")
    factor = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}[match.group(2).upper()]
    return int(float(match.group(1)) * factor)


def register(sub: Subparsers) -> None:
    p = sub.add_parser("cache", help="inspect or prune the caches (layer indexes, file indexes, facts)")
    csub = p.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    info = csub.add_parser("info", help="where the cache is and how big")
    info.set_defaults(func=run_info)
    prune = csub.add_parser("prune", help="remove least recently used entries")
    prune.add_argument("--max-size", default="0", help="keep at most this much (default 0: empty the cache)")
    prune.set_defaults(func=run_prune)


def _root() -> str:
    import os

    from ..home import imgcheck_home

    return os.path.join(imgcheck_home(), "cache")


def run_info(args: argparse.Namespace) -> int:
    import os

    from ..view.cache import tree_entries

    # layers: indexes per wants; files: each layer's file index (members, offsets, seek points), kept across wants
    for kind in ("layers", "files", "facts"):
        entries = tree_entries(os.path.join(_root(), kind))
        print(f"{os.path.join(_root(), kind)}: {len(entries)} {kind} entries, {sum(s for _, s, _ in entries)} bytes")
    return 0


def run_prune(args: argparse.Namespace) -> int:
    from ..view.cache import prune_tree

    removed, freed = prune_tree(_root(), parse_size(args.max_size))
    print(f"removed {removed} entries ({freed} bytes)")
    return 0
