"""Readiness of one replica: its database answers and its local disk takes writes.

Kubernetes stops routing webhooks to a pod whose /readyz fails (the registry then retries against
another replica) but does not restart it; liveness (/livez) is deliberately not tied to either, since
a restart cures neither an unreachable database nor a full volume.
"""

from __future__ import annotations

import os
import tempfile
from typing import TYPE_CHECKING

from ..home import imgcheck_home
from .store_types import StoreUnavailableError

if TYPE_CHECKING:
    from .storage import JobStore


def writable(directory: str) -> str | None:
    """None when a file can be created, written, synced and removed in `directory`; else why not."""
    try:
        os.makedirs(directory, exist_ok=True)
        fd, path = tempfile.mkstemp(prefix=".imgcheck-ready.", dir=directory)
        try:
            os.write(fd, b"ok")
            os.fsync(fd)  # a full or read-only volume often fails only here
        finally:
            os.close(fd)
            os.unlink(path)
    except OSError as exc:
        return f"{directory}: not writable ({exc.strerror or exc})"
    return None


def check_ready(store: JobStore | None) -> list[str]:
    problems = []
    if store is None:
        problems.append("the store is not open yet")
    else:
        try:
            store.ping()
        except StoreUnavailableError as exc:
            problems.append(f"database: {exc}")
    problem = writable(imgcheck_home())  # the layer-facts cache every check writes
    if problem:
        problems.append(problem)
    return problems
