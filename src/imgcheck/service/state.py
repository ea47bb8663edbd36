"""What the app's handlers share at run time: the config, the job store, the workers, the metrics.

One AppState per app (create_app makes it; its lifespan starts and stops it). Handlers take it as
their first argument, so each can be called alone with a state built around any JobStore.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from .config import ServiceConfig
from .credentials import install_auth_file
from .metrics import Metrics
from .notify import Notifier
from .reconcile import reconcile
from .storage import JobStore, open_store
from .store_types import FleetResult, Job, StoreUnavailableError
from .worker import WorkerPool, check_job

log = logging.getLogger("imgcheck.service")

CheckFn = Callable[[ServiceConfig, Job], list[FleetResult]]


class AppState:
    """The store (opened by start(), or given), the worker pool, the metrics; start() and stop()."""

    def __init__(
        self,
        config: ServiceConfig,
        check: CheckFn = check_job,
        start_workers: bool = True,
        store: JobStore | None = None,
    ):
        self.config = config
        self.check = check
        self.start_workers = start_workers
        self._store = store
        self.pool: WorkerPool | None = None
        self.metrics = Metrics(self._counts)

    @property
    def store(self) -> JobStore:
        if self._store is None:  # a request before the lifespan opened it: the sender may retry
            raise StoreUnavailableError("the job store is not open yet")
        return self._store

    @property
    def opened_store(self) -> JobStore | None:
        """The store, or None before start() opened it (readiness says so)."""
        return self._store

    def _counts(self) -> dict[str, int]:
        return self._store.counts() if self._store else {}

    def wake_workers(self) -> None:
        if self.pool is not None:
            self.pool.wake()

    def start(self) -> None:
        if self._store is None:
            self._store = open_store(self.config.database, self.config.database_url, self.config.workers + 4)
        store = self._store
        store.acquire_instance_lock()
        orphans = store.requeue_orphans()
        if orphans:
            log.info(
                "requeued %d job(s) left running by a previous process",
                orphans,
                extra={"event": "jobs.requeued", "count": orphans},
            )
        self.prune()
        install_auth_file(self.config)
        notifier = Notifier(self.config.notify, self.config.public_url) if self.config.notify else None
        self.pool = WorkerPool(self.config, store, self.metrics, check=self.check, notifier=notifier, prune=self.prune)
        if self.start_workers:
            self.pool.start()
            if any(r.watch for r in self.config.registries.values()):
                # in the background: a slow registry must not hold up accepting webhooks
                threading.Thread(target=self._reconcile, name="imgcheck-reconcile", daemon=True).start()

    def _reconcile(self) -> None:
        try:
            if reconcile(self.config, self.store):
                self.wake_workers()
        except Exception:  # a bug here must not take the service down; pushes still arrive by webhook
            log.exception("reconcile failed", extra={"event": "reconcile.failed"})

    def prune(self) -> int:
        """Retention: delete finished jobs older than retention_days (at start, then hourly)."""
        if not self.config.retention_days or self._store is None:
            return 0
        removed = self._store.delete_finished_before(time.time() - self.config.retention_days * 86400)
        if removed:
            log.info(
                "deleted %d finished job(s) older than %g days",
                removed,
                self.config.retention_days,
                extra={"event": "retention.pruned", "count": removed},
            )
        return removed

    def stop(self) -> None:
        if self.pool:
            self.pool.stop()
        if self._store:
            self._store.close()
