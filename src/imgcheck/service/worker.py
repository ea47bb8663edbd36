"""Workers: a bounded pool of threads that take jobs from the store and check them.

A job inspects `registry:HOST/REPO@DIGEST` once (HOST from the config, never from the payload) and
checks the facts against every configured fleet; all fleet results are stored together with the
job's `done` mark. An unreachable registry (UnavailableError) puts the job back with exponential
backoff; bad input (a corrupt image, an unreadable fleet file) fails it for good.
"""

from __future__ import annotations

import glob
import json
import logging
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import BadInputError, ImgcheckError, UnavailableError
from ..sources.read_options import ReadOptions
from .artifacts import NotAnImage, artifact_reason
from .config import FleetConfig, ServiceConfig
from .store_types import FleetResult, Job

if TYPE_CHECKING:  # names for annotations only: the worker imports none of these at run time
    from ..job import JobFacts
    from ..model.node import NodeFacts
    from .metrics import Metrics
    from .notify import Notifier
    from .storage import JobStore

log = logging.getLogger("imgcheck.service")


def registry_reference(config: ServiceConfig, job: Job) -> tuple[str, ReadOptions]:
    """The image reference and read options for a job, built from the configured registry."""
    reg = config.registries.get(job.registry)
    if reg is None:
        raise BadInputError(f"registry {job.registry!r} is no longer configured")
    options = ReadOptions(insecure_registries=(reg.host,) if reg.insecure else ())
    return f"registry:{reg.host}/{job.repository}@{job.digest}", options


def fleet_jobs(fleet: FleetConfig, config: ServiceConfig, job: Job) -> list[JobFacts]:
    """The containers of the fleet's launch specs that run the pushed repository (read at every check, like the
    node facts, so an edited manifest counts without a restart)."""
    from ..job import load_job_spec
    from ..job.parse import running

    files = []
    for path in fleet.job_specs:
        files += (
            sorted(f for f in glob.glob(os.path.join(path, "*")) if f.endswith((".yaml", ".yml")))
            if os.path.isdir(path)
            else [path]
        )
    name = f"{config.registries[job.registry].host}/{job.repository}"
    return [c for f in files for c in running(load_job_spec(f), name)]


def fleet_nodes(fleet: FleetConfig) -> list[NodeFacts]:
    """The node facts of a fleet: its files (or *.json in its directories), then its inventory selector.

    The same selection as the CLI's --node-facts/--fleet, read at every check so freshly probed nodes
    count without a restart.
    """
    from ..node import select

    try:
        return select.select_nodes(select.NodeSelection(facts=fleet.node_facts, fleet=fleet.selector))
    except select.NoNodesFound as exc:
        # probably nodes not yet probed: worth retrying (UnavailableError) rather than storing an empty verdict
        raise UnavailableError(f"fleet {fleet.name!r} has no node facts") from exc


def check_job(config: ServiceConfig, job: Job) -> list[FleetResult]:
    """Inspect the job's image once, then check it against each fleet. The real work of a job.

    This is api.check_image split in two, so an image is read once however many fleets there are.
    """
    from .. import api
    from ..model.env_redact import redact_report
    from ..model.serde import to_dict

    matrix = api.load_check_matrix()  # validated before any bytes are pulled
    reference, options = registry_reference(config, job)
    _refuse_artifacts(config, job)
    facts = api.inspect_image(reference, options)
    results = []
    for fleet in config.fleets.values():
        started = time.monotonic()
        report = api.check_facts(facts, fleet_nodes(fleet), matrix=matrix, jobs=fleet_jobs(fleet, config, job))
        results.append(
            FleetResult(
                fleet=fleet.name,
                verdict=report.verdict,
                # stored redacted: /results must not hand out the image's tokens
                report_json=json.dumps(to_dict(redact_report(report)), separators=(",", ":")),
                duration_seconds=time.monotonic() - started,
            )
        )
    return results


def _refuse_artifacts(config: ServiceConfig, job: Job) -> None:
    """Raise NotAnImage for a signature, attestation, SBOM or chart (one small manifest GET)."""
    from .reconcile import _client

    client = _client(config.registries[job.registry], job.repository)
    try:
        data, _, _ = client.get_manifest(job.digest)
    finally:
        client.close()
    reason = artifact_reason(data)
    if reason:
        raise NotAnImage(reason)


def backoff_delay(config: ServiceConfig, attempts: int) -> float:
    base = min(config.backoff_seconds * 2.0 ** max(attempts - 1, 0), config.backoff_max_seconds)
    return base * random.uniform(0.9, 1.1)  # jitter: retries of many jobs do not arrive together


