"""The durable job queue and result store: one state machine over SQLite or PostgreSQL.

Jobs are keyed by registry + repository@digest (UNIQUE), so redeliveries and re-tags of a digest
never queue a second check. A job moves queued -> running -> done | failed (or back to queued with
next_attempt_at in the future when the registry was unreachable). A running job carries a lease
(owner, expiry); the worker renews it while the check runs. Results are written in the same
transaction that marks the job done, and only by the lease holder of a job still `running`, so a
job is never done twice and never has two result sets. The outbox row of each result commits with
it; a sender claims outbox rows (a lease) before POSTing them.

Recovery after a crash: a process that holds the database alone (SQLite's instance lock) knows every
`running` job and claimed outbox row is an orphan, so start-up hands them back at once; without that
proof (several replicas on PostgreSQL) an orphan is taken over when its lease expires.

The SQL is written once, here; what differs between the databases is the backend's dialect
(store_dialect.py): SqliteBackend (store_sqlite.py) and PgBackend (store_pg.py). storage.open_store
picks the backend from the configured database URL.
"""

from __future__ import annotations

from collections.abc import Sequence

from .events import PushEvent
from .store_dialect import Backend, Row, Tx, marks
from .store_sqlite import SqliteBackend
from .store_types import (
    DELIVERY_MEMORY_SECONDS,
    STATES,
    EnqueueOutcome,
    FleetResult,
    Job,
    StoreBusyError,
    StoreUnavailableError,
)

__all__ = [
    "DELIVERY_MEMORY_SECONDS",
    "STATES",
    "EnqueueOutcome",
    "FleetResult",
    "Job",
    "SqlJobStore",
    "Store",
    "StoreBusyError",
    "StoreUnavailableError",
]

_FINISH = "lease_owner = NULL, lease_expires_at = NULL"  # a job leaving `running` gives its lease up
_HELD = "id = ? AND state = 'running' AND lease_owner = ?"  # only the lease holder may move a running job


