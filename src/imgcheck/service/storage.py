"""The storage protocol the service codes against, and the choice of backend from a database URL.

- no URL, or `sqlite:///PATH`: the job store on embedded SQLite (store.Store), one process per file.
- `postgresql://...` / `postgres://...` (libpq URI): the same store on PostgreSQL (store_pg.PgStore),
  shared by several replicas.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol

from ..errors import BadInputError, UnavailableError
from .events import PushEvent
from .store import Store
from .store_dialect import Row
from .store_types import EnqueueOutcome, FleetResult, Job

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class JobStore(Protocol):
    """Every method the app, the worker, reconcile and readiness call (store.SqlJobStore implements it)."""

    # intake (the webhook, reconcile)
    def enqueue(self, registry: str, pushes: Sequence[PushEvent], now: float | None = None) -> EnqueueOutcome: ...

    # the job state machine (the worker)
    def claim(self, owner: str, lease_seconds: float, max_attempts: int, now: float | None = None) -> Job | None: ...
    def renew(self, owner: str, job_ids: Sequence[int], lease_seconds: float, now: float | None = None) -> None: ...
    def complete(self, job: Job, owner: str, results: Sequence[FleetResult], now: float | None = None) -> bool: ...
    def retry_later(self, job: Job, owner: str, error: str, delay: float, now: float | None = None) -> bool: ...
    def fail(self, job: Job, owner: str, error: str, now: float | None = None) -> bool: ...
    def skip(self, job: Job, owner: str, reason: str, now: float | None = None) -> bool: ...

    # the outbox (the worker's sender): rows are leased to `owner` until done, retried or released
    def outbox_due(
        self, limit: int = 20, now: float | None = None, owner: str = "", lease_seconds: float = 60.0
    ) -> list[Row]: ...
    def outbox_done(self, outbox_id: int) -> None: ...
    def outbox_retry(
        self, outbox_id: int, error: str, delay: float, now: float | None = None, owner: str | None = None
    ) -> None: ...
    def outbox_release(self, outbox_ids: Sequence[int], owner: str, now: float | None = None) -> None: ...

    # retention
    def forget_old_deliveries(self, now: float | None = None) -> int: ...
    def delete_finished_before(self, cutoff: float) -> int: ...

    # reads (the app's pages and JSON)
    def counts(self) -> dict[str, int]: ...
    def jobs_for_digest(self, digest: str) -> list[Row]: ...
    def results_for_job(self, job_id: int) -> list[Row]: ...
    def history(self, repository: str, limit: int = 100) -> list[Row]: ...
    def recent(self, limit: int = 50) -> list[Row]: ...
    def ping(self) -> None: ...  # raises StoreUnavailableError when the database does not answer

    # single-instance hooks: real for SQLite, no-ops for a shared database (leases recover orphans)
    def acquire_instance_lock(self) -> None: ...
    def release_instance_lock(self) -> None: ...
    def requeue_orphans(self, now: float | None = None) -> int: ...
    def close(self) -> None: ...


def is_shared(url: str | None) -> bool:
    """True for a database several replicas may share."""
    return url is not None and url.startswith(POSTGRES_SCHEMES)


def open_store(database: str, url: str | None = None, pool_size: int = 8) -> JobStore:
    """The store for a config: `url` when given (PostgreSQL or sqlite:///), else the SQLite file."""
    if not url:
        return Store(database)
    if url.startswith("sqlite:///"):
        return Store(url[len("sqlite://") :])
    if is_shared(url):
        from .store_pg import PgStore

        _make_state_dir(os.path.dirname(os.path.abspath(database)))  # the registry auth file goes there
        return PgStore(url, pool_size=pool_size)
    scheme = url.split("://", 1)[0] if "://" in url else url[:20]
    raise BadInputError(f"database_url: unsupported scheme {scheme!r} (use postgresql:// or sqlite:///)")


def _make_state_dir(directory: str) -> None:
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise UnavailableError(f"{directory}: cannot create the local state directory ({exc.strerror})") from None
