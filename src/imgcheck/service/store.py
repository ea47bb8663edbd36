"""The durable job queue and result store (embedded SQLite).

Jobs are keyed by registry + repository@digest (UNIQUE), so redeliveries and re-tags of a digest
never queue a second check. A job moves queued -> running -> done | failed (or back to queued with
next_attempt_at in the future when the registry was unreachable). A running job carries a lease
(owner, expiry); the worker renews it while the check runs. Results are written in the same
transaction that marks the job done, and only by the lease holder of a job still `running`, so a
job is never done twice and never has two result sets.

Recovery after a crash: a single `imgcheck serve` owns a SQLite file through an exclusive lock
file (flock, released by the kernel when the process dies). Holding it proves that every `running`
job is an orphan of a dead process, so start-up puts them back in the queue at once; without that
proof (several replicas on PostgreSQL) an orphan is taken over when its lease expires.

PostgreSQL (several replicas): store_pg.PgStore implements the same methods; storage.open_store
picks the backend from the configured database URL.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from dataclasses import dataclass

from ..errors import UnavailableError
from .events import PushEvent

SCHEMA_VERSION = 1
DELIVERY_MEMORY_SECONDS = 7 * 24 * 3600  # remember sender event ids this long to spot redeliveries

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY,
    registry TEXT NOT NULL,
    repository TEXT NOT NULL,
    digest TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL NOT NULL,
    lease_owner TEXT,
    lease_expires_at REAL,
    last_error TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    finished_at REAL,
    UNIQUE (registry, repository, digest)
);
CREATE INDEX IF NOT EXISTS jobs_due ON jobs (state, next_attempt_at);
CREATE INDEX IF NOT EXISTS jobs_digest ON jobs (digest);
CREATE INDEX IF NOT EXISTS jobs_repository ON jobs (repository, created_at);
CREATE TABLE IF NOT EXISTS job_tags (
    job_id INTEGER NOT NULL REFERENCES jobs (id),
    tag TEXT NOT NULL,
    seen_at REAL NOT NULL,
    PRIMARY KEY (job_id, tag)
);
CREATE TABLE IF NOT EXISTS deliveries (
    event_id TEXT PRIMARY KEY,
    job_id INTEGER NOT NULL REFERENCES jobs (id),
    received_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS deliveries_age ON deliveries (received_at);
CREATE TABLE IF NOT EXISTS results (
    job_id INTEGER NOT NULL REFERENCES jobs (id),
    fleet TEXT NOT NULL,
    digest TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('ok', 'warn', 'fail')),
    report TEXT NOT NULL,
    duration_seconds REAL,
    checked_at REAL NOT NULL,
    PRIMARY KEY (job_id, fleet)
);
CREATE INDEX IF NOT EXISTS results_digest ON results (digest);
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY,
    job_id INTEGER NOT NULL REFERENCES jobs (id),
    fleet TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL NOT NULL,
    last_error TEXT,
    UNIQUE (job_id, fleet)
);
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (next_attempt_at);
"""

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
    pass


class StoreUnavailableError(UnavailableError):
    """The database cannot be reached or used right now (the webhook answers 503, readiness fails)."""


