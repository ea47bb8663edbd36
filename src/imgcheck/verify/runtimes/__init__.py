"""Container runtimes verify can use; each module has NAME, unavailable_reason() and run(RunRequest)."""

from __future__ import annotations

import importlib

from ...errors import UnavailableError, UsageError
from .base import RunOutcome, RunRequest

RUNTIMES = {"docker": "docker_rt", "enroot": "enroot_rt", "apptainer": "apptainer_rt"}

__all__ = ["RUNTIMES", "RunOutcome", "RunRequest", "get_runtime"]


def get_runtime(name: str):
    """The runtime module for `name`; UnavailableError (exit 3) when its program or daemon is missing."""
    if name not in RUNTIMES:
        raise UsageError(f"unknown runtime {name!r} (choose from {', '.join(RUNTIMES)})")
    module = importlib.import_module(f"{__name__}.{RUNTIMES[name]}")
    reason = module.unavailable_reason()
    if reason:
        raise UnavailableError(reason)
    return module
