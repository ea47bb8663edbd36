"""The first NCCL release whose tree holds a line: how catalogs/nccl_fix_ranges.json's first_affected is found.

Given the code a fix changes (a line the fixing release removes or rewrites), print the first release tag whose
file contains it, and the last one before the fix that still does:
    NCCL_MIRROR=/path/to/bare/nccl.git python tools/nccl/first_tag.py src/misc/shmutils.cc \
        'handle->refcount = (int*)(hptr + shmSize)'
Read with git show per tag (nothing is checked out). A line that moved between files needs one run per file.
"""

from __future__ import annotations

import subprocess
import sys

import nccl_git


def tags_holding(path: str, line: str) -> list[str]:
    found = []
    for tag, _ in nccl_git.release_tags():
        try:
            text = nccl_git.show(tag, path)
        except subprocess.CalledProcessError:
            continue  # the file is not in this release
        if line in text:
            found.append(tag)
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    tags = tags_holding(argv[1], argv[2])
    if not tags:
        print(f"no release has that line in {argv[1]}")
        return 1
    print(f"first: {tags[0]}  last: {tags[-1]}  ({len(tags)} releases)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