class Store:
    """Thread-safe: each thread gets its own connection; every write is one transaction."""

    def __init__(self, path: str, busy_timeout: float = 10.0):
        self.path = path
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._lock_fd: int | None = None
        directory = os.path.dirname(os.path.abspath(path))
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise UnavailableError(f"{directory}: cannot create the database directory ({exc.strerror})") from None
        conn = self._conn()
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise UnavailableError(f"{path}: database schema {version} is newer than this imgcheck ({SCHEMA_VERSION})")
        conn.executescript(SCHEMA)  # idempotent (IF NOT EXISTS); executescript commits
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    # -- connections and transactions ------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(
                    self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
                )
                conn.row_factory = sqlite3.Row
                conn.execute("PRAGMA journal_mode = WAL")  # readers do not block the writer
                conn.execute("PRAGMA synchronous = FULL")  # an accepted event survives power loss
                conn.execute("PRAGMA foreign_keys = ON")
            except sqlite3.Error as exc:
                raise UnavailableError(f"{self.path}: cannot open the database ({exc})") from None
            self._local.conn = conn
        return conn

    class _Tx:
        def __init__(self, conn: sqlite3.Connection):
            self.conn = conn

        def __enter__(self):
            # IMMEDIATE takes the write lock up front: no deadlock between two read-then-write txs
            self.conn.execute("BEGIN IMMEDIATE")
            return self.conn

        def __exit__(self, exc_type, exc, tb):
            self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")
            return False

    def _write(self, conn: sqlite3.Connection | None = None) -> _Tx:
        return Store._Tx(conn or self._conn())

    def ping(self) -> None:
        """Raise StoreUnavailableError unless the database answers (the readiness probe)."""
        try:
            self._conn().execute("SELECT 1").fetchone()
        except sqlite3.Error as exc:
            raise StoreUnavailableError(f"{self.path}: {exc}") from None

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
        self.release_instance_lock()

    # -- single-instance lock -------------------------------------------------------------------

    def acquire_instance_lock(self) -> None:
        """Exclusive ownership of this database by one process (see module doc)."""
        path = self.path + ".lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreBusyError(f"{self.path}: another imgcheck serve is using this database") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd

    def release_instance_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing drops the flock
            self._lock_fd = None

    def requeue_orphans(self, now: float | None = None) -> int:
        """Put jobs left `running` by a dead process back in the queue. Only under the instance lock."""
        if self._lock_fd is None:
            raise RuntimeError("requeue_orphans needs the instance lock")
        now = time.time() if now is None else now
        with self._write() as c:
            cur = c.execute(
                "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL, "
                "next_attempt_at = ?, updated_at = ? WHERE state = 'running'",
                (now, now),
            )
            return cur.rowcount

    # -- the queue ------------------------------------------------------------------------------

    def enqueue(
        self, registry: str, pushes: tuple[PushEvent, ...] | list[PushEvent], now: float | None = None
    ) -> EnqueueOutcome:
        """Record a delivery's pushes in one transaction: all of them or none."""
        now = time.time() if now is None else now
        queued = duplicates = 0
        with self._write() as c:
            for push in pushes:
                if (
                    push.event_id is not None
                    and c.execute("SELECT 1 FROM deliveries WHERE event_id = ?", (push.event_id,)).fetchone()
                ):
                    duplicates += 1  # the sender redelivered an event we already have
                    continue
                cur = c.execute(
                    "INSERT INTO jobs (registry, repository, digest, state, attempts, next_attempt_at, "
                    "created_at, updated_at) VALUES (?, ?, ?, 'queued', 0, ?, ?, ?) "
                    "ON CONFLICT (registry, repository, digest) DO NOTHING",
                    (registry, push.repository, push.digest, now, now, now),
                )
                job_id = c.execute(
                    "SELECT id FROM jobs WHERE registry = ? AND repository = ? AND digest = ?",
                    (registry, push.repository, push.digest),
                ).fetchone()[0]
                if cur.rowcount == 1:
                    queued += 1
                else:
                    # a new push of a digest whose check gave up earlier is a reason to try again
                    retried = c.execute(
                        "UPDATE jobs SET state = 'queued', attempts = 0, next_attempt_at = ?, updated_at = ? "
                        "WHERE id = ? AND state = 'failed'",
                        (now, now, job_id),
                    ).rowcount
                    queued += retried
                    duplicates += 1 - retried
                if push.tag:
                    c.execute(
                        "INSERT INTO job_tags (job_id, tag, seen_at) VALUES (?, ?, ?) "
                        "ON CONFLICT (job_id, tag) DO NOTHING",
                        (job_id, push.tag, now),
                    )
                if push.event_id is not None:
                    c.execute(
                        "INSERT INTO deliveries (event_id, job_id, received_at) VALUES (?, ?, ?) "
                        "ON CONFLICT (event_id) DO NOTHING",
                        (push.event_id, job_id, now),
                    )
        return EnqueueOutcome(queued=queued, duplicates=duplicates)

    def claim(self, owner: str, lease_seconds: float, max_attempts: int, now: float | None = None) -> Job | None:
        """Take the next due job (or one whose lease expired) and lease it to `owner`."""
        now = time.time() if now is None else now
        with self._write() as c:
            while True:
                row = c.execute(
                    "SELECT id, registry, repository, digest, attempts FROM jobs "
                    "WHERE (state = 'queued' AND next_attempt_at <= ?) "
                    "OR (state = 'running' AND lease_expires_at < ?) "
                    "ORDER BY next_attempt_at, id LIMIT 1",
                    (now, now),
                ).fetchone()
                if row is None:
                    return None
                if row["attempts"] >= max_attempts:
                    # its workers keep dying (or it is out of retries): stop before it takes more down
                    c.execute(
                        "UPDATE jobs SET state = 'failed', lease_owner = NULL, lease_expires_at = NULL, "
                        "finished_at = ?, updated_at = ?, last_error = COALESCE(last_error, ?) "
                        "WHERE id = ?",
                        (now, now, f"gave up after {row['attempts']} attempts", row["id"]),
                    )
                    continue
                c.execute(
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

    def renew(self, owner: str, job_ids: list[int], lease_seconds: float, now: float | None = None) -> None:
        if not job_ids:
            return
        now = time.time() if now is None else now
        marks = ", ".join("?" for _ in job_ids)
        with self._write() as c:
            c.execute(
                f"UPDATE jobs SET lease_expires_at = ? WHERE lease_owner = ? AND state = 'running' AND id IN ({marks})",
                (now + lease_seconds, owner, *job_ids),
            )

    def complete(self, job: Job, owner: str, results: list[FleetResult], now: float | None = None) -> bool:
        """Store the results and mark the job done, atomically; False if the lease was lost."""
        now = time.time() if now is None else now
        with self._write() as c:
            cur = c.execute(
                "UPDATE jobs SET state = 'done', lease_owner = NULL, lease_expires_at = NULL, "
                "last_error = NULL, finished_at = ?, updated_at = ? "
                "WHERE id = ? AND state = 'running' AND lease_owner = ?",
                (now, now, job.id, owner),
            )
            if cur.rowcount != 1:
                return False  # another worker took it over; its results win, ours are dropped
            for r in results:
                c.execute(
                    "INSERT INTO results (job_id, fleet, digest, verdict, report, duration_seconds, checked_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (job.id, r.fleet, job.digest, r.verdict, r.report_json, r.duration_seconds, now),
                )
                # the outbox row commits with the result: a crash before the POST cannot lose it
                c.execute(
                    "INSERT INTO outbox (job_id, fleet, next_attempt_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (job_id, fleet) DO NOTHING",
                    (job.id, r.fleet, now),
                )
        return True

    def retry_later(self, job: Job, owner: str, error: str, delay: float, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        with self._write() as c:
            return (
                c.execute(
                    "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL, "
                    "next_attempt_at = ?, last_error = ?, updated_at = ? "
                    "WHERE id = ? AND state = 'running' AND lease_owner = ?",
                    (now + delay, error, now, job.id, owner),
                ).rowcount
                == 1
            )

    def fail(self, job: Job, owner: str, error: str, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        with self._write() as c:
            return (
                c.execute(
                    "UPDATE jobs SET state = 'failed', lease_owner = NULL, lease_expires_at = NULL, "
                    "last_error = ?, finished_at = ?, updated_at = ? "
                    "WHERE id = ? AND state = 'running' AND lease_owner = ?",
                    (error, now, now, job.id, owner),
                ).rowcount
                == 1
            )

    def skip(self, job: Job, owner: str, reason: str, now: float | None = None) -> bool:
        """Finish a job that is not an image (a signature, an SBOM, a chart): done, no results, the reason
        in last_error prefixed `skipped:` so readers can tell it from a check."""
        now = time.time() if now is None else now
        with self._write() as c:
            return (
                c.execute(
                    "UPDATE jobs SET state = 'done', lease_owner = NULL, lease_expires_at = NULL, "
                    "last_error = ?, finished_at = ?, updated_at = ? "
                    "WHERE id = ? AND state = 'running' AND lease_owner = ?",
                    ("skipped: " + reason, now, now, job.id, owner),
                ).rowcount
                == 1
            )

    def forget_old_deliveries(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        with self._write() as c:
            return c.execute(
                # a failed job's ids are kept (until retention deletes the job): replaying one of its
                # captured events would otherwise queue it again, and pull the image again, every time
                "DELETE FROM deliveries WHERE received_at < ? AND job_id NOT IN "
                "(SELECT id FROM jobs WHERE state = 'failed')",
                (now - DELIVERY_MEMORY_SECONDS,),
            ).rowcount

    # -- outbox (notifications of stored results, drained by the worker) -------------------------

    def outbox_due(
        self, limit: int = 20, now: float | None = None, owner: str = "", lease_seconds: float = 60.0
    ) -> list[dict]:
        """The due notifications. One instance, one sender thread: nothing to lease (owner is PgStore's)."""
        now = time.time() if now is None else now
        rows = (
            self._conn()
            .execute(
                "SELECT o.id, o.attempts, o.fleet, j.id AS job_id, j.registry, j.repository, j.digest, r.verdict, "
                "r.report FROM outbox o JOIN jobs j ON j.id = o.job_id "
                "JOIN results r ON r.job_id = o.job_id AND r.fleet = o.fleet "
                "WHERE o.next_attempt_at <= ? ORDER BY o.next_attempt_at, o.id LIMIT ?",
                (now, limit),
            )
            .fetchall()
        )
        return [dict(r) for r in rows]

    def outbox_done(self, outbox_id: int) -> None:
        with self._write() as c:
            c.execute("DELETE FROM outbox WHERE id = ?", (outbox_id,))

    def outbox_retry(
        self, outbox_id: int, error: str, delay: float, now: float | None = None, owner: str | None = None
    ) -> None:
        now = time.time() if now is None else now
        with self._write() as c:
            c.execute(
                "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE id = ?",
                (now + delay, error, outbox_id),
            )

    def outbox_release(self, outbox_ids: list[int], owner: str, now: float | None = None) -> None:
        """Nothing was claimed (see outbox_due)."""

    def delete_finished_before(self, cutoff: float) -> int:
        """Retention: forget jobs done or failed before `cutoff`, with their results, tags and ids."""
        with self._write() as c:
            old = "SELECT id FROM jobs WHERE state IN ('done', 'failed') AND finished_at < ?"
            for table in ("outbox", "results", "job_tags", "deliveries"):
                c.execute(f"DELETE FROM {table} WHERE job_id IN ({old})", (cutoff,))
            return c.execute(
                "DELETE FROM jobs WHERE state IN ('done', 'failed') AND finished_at < ?", (cutoff,)
            ).rowcount

    # -- reads ----------------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        rows = self._conn().execute("SELECT state, COUNT(*) AS n FROM jobs GROUP BY state").fetchall()
        found = {r["state"]: r["n"] for r in rows}
        return {s: found.get(s, 0) for s in STATES}

    def jobs_for_digest(self, digest: str) -> list[dict]:
        rows = self._conn().execute("SELECT * FROM jobs WHERE digest = ? ORDER BY id", (digest,)).fetchall()
        return [self._job_summary(r) for r in rows]

    def results_for_job(self, job_id: int) -> list[sqlite3.Row]:
        return (
            self._conn()
            .execute(
                "SELECT fleet, verdict, report, duration_seconds, checked_at FROM results "
                "WHERE job_id = ? ORDER BY fleet",
                (job_id,),
            )
            .fetchall()
        )

    def history(self, repository: str, limit: int = 100) -> list[dict]:
        rows = (
            self._conn()
            .execute(
                "SELECT * FROM jobs WHERE repository = ? ORDER BY created_at DESC, id DESC LIMIT ?", (repository, limit)
            )
            .fetchall()
        )
        return [self._job_summary(r) for r in rows]

    def recent(self, limit: int = 50) -> list[dict]:
        rows = self._conn().execute("SELECT * FROM jobs ORDER BY updated_at DESC, id DESC LIMIT ?", (limit,)).fetchall()
        return [self._job_summary(r) for r in rows]

    def _job_summary(self, row: sqlite3.Row) -> dict:
        conn = self._conn()
        tags = [
            r[0] for r in conn.execute("SELECT tag FROM job_tags WHERE job_id = ? ORDER BY seen_at, tag", (row["id"],))
        ]
        verdicts = {
            r[0]: r[1]
            for r in conn.execute("SELECT fleet, verdict FROM results WHERE job_id = ? ORDER BY fleet", (row["id"],))
        }
        return {
            "id": row["id"],
            "registry": row["registry"],
            "repository": row["repository"],
            "digest": row["digest"],
            "tags": tags,
            "state": row["state"],
            "attempts": row["attempts"],
            "last_error": row["last_error"],
            "created_at": row["created_at"],
            "finished_at": row["finished_at"],
            "verdicts": verdicts,
        }
