"""Filling the shared test caches (/var/cache/imgcheck-rootfs) when several test runs share a machine.

Each run fills a private temporary path and moves it into place. A file is replaced atomically, so a
race needs nothing more. A directory cannot replace a non-empty one: when another run published the same
cache entry first, "someone else won" is success (both copies were made from the same inputs), and ours
is thrown away. Nothing here ever deletes an entry another run may be reading.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import threading


def private_dir(dest: str) -> str:
    """A new empty directory beside `dest`, unique to this process and thread."""
    parent = os.path.dirname(dest)
    os.makedirs(parent, exist_ok=True)
    return tempfile.mkdtemp(prefix=f".{os.path.basename(dest)}.tmp", dir=parent)


def private_name(dest: str, suffix: str = "") -> str:
    """A temporary file name beside `dest`, unique to this process and thread (`suffix` keeps an extension)."""
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    return os.path.join(
        os.path.dirname(dest), f".{os.path.basename(dest)}.tmp{os.getpid()}-{threading.get_ident()}{suffix}"
    )


def publish_dir(tmp: str, dest: str) -> str:
    """Move the filled directory `tmp` to `dest`; if another run got there first, keep theirs."""
    try:
        os.replace(tmp, dest)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST) or not os.path.isdir(dest):
            raise
    return dest
