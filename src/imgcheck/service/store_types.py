"""The job store's records and errors, shared by the store, its backends and its callers."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UnavailableError

DELIVERY_MEMORY_SECONDS = 7 * 24 * 3600  # remember sender event ids this long to spot redeliveries

STATES = ("queued", "running", "done", "failed")


@dataclass(frozen=True)
class Job:
    id: int
    registry: str
    repository: str
    digest: str
    attempts: int  # including the attempt this claim started


@dataclass(frozen=True)
class EnqueueOutcome:
    queued: int  # new jobs (or failed jobs queued again by a new event)
    duplicates: int  # digests already known, or redelivered event ids


@dataclass(frozen=True)
class FleetResult:
    fleet: str
    verdict: str
    report_json: str  # the CLI's JSON report, serialised
    duration_seconds: float | None = None


class StoreBusyError(UnavailableError):
    """Another process holds the SQLite database's instance lock."""


class StoreUnavailableError(UnavailableError):
    """The database cannot be reached or used right now (the webhook answers 503, readiness fails)."""