class SqlJobStore:
    """The job store (storage.JobStore) over a Backend. Thread-safe as its backend: every write is one
    transaction, every method may be called from any thread."""

    def __init__(self, backend: Backend):
        self._backend = backend

    def ping(self) -> None:
        """Raise StoreUnavailableError unless the database answers (the readiness probe)."""
        self._backend.ping()

    def close(self) -> None:
        self._backend.close()

    # -- single-instance ownership --------------------------------------------------------------

    def acquire_instance_lock(self) -> None:
        """SQLite: exclusive ownership of the file by this process. A shared database: nothing to lock."""
        self._backend.acquire_instance_lock()

    def release_instance_lock(self) -> None:
        self._backend.release_instance_lock()

    def requeue_orphans(self, now: float | None = None) -> int:
        """Put jobs left `running` by a dead process back in the queue, and its claimed outbox rows.

        Only a process that holds the database alone can know they are orphans; on a shared database
        this is 0 and claim() / outbox_due() take them over when their leases expire."""
        if self._backend.shared:
            return 0
        if not self._backend.holds_instance_lock():
            raise RuntimeError("requeue_orphans needs the instance lock")
        with self._backend.write() as tx:
            now = tx.now(now)
            tx.run(
                "UPDATE outbox SET next_attempt_at = ?, claimed_by = NULL, lease_until = NULL "
                "WHERE claimed_by IS NOT NULL",
                (now,),
            )
            return tx.run(
                f"UPDATE jobs SET state = 'queued', {_FINISH}, next_attempt_at = ?, updated_at = ? "
                "WHERE state = 'running'",
                (now, now),
            )

    # -- the queue ------------------------------------------------------------------------------

    def enqueue(self, registry: str, pushes: Sequence[PushEvent], now: float | None = None) -> EnqueueOutcome:
        """Record a delivery's pushes in one transaction: all of them or none.

        Safe against the same delivery arriving twice at once (two threads, or two replicas): the unique
        indexes make the second INSERT wait for the first transaction and then do nothing."""
        queued = duplicates = 0
        with self._backend.write() as tx:
            now = tx.now(now)
            for push in pushes:
                if push.event_id is not None and tx.one(
                    "SELECT 1 AS seen FROM deliveries WHERE event_id = ?", (push.event_id,)
                ):
                    duplicates += 1  # the sender redelivered an event we already have
                    continue
                inserted = tx.run(
                    "INSERT INTO jobs (registry, repository, digest, state, attempts, next_attempt_at, "
                    "created_at, updated_at) VALUES (?, ?, ?, 'queued', 0, ?, ?, ?) "
                    "ON CONFLICT (registry, repository, digest) DO NOTHING",
                    (registry, push.repository, push.digest, now, now, now),
                )
                job = tx.one(
                    "SELECT id FROM jobs WHERE registry = ? AND repository = ? AND digest = ?",
                    (registry, push.repository, push.digest),
                )
                assert job is not None  # inserted above, or there already
                job_id = job["id"]
                if push.event_id is not None and not tx.run(
                    "INSERT INTO deliveries (event_id, job_id, received_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (event_id) DO NOTHING",
                    (push.event_id, job_id, now),
                ):
                    duplicates += 1  # the same event committed by another replica meanwhile
                    continue
                if inserted:
                    queued += 1
                else:
                    # a new push of a digest whose check gave up earlier is a reason to try again
                    retried = tx.run(
                        "UPDATE jobs SET state = 'queued', attempts = 0, next_attempt_at = ?, updated_at = ? "
                        "WHERE id = ? AND state = 'failed'",
                        (now, now, job_id),
                    )
                    queued += retried
                    duplicates += 1 - retried
                if push.tag:
                    tx.run(
                        "INSERT INTO job_tags (job_id, tag, seen_at) VALUES (?, ?, ?) "
                        "ON CONFLICT (job_id, tag) DO NOTHING",
                        (job_id, push.tag, now),
                    )
        return EnqueueOutcome(queued=queued, duplicates=duplicates)

    def claim(self, owner: str, lease_seconds: float, max_attempts: int, now: float | None = None) -> Job | None:
        """Take the next due job (or one whose lease expired) and lease it to `owner`."""
        with self._backend.write() as tx:
            now = tx.now(now)
            while True:
                row = tx.one(
                    "SELECT id, registry, repository, digest, attempts FROM jobs "
                    "WHERE (state = 'queued' AND next_attempt_at <= ?) "
                    "OR (state = 'running' AND lease_expires_at < ?) "
                    "ORDER BY next_attempt_at, id LIMIT 1" + tx.dialect.skip_locked,
                    (now, now),
                )
                if row is None:
                    return None
                if row["attempts"] >= max_attempts:
                    # its workers keep dying (or it is out of retries): stop before it takes more down
                    tx.run(
                        f"UPDATE jobs SET state = 'failed', {_FINISH}, finished_at = ?, updated_at = ?, "
                        "last_error = COALESCE(last_error, ?) WHERE id = ?",
                        (now, now, f"gave up after {row['attempts']} attempts", row["id"]),
                    )
                    continue
                tx.run(
                    "UPDATE jobs SET state = 'running', lease_owner = ?, lease_expires_at = ?, "
                    "attempts = attempts + 1, updated_at = ? WHERE id = ?",
                    (owner, now + lease_seconds, now, row["id"]),
                )
                return Job(
                    id=row["id"],
                    registry=row["registry"],
                    repository=row["repository"],
                    digest=row["digest"],
                    attempts=row["attempts"] + 1,
                )

    def renew(self, owner: str, job_ids: Sequence[int], lease_seconds: float, now: float | None = None) -> None:
        if not job_ids:
            return
        with self._backend.write() as tx:
            now = tx.now(now)
            tx.run(
                "UPDATE jobs SET lease_expires_at = ? WHERE lease_owner = ? AND state = 'running' "
                f"AND id IN ({marks(job_ids)})",
                (now + lease_seconds, owner, *job_ids),
            )

    def complete(self, job: Job, owner: str, results: Sequence[FleetResult], now: float | None = None) -> bool:
        """Store the results and mark the job done, atomically; False if the lease was lost."""
        with self._backend.write() as tx:
            now = tx.now(now)
            # PostgreSQL: the row lock this UPDATE takes serialises a late holder against the one that took over
            if (
                tx.run(
                    f"UPDATE jobs SET state = 'done', {_FINISH}, last_error = NULL, finished_at = ?, updated_at = ? "
                    f"WHERE {_HELD}",
                    (now, now, job.id, owner),
                )
                != 1
            ):
                return False  # another worker took it over; its results win, ours are dropped
            for r in results:
                tx.run(
                    "INSERT INTO results (job_id, fleet, digest, verdict, report, duration_seconds, checked_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (job.id, r.fleet, job.digest, r.verdict, r.report_json, r.duration_seconds, now),
                )
                # the outbox row commits with the result: a crash before the POST cannot lose it
                tx.run(
                    "INSERT INTO outbox (job_id, fleet, next_attempt_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (job_id, fleet) DO NOTHING",
                    (job.id, r.fleet, now),
                )
        return True

    def retry_later(self, job: Job, owner: str, error: str, delay: float, now: float | None = None) -> bool:
        with self._backend.write() as tx:
            now = tx.now(now)
            sql = f"UPDATE jobs SET state = 'queued', {_FINISH}, next_attempt_at = ?, last_error = ?, updated_at = ? "
            return tx.run(sql + f"WHERE {_HELD}", (now + delay, error, now, job.id, owner)) == 1

    def fail(self, job: Job, owner: str, error: str, now: float | None = None) -> bool:
        return self._finish(job, owner, "failed", error, now)

    def skip(self, job: Job, owner: str, reason: str, now: float | None = None) -> bool:
        """Finish a job that is not an image (a signature, an SBOM, a chart): done, no results, the reason
        in last_error prefixed `skipped:` so readers can tell it from a check."""
        return self._finish(job, owner, "done", "skipped: " + reason, now)

    def _finish(self, job: Job, owner: str, state: str, error: str, now: float | None) -> bool:
        with self._backend.write() as tx:
            now = tx.now(now)
            sql = f"UPDATE jobs SET state = ?, {_FINISH}, last_error = ?, finished_at = ?, updated_at = ? "
            return tx.run(sql + f"WHERE {_HELD}", (state, error, now, now, job.id, owner)) == 1

    def forget_old_deliveries(self, now: float | None = None) -> int:
        with self._backend.write() as tx:
            now = tx.now(now)
            return tx.run(
                # a failed job's ids are kept (until retention deletes the job): replaying one of its
                # captured events would otherwise queue it again, and pull the image again, every time
                "DELETE FROM deliveries WHERE received_at < ? AND job_id NOT IN "
                "(SELECT id FROM jobs WHERE state = 'failed')",
                (now - DELIVERY_MEMORY_SECONDS,),
            )

    def delete_finished_before(self, cutoff: float) -> int:
        """Retention: forget jobs done or failed before `cutoff`, with their results, tags and ids."""
        with self._backend.write() as tx:
            old = "SELECT id FROM jobs WHERE state IN ('done', 'failed') AND finished_at < ?"
            for table in ("outbox", "results", "job_tags", "deliveries"):
                tx.run(f"DELETE FROM {table} WHERE job_id IN ({old})", (cutoff,))
            return tx.run("DELETE FROM jobs WHERE state IN ('done', 'failed') AND finished_at < ?", (cutoff,))

    # -- outbox: notifications of stored results; a row is leased to one sender before its POST ------
    #
    # The claim moves next_attempt_at to the lease's end in the transaction that selected the rows (SKIP
    # LOCKED on PostgreSQL, the one IMMEDIATE writer on SQLite), so no other sender sees the row as due
    # until the holder marks it sent (deleted), gives it back with a retry time, or dies and the lease
    # runs out: one POST per result in normal operation, at least once across crashes.

    def outbox_due(
        self, limit: int = 20, now: float | None = None, owner: str = "", lease_seconds: float = 60.0
    ) -> list[Row]:
        """Claim up to `limit` due notifications for `owner` until now + lease_seconds and return them."""
        with self._backend.write() as tx:
            now = tx.now(now)
            ids = [
                r["id"]
                for r in tx.all(
                    "SELECT id FROM outbox WHERE next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?"
                    + tx.dialect.skip_locked,
                    (now, limit),
                )
            ]
            if not ids:
                return []
            tx.run(
                f"UPDATE outbox SET claimed_by = ?, lease_until = ?, next_attempt_at = ? WHERE id IN ({marks(ids)})",
                (owner or None, now + lease_seconds, now + lease_seconds, *ids),
            )
            rows = tx.all(
                "SELECT o.id, o.attempts, o.fleet, j.id AS job_id, j.registry, j.repository, j.digest, r.verdict, "
                "r.report FROM outbox o JOIN jobs j ON j.id = o.job_id "
                "JOIN results r ON r.job_id = o.job_id AND r.fleet = o.fleet "
                f"WHERE o.id IN ({marks(ids)})",
                ids,
            )
            due_order = {outbox_id: i for i, outbox_id in enumerate(ids)}  # oldest due first, as selected
            return sorted(rows, key=lambda r: due_order[r["id"]])

    def outbox_done(self, outbox_id: int) -> None:
        """Sent (or not wanted): gone, whoever holds the lease now (a second POST would be a repeat)."""
        with self._backend.write() as tx:
            tx.run("DELETE FROM outbox WHERE id = ?", (outbox_id,))

    def outbox_retry(
        self, outbox_id: int, error: str, delay: float, now: float | None = None, owner: str | None = None
    ) -> None:
        """Give a claimed row back, due again after `delay` (unless another sender took it over)."""
        with self._backend.write() as tx:
            now = tx.now(now)
            tx.run(
                "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ?, "
                "claimed_by = NULL, lease_until = NULL WHERE id = ? AND (CAST(? AS TEXT) IS NULL OR claimed_by = ?)",
                (now + delay, error, outbox_id, owner, owner),
            )

    def outbox_release(self, outbox_ids: Sequence[int], owner: str, now: float | None = None) -> None:
        """Hand back claimed rows not yet tried (the sender is stopping): due at once, for any sender."""
        if not outbox_ids:
            return
        with self._backend.write() as tx:
            now = tx.now(now)
            tx.run(
                "UPDATE outbox SET next_attempt_at = ?, claimed_by = NULL, lease_until = NULL "
                f"WHERE id IN ({marks(outbox_ids)}) AND claimed_by = ?",
                (now, *outbox_ids, owner),
            )

    # -- reads ----------------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        with self._backend.read() as tx:
            found = {r["state"]: r["n"] for r in tx.all("SELECT state, COUNT(*) AS n FROM jobs GROUP BY state")}
        return {s: int(found.get(s, 0)) for s in STATES}

    def jobs_for_digest(self, digest: str) -> list[Row]:
        with self._backend.read() as tx:
            return [_job_summary(tx, r) for r in tx.all("SELECT * FROM jobs WHERE digest = ? ORDER BY id", (digest,))]

    def results_for_job(self, job_id: int) -> list[Row]:
        with self._backend.read() as tx:
            return tx.all(
                "SELECT fleet, verdict, report, duration_seconds, checked_at FROM results "
                "WHERE job_id = ? ORDER BY fleet",
                (job_id,),
            )

    def history(self, repository: str, limit: int = 100) -> list[Row]:
        with self._backend.read() as tx:
            rows = tx.all(
                "SELECT * FROM jobs WHERE repository = ? ORDER BY created_at DESC, id DESC LIMIT ?", (repository, limit)
            )
            return [_job_summary(tx, r) for r in rows]

    def recent(self, limit: int = 50) -> list[Row]:
        with self._backend.read() as tx:
            rows = tx.all("SELECT * FROM jobs ORDER BY updated_at DESC, id DESC LIMIT ?", (limit,))
            return [_job_summary(tx, r) for r in rows]


def _job_summary(tx: Tx, row: Row) -> Row:
    tags = [r["tag"] for r in tx.all("SELECT tag FROM job_tags WHERE job_id = ? ORDER BY seen_at, tag", (row["id"],))]
    verdicts = {
        r["fleet"]: r["verdict"]
        for r in tx.all("SELECT fleet, verdict FROM results WHERE job_id = ? ORDER BY fleet", (row["id"],))
    }
    keys = ("id", "registry", "repository", "digest", "state", "attempts", "last_error", "created_at", "finished_at")
    return {**{k: row[k] for k in keys}, "tags": tags, "verdicts": verdicts}


class Store(SqlJobStore):
    """The job store on an embedded SQLite file (one `imgcheck serve` per file)."""

    def __init__(self, path: str, busy_timeout: float = 10.0):
        super().__init__(SqliteBackend(path, busy_timeout))
        self.path = path