class WorkerPool:
    def __init__(
        self,
        config: ServiceConfig,
        store: JobStore,
        metrics: Metrics | None = None,
        check: Callable[[ServiceConfig, Job], list[FleetResult]] = check_job,
        notifier: Notifier | None = None,
        prune: Callable[[], int] | None = None,
    ):
        self.config, self.store, self.metrics, self.check, self.notifier = config, store, metrics, check, notifier
        self.prune = prune  # retention, run hourly with the delivery-id pruning
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._wake = threading.Condition()
        self._stop = threading.Event()
        self._inflight: set[int] = set()
        self._inflight_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._outbox_wake = threading.Event()

    def start(self) -> None:
        for i in range(self.config.workers):
            t = threading.Thread(target=self._loop, name=f"imgcheck-worker-{i}", daemon=True)
            t.start()
            self._threads.append(t)
        hb = threading.Thread(target=self._heartbeat, name="imgcheck-lease", daemon=True)
        hb.start()
        self._threads.append(hb)
        # one sender drains the outbox, so a notification is never POSTed twice by two threads
        ob = threading.Thread(target=self._outbox_loop, name="imgcheck-outbox", daemon=True)
        ob.start()
        self._threads.append(ob)

    def wake(self) -> None:
        with self._wake:
            self._wake.notify_all()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop taking jobs; a check still running is left to its lease (recovered on next start)."""
        self._stop.set()
        self._outbox_wake.set()
        self.wake()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))

    # -- loops ----------------------------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                job = self.store.claim(self.owner, self.config.lease_seconds, self.config.max_attempts)
            except Exception:  # the database is locked or gone: keep the worker alive and try again
                log.exception("claiming a job failed", extra={"event": "store.failed"})
                self._store_error("claim")
                job = None
            if job is None:
                with self._wake:
                    if not self._stop.is_set():
                        self._wake.wait(self.config.poll_seconds)
                continue
            try:
                self.run(job)
            except Exception:  # the database failed mid-job (complete/fail): the lease brings the job back
                log.exception("storing the outcome of job %d failed", job.id, extra={"event": "store.failed"})
                self._store_error("complete")

    def _heartbeat(self) -> None:
        interval = max(self.config.lease_seconds / 3, 0.05)
        last_prune = 0.0
        while not self._stop.wait(interval):
            with self._inflight_lock:
                ids = sorted(self._inflight)
            try:
                self.store.renew(self.owner, ids, self.config.lease_seconds)
                if time.monotonic() - last_prune > 3600:
                    self.store.forget_old_deliveries()
                    if self.prune:
                        self.prune()
                    last_prune = time.monotonic()
            except Exception:
                log.exception("renewing leases failed", extra={"event": "store.failed"})
                self._store_error("renew")

    # -- one job --------------------------------------------------------------------------------

    def run(self, job: Job) -> None:
        with self._inflight_lock:
            self._inflight.add(job.id)
        started = time.monotonic()
        where = f"{job.registry}:{job.repository}@{job.digest}"
        try:
            try:
                results = self.check(self.config, job)
            except NotAnImage as exc:
                log.info(
                    "skipped %s: %s", where, exc, extra={"event": "check.skipped", "image": where, "error": str(exc)}
                )
                self.store.skip(job, self.owner, str(exc))
                return
            except UnavailableError as exc:
                self._unavailable(job, str(exc), where)
                return
            except ImgcheckError as exc:
                log.warning(
                    "check of %s failed for good: %s",
                    where,
                    exc,
                    extra={
                        "event": "check.failed",
                        "image": where,
                        "error": str(exc),
                        "seconds": round(time.monotonic() - started, 3),
                    },
                )
                self.store.fail(job, self.owner, str(exc))
                self._count_error("failed")
                return
            except Exception as exc:  # a bug: record it on the job rather than kill the worker
                log.exception(
                    "internal error checking %s",
                    where,
                    extra={"event": "check.failed", "image": where, "error": repr(exc)},
                )
                self.store.fail(job, self.owner, f"internal error: {exc.__class__.__name__}: {exc}")
                self._count_error("failed")
                return
            if not self.store.complete(job, self.owner, results):
                log.warning(
                    "lease on %s was lost; its results were discarded",
                    where,
                    extra={"event": "check.lease_lost", "image": where},
                )
                return
            seconds = time.monotonic() - started
            verdicts = {r.fleet: r.verdict for r in results}
            log.info(
                "checked %s in %.1f s: %s",
                where,
                seconds,
                ", ".join(f"{k} {v}" for k, v in verdicts.items()),
                extra={
                    "event": "check.done",
                    "image": where,
                    "verdicts": verdicts,
                    "seconds": round(seconds, 3),
                    "attempt": job.attempts,
                },
            )
            self._record(job, results, seconds)
        finally:
            with self._inflight_lock:
                self._inflight.discard(job.id)

    def _unavailable(self, job: Job, error: str, where: str) -> None:
        if job.attempts >= self.config.max_attempts:
            log.warning(
                "giving up on %s after %d attempts: %s",
                where,
                job.attempts,
                error,
                extra={"event": "check.gave_up", "image": where, "attempt": job.attempts, "error": error},
            )
            self.store.fail(job, self.owner, f"gave up after {job.attempts} attempts: {error}")
            self._count_error("failed")
            return
        delay = backoff_delay(self.config, job.attempts)
        log.warning(
            "registry unavailable for %s (attempt %d), retrying in %.0f s: %s",
            where,
            job.attempts,
            delay,
            error,
            extra={
                "event": "registry.unavailable",
                "image": where,
                "attempt": job.attempts,
                "delay_seconds": round(delay, 1),
                "error": error,
            },
        )
        self.store.retry_later(job, self.owner, error, delay)
        self._count_error("retry")

    def _store_error(self, operation: str) -> None:
        if self.metrics:
            self.metrics.store_error(operation)

    def _count_error(self, outcome: str) -> None:
        if self.metrics:
            self.metrics.job_errors.labels(outcome).inc()

    def _record(self, job: Job, results: list[FleetResult], seconds: float) -> None:
        if self.metrics:
            self.metrics.duration.observe(seconds)
            for r in results:
                self.metrics.checks.labels(r.fleet, r.verdict).inc()
                if r.verdict == "fail":
                    self.metrics.failures_predicted.labels(r.fleet).inc()
        self._outbox_wake.set()  # the outbox rows were committed with the results

    # -- the outbox: notifications survive a crash between the commit and the POST ---------------

    def _outbox_loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.drain_outbox()
            except Exception:  # the database is locked or gone: try again at the next round
                log.exception("draining the notification outbox failed", extra={"event": "notify.failed"})
                self._store_error("outbox")
            self._outbox_wake.wait(self.config.poll_seconds)
            self._outbox_wake.clear()

    OUTBOX_BATCH = 10  # rows leased per round: the lease must outlast this many POSTs that time out

    def outbox_lease_seconds(self) -> float:
        timeout = self.notifier.config.timeout if self.notifier is not None else 0.0
        return self.config.lease_seconds + self.OUTBOX_BATCH * timeout

    def drain_outbox(self) -> int:
        """Send every due notification; delivered (or not wanted) rows are deleted. Returns how many were sent.

        The rows are leased to this sender before the POSTs (on either database), so other replicas skip them.
        """
        sent = 0
        rows = self.store.outbox_due(
            limit=self.OUTBOX_BATCH, owner=self.owner, lease_seconds=self.outbox_lease_seconds()
        )
        for i, row in enumerate(rows):
            if self._stop.is_set():
                self.store.outbox_release([r["id"] for r in rows[i:]], self.owner)  # for another replica now
                break
            if self.notifier is None or row["verdict"] not in self.notifier.config.verdicts:
                self.store.outbox_done(row["id"])  # not configured, or a verdict nobody asked to hear about
                continue
            job = Job(
                id=row["job_id"],
                registry=row["registry"],
                repository=row["repository"],
                digest=row["digest"],
                attempts=0,
            )
            result = FleetResult(fleet=row["fleet"], verdict=row["verdict"], report_json=row["report"])
            if self.notifier.send(job, result):
                self.store.outbox_done(row["id"])
                sent += 1
                continue
            if self.metrics:
                self.metrics.notify_errors.inc()
            attempts = row["attempts"] + 1
            image = f"{row['repository']}@{row['digest']}"
            if attempts >= self.config.max_attempts:
                log.warning(
                    "giving up notifying %s (fleet %s) after %d attempts",
                    image,
                    row["fleet"],
                    attempts,
                    extra={"event": "notify.gave_up", "image": image, "fleet": row["fleet"], "attempt": attempts},
                )
                self.store.outbox_done(row["id"])
            else:
                self.store.outbox_retry(
                    row["id"],
                    "the receiver refused or was unreachable",
                    backoff_delay(self.config, attempts),
                    owner=self.owner,
                )
        if len(rows) == self.OUTBOX_BATCH and not self._stop.is_set():
            self._outbox_wake.set()  # a full batch: more may be due, go again without waiting a poll
        return sent
