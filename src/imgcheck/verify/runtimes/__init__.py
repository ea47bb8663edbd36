"""Container runtimes verify can use; each module has NAME, unavailable_reason() and run(RunRequest)."""

from __future__ import annotations

import importlib
from typing import Protocol, cast

from ...errors import UnavailableError, UsageError
from .base import RunOutcome, RunRequest

RUNTIMES = {"docker": "docker_rt", "enroot": "enroot_rt", "apptainer": "apptainer_rt"}

__all__ = ["RUNTIMES", "RunOutcome", "RunRequest", "Runtime", "get_runtime"]


class Runtime(Protocol):
    """What each runtime module offers (docker_rt, enroot_rt, apptainer_rt)."""

    NAME: str

    def unavailable_reason(self) -> str | None: ...

    def run(self, req: RunRequest) -> RunOutcome: ...


def get_runtime(name: str) -> Runtime:
    """The runtime module for `name`; UnavailableError (exit 3) when its program or daemon is missing."""
    if name not in RUNTIMES:
        raise UsageError(f"unknown runtime {name!r} (choose from {', '.join(RUNTIMES)})")
    # each module RUNTIMES names is a Runtime (tests/verify/test_runtimes.py loads every one)
    module = cast(Runtime, importlib.import_module(f"{__name__}.{RUNTIMES[name]}"))
    reason = module.unavailable_reason()
    if reason:
        raise UnavailableError(reason)
    return module
