"""The job queue and result store on PostgreSQL, shared by several `imgcheck serve` replicas.

Same contract as the SQLite Store (store.py), with what several writers need:
- claim() selects with `FOR UPDATE SKIP LOCKED`, so concurrent replicas never take the same row and
  never wait on each other's claims (https://www.postgresql.org/docs/15/sql-select.html#SQL-FOR-UPDATE-SHARE).
- No replica can prove another is dead, so there is no start-up requeue: a job left `running` by a
  killed replica is taken over by claim() once its lease expires (the holder renews it while alive).
- Time comes from the database clock (clock_timestamp()), so replicas with skewed clocks still agree
  on when a lease expired. Tests may pass `now` explicitly, as with SQLite.
- Migrations run at start inside one transaction under an advisory lock, so replicas starting
  together apply each step once; `schema_version` records the steps applied.
Connections come from a psycopg_pool pool, checked before use so a restarted server is reconnected.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

from ..errors import BadInputError
from .events import PushEvent
from .store import DELIVERY_MEMORY_SECONDS, STATES, EnqueueOutcome, FleetResult, Job, StoreUnavailableError

try:  # the `serve-pg` extra
    import psycopg
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    psycopg = None
    _IMPORT_ERROR = exc.name
else:
    _IMPORT_ERROR = None

MIGRATION_LOCK = 0x1A6C4EC  # pg_advisory_xact_lock key: "imgcheck" schema migrations

# Each step runs once, in order; never edit a released step, append a new one.
MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        """
CREATE TABLE jobs (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    registry TEXT NOT NULL,
    repository TEXT NOT NULL,
    digest TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at DOUBLE PRECISION NOT NULL,
    lease_owner TEXT,
    lease_expires_at DOUBLE PRECISION,
    last_error TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    finished_at DOUBLE PRECISION,
    UNIQUE (registry, repository, digest)
);
CREATE INDEX jobs_due ON jobs (state, next_attempt_at);
CREATE INDEX jobs_lease ON jobs (lease_expires_at) WHERE state = 'running';
CREATE INDEX jobs_digest ON jobs (digest);
CREATE INDEX jobs_repository ON jobs (repository, created_at);
CREATE TABLE job_tags (
    job_id BIGINT NOT NULL REFERENCES jobs (id),
    tag TEXT NOT NULL,
    seen_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (job_id, tag)
);
CREATE TABLE deliveries (
    event_id TEXT PRIMARY KEY,
    job_id BIGINT NOT NULL REFERENCES jobs (id),
    received_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX deliveries_age ON deliveries (received_at);
CREATE TABLE results (
    job_id BIGINT NOT NULL REFERENCES jobs (id),
    fleet TEXT NOT NULL,
    digest TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('ok', 'warn', 'fail')),
    report TEXT NOT NULL,
    duration_seconds DOUBLE PRECISION,
    checked_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (job_id, fleet)
);
CREATE INDEX results_digest ON results (digest);
""",
    ),
    # notifications of stored results, committed with them and drained by the service (as store.py's outbox)
    (
        2,
        """
CREATE TABLE outbox (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id BIGINT NOT NULL REFERENCES jobs (id),
    fleet TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at DOUBLE PRECISION NOT NULL,
    last_error TEXT,
    UNIQUE (job_id, fleet)
);
CREATE INDEX outbox_due ON outbox (next_attempt_at);
""",
    ),
    # outbox leases: a replica claims rows before the POST (expand only: nullable columns, so a pod of the
    # previous release keeps running against this schema; it honours the lease through next_attempt_at)
    (
        3,
        """
ALTER TABLE outbox ADD COLUMN claimed_by TEXT;
ALTER TABLE outbox ADD COLUMN lease_until DOUBLE PRECISION;
""",
    ),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]

# Expand/contract: for each step, the oldest schema version whose code still runs correctly once the step
# is applied (recorded in schema_version.compatible_from). An expand step (new table, nullable column,
# index) keeps the previous release working: compatible_from = its predecessor, so during a rolling
# upgrade an old pod that restarts after a new one migrated still starts. A contract step (drop, rename,
# NOT NULL) ships only in a release after the one that stopped using the thing, and names that release.
# Steps 1-2 predate the column: NULL, i.e. compatible with nothing older.
COMPATIBLE_FROM: dict[int, int] = {3: 2}

_NOW = "SELECT extract(epoch FROM clock_timestamp())::double precision AS now"


def _redact(url: str) -> str:
    """The URL for messages, without its password."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


class PgStore:
    """Thread-safe: every call borrows a pooled connection; every write is one transaction."""

    # how long an operation waits for a connection: a webhook sender times out after a few seconds
    # (distribution's endpoint `timeout`), so a 503 it can retry beats an answer it never reads
    WAIT_SECONDS = 4.0

    def __init__(self, url: str, pool_size: int = 8, connect_timeout: float = 10.0):
        if psycopg is None:
            raise BadInputError(
                f"a postgresql:// database_url needs the 'serve-pg' extra: "
                f"pip install 'imgcheck[serve-pg]' ({_IMPORT_ERROR} is missing)"
            )
        self.url = url
        self.where = _redact(url)
        self.path = None  # no local file (the SQLite store's attribute)
        try:
            # one direct attempt first: a clear one-line error, without the pool's retry warnings
            psycopg.connect(url, connect_timeout=int(max(connect_timeout, 1))).close()
            self._pool = ConnectionPool(
                url,
                min_size=1,
                max_size=max(pool_size, 2),
                open=False,
                kwargs={"autocommit": True, "row_factory": dict_row, "connect_timeout": int(max(connect_timeout, 1))},
                check=ConnectionPool.check_connection,
                timeout=self.WAIT_SECONDS,
                name="imgcheck",
            )
            self._pool.open(wait=True, timeout=connect_timeout)
        except (psycopg.Error, PoolTimeout) as exc:
            self._close_pool()
            # the first line here; the whole of psycopg's message (DETAIL, HINT) stays as the cause for --debug
            raise StoreUnavailableError(f"{self.where}: cannot connect to PostgreSQL ({_first_line(exc)})") from exc
        self.migrate()

    def _close_pool(self) -> None:
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.close()

    # -- connections and transactions ------------------------------------------------------------

    @contextmanager
    def _tx(self, timeout: float | None = None):
        """One transaction on a pooled connection; database failures become StoreUnavailableError."""
        try:
            with self._pool.connection(timeout=timeout) as conn, conn.transaction():
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as exc:
            raise StoreUnavailableError(f"{self.where}: {_first_line(exc)}") from exc  # all of it as the cause

    @staticmethod
    def _now(conn, now: float | None) -> float:
        return now if now is not None else conn.execute(_NOW).fetchone()["now"]

    def close(self) -> None:
        self._close_pool()

    def ping(self) -> None:
        """Raise StoreUnavailableError unless the database answers (the readiness probe)."""
        with self._tx(timeout=3.0) as c:  # answer within the probe's timeout
            c.execute("SELECT 1")

    # -- migrations -----------------------------------------------------------------------------

    def migrate(self) -> int:
        """Apply the steps not yet applied; returns how many ran. Safe to run from every replica."""
        with self._tx() as c:
            c.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            c.execute(
                "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
                "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            c.execute("ALTER TABLE schema_version ADD COLUMN IF NOT EXISTS compatible_from INTEGER")
            current = c.execute("SELECT COALESCE(MAX(version), 0) AS v FROM schema_version").fetchone()["v"]
            if current > SCHEMA_VERSION:
                # newer steps applied by a newer release: run only if every one of them was an expand step
                # that still serves this code (a pod of the old release restarting mid-rollout)
                newer = c.execute(
                    "SELECT version, compatible_from FROM schema_version WHERE version > %s ORDER BY version",
                    (SCHEMA_VERSION,),
                ).fetchall()
                breaking = [
                    r["version"] for r in newer if r["compatible_from"] is None or r["compatible_from"] > SCHEMA_VERSION
                ]
                if breaking:
                    raise StoreUnavailableError(
                        f"{self.where}: database schema {current} is newer than this imgcheck ({SCHEMA_VERSION}) "
                        f"and step {breaking[0]} does not keep it working; run the newer release"
                    )
                return 0
            ran = 0
            for version, sql in MIGRATIONS:
                if version > current:
                    c.execute(sql)
                    c.execute(
                        "INSERT INTO schema_version (version, compatible_from) VALUES (%s, %s)",
                        (version, COMPATIBLE_FROM.get(version)),
                    )
                    ran += 1
            return ran

    # -- the SQLite store's single-instance hooks -----------------------------------------------

    def acquire_instance_lock(self) -> None:
        """Nothing to lock: replicas share the database by design (orphans are recovered by lease)."""

    def release_instance_lock(self) -> None:
        pass

    def requeue_orphans(self, now: float | None = None) -> int:
        return 0  # no replica can prove another is dead; claim() takes over expired leases instead

    # -- the queue ------------------------------------------------------------------------------

    def enqueue(
        self, registry: str, pushes: tuple[PushEvent, ...] | list[PushEvent], now: float | None = None
    ) -> EnqueueOutcome:
        """Record a delivery's pushes in one transaction: all of them or none.

        Safe against the same delivery arriving at two replicas at once: the unique indexes make the
        second INSERT wait for the first transaction and then do nothing.
        """
        queued = duplicates = 0
        with self._tx() as c:
            now = self._now(c, now)
            for push in pushes:
                if (
                    push.event_id is not None
                    and c.execute("SELECT 1 FROM deliveries WHERE event_id = %s", (push.event_id,)).fetchone()
                ):
                    duplicates += 1
                    continue
                inserted = c.execute(
                    "INSERT INTO jobs (registry, repository, digest, state, attempts, next_attempt_at, "
                    "created_at, updated_at) VALUES (%s, %s, %s, 'queued', 0, %s, %s, %s) "
                    "ON CONFLICT (registry, repository, digest) DO NOTHING RETURNING id",
                    (registry, push.repository, push.digest, now, now, now),
                ).fetchone()
                if inserted is not None:
                    job_id = inserted["id"]
                else:
                    job_id = c.execute(
                        "SELECT id FROM jobs WHERE registry = %s AND repository = %s AND digest = %s",
                        (registry, push.repository, push.digest),
                    ).fetchone()["id"]
                if (
                    push.event_id is not None
                    and c.execute(
                        "INSERT INTO deliveries (event_id, job_id, received_at) VALUES (%s, %s, %s) "
                        "ON CONFLICT (event_id) DO NOTHING RETURNING event_id",
                        (push.event_id, job_id, now),
                    ).fetchone()
                    is None
                ):
                    duplicates += 1  # the same event committed by another replica meanwhile
                    continue
                if inserted is not None:
                    queued += 1
                else:
                    # a new push of a digest whose check gave up earlier is a reason to try again
                    retried = c.execute(
                        "UPDATE jobs SET state = 'queued', attempts = 0, next_attempt_at = %s, updated_at = %s "
                        "WHERE id = %s AND state = 'failed'",
                        (now, now, job_id),
                    ).rowcount
                    queued += retried
                    duplicates += 1 - retried
                if push.tag:
                    c.execute(
                        "INSERT INTO job_tags (job_id, tag, seen_at) VALUES (%s, %s, %s) "
                        "ON CONFLICT (job_id, tag) DO NOTHING",
                        (job_id, push.tag, now),
                    )
        return EnqueueOutcome(queued=queued, duplicates=duplicates)

    def claim(self, owner: str, lease_seconds: float, max_attempts: int, now: float | None = None) -> Job | None:
        """Take the next due job (or one whose lease expired) and lease it to `owner`."""
        with self._tx() as c:
            now = self._now(c, now)
            while True:
                row = c.execute(
                    "SELECT id, registry, repository, digest, attempts FROM jobs "
                    "WHERE (state = 'queued' AND next_attempt_at <= %s) "
                    "OR (state = 'running' AND lease_expires_at < %s) "
                    "ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED",
                    (now, now),
                ).fetchone()
                if row is None:
                    return None
                if row["attempts"] >= max_attempts:
                    # its workers keep dying (or it is out of retries): stop before it takes more down
                    c.execute(
                        "UPDATE jobs SET state = 'failed', lease_owner = NULL, lease_expires_at = NULL, "
                        "finished_at = %s, updated_at = %s, last_error = COALESCE(last_error, %s) "
                        "WHERE id = %s",
                        (now, now, f"gave up after {row['attempts']} attempts", row["id"]),
                    )
                    continue
                c.execute(
                    "UPDATE jobs SET state = 'running', lease_owner = %s, lease_expires_at = %s, "
                    "attempts = attempts + 1, updated_at = %s WHERE id = %s",
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
        with self._tx() as c:
            now = self._now(c, now)
            c.execute(
                "UPDATE jobs SET lease_expires_at = %s WHERE lease_owner = %s AND state = 'running' AND id = ANY(%s)",
                (now + lease_seconds, owner, list(job_ids)),
            )

    def complete(self, job: Job, owner: str, results: list[FleetResult], now: float | None = None) -> bool:
        """Store the results and mark the job done, atomically; False if the lease was lost."""
        with self._tx() as c:
            now = self._now(c, now)
            # the row lock taken by this UPDATE serialises a late holder against the one that took over
            cur = c.execute(
                "UPDATE jobs SET state = 'done', lease_owner = NULL, lease_expires_at = NULL, "
                "last_error = NULL, finished_at = %s, updated_at = %s "
                "WHERE id = %s AND state = 'running' AND lease_owner = %s",
                (now, now, job.id, owner),
            )
            if cur.rowcount != 1:
                return False
            with c.cursor() as cur:
                cur.executemany(
                    "INSERT INTO results (job_id, fleet, digest, verdict, report, duration_seconds, checked_at) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    [(job.id, r.fleet, job.digest, r.verdict, r.report_json, r.duration_seconds, now) for r in results],
                )
                # the outbox row commits with the result: a crash before the POST cannot lose it
                cur.executemany(
                    "INSERT INTO outbox (job_id, fleet, next_attempt_at) VALUES (%s, %s, %s) "
                    "ON CONFLICT (job_id, fleet) DO NOTHING",
                    [(job.id, r.fleet, now) for r in results],
                )
        return True

    def retry_later(self, job: Job, owner: str, error: str, delay: float, now: float | None = None) -> bool:
        with self._tx() as c:
            now = self._now(c, now)
            return (
                c.execute(
                    "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL, "
                    "next_attempt_at = %s, last_error = %s, updated_at = %s "
                    "WHERE id = %s AND state = 'running' AND lease_owner = %s",
                    (now + delay, error, now, job.id, owner),
                ).rowcount
                == 1
            )

    def fail(self, job: Job, owner: str, error: str, now: float | None = None) -> bool:
        with self._tx() as c:
            now = self._now(c, now)
            return (
                c.execute(
                    "UPDATE jobs SET state = 'failed', lease_owner = NULL, lease_expires_at = NULL, "
                    "last_error = %s, finished_at = %s, updated_at = %s "
                    "WHERE id = %s AND state = 'running' AND lease_owner = %s",
                    (error, now, now, job.id, owner),
                ).rowcount
                == 1
            )

    def skip(self, job: Job, owner: str, reason: str, now: float | None = None) -> bool:
        """Finish a job that is not an image: done, no results, `skipped: <reason>` in last_error."""
        with self._tx() as c:
            now = self._now(c, now)
            return (
                c.execute(
                    "UPDATE jobs SET state = 'done', lease_owner = NULL, lease_expires_at = NULL, "
                    "last_error = %s, finished_at = %s, updated_at = %s "
                    "WHERE id = %s AND state = 'running' AND lease_owner = %s",
                    ("skipped: " + reason, now, now, job.id, owner),
                ).rowcount
                == 1
            )

    # -- outbox: every replica drains it; a row is leased to one replica before its POST -------------
    #
    # The claim moves next_attempt_at to the lease's end in the same transaction as the SELECT ... SKIP
    # LOCKED, so after the commit no other replica sees the row as due until the holder marks it sent
    # (deleted), gives it back with a retry time, or dies and the lease runs out: one POST per result in
    # normal operation, at least once across crashes.

    def outbox_due(
        self, limit: int = 20, now: float | None = None, owner: str = "", lease_seconds: float = 60.0
    ) -> list[dict]:
        """Claim up to `limit` due notifications for `owner` until now + lease_seconds and return them."""
        with self._tx() as c:
            now = self._now(c, now)
            claimed = c.execute(
                "UPDATE outbox SET claimed_by = %s, lease_until = %s, next_attempt_at = %s WHERE id IN ("
                "SELECT id FROM outbox WHERE next_attempt_at <= %s ORDER BY next_attempt_at, id LIMIT %s "
                "FOR UPDATE SKIP LOCKED) RETURNING id",
                (owner or None, now + lease_seconds, now + lease_seconds, now, limit),
            ).fetchall()
            if not claimed:
                return []
            rows = c.execute(
                "SELECT o.id, o.attempts, o.fleet, j.id AS job_id, j.registry, j.repository, j.digest, r.verdict, "
                "r.report FROM outbox o JOIN jobs j ON j.id = o.job_id "
                "JOIN results r ON r.job_id = o.job_id AND r.fleet = o.fleet "
                "WHERE o.id = ANY(%s) ORDER BY o.id",
                ([r["id"] for r in claimed],),
            ).fetchall()
            return [dict(r) for r in rows]

    def outbox_done(self, outbox_id: int) -> None:
        """Sent (or not wanted): gone, whoever holds the lease now (a second POST would be a repeat)."""
        with self._tx() as c:
            c.execute("DELETE FROM outbox WHERE id = %s", (outbox_id,))

    def outbox_retry(
        self, outbox_id: int, error: str, delay: float, now: float | None = None, owner: str | None = None
    ) -> None:
        """Give a claimed row back, due again after `delay` (unless another replica took it over)."""
        with self._tx() as c:
            now = self._now(c, now)
            c.execute(
                "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = %s, last_error = %s, "
                "claimed_by = NULL, lease_until = NULL WHERE id = %s AND (%s::text IS NULL OR claimed_by = %s)",
                (now + delay, error, outbox_id, owner, owner),
            )

    def outbox_release(self, outbox_ids: list[int], owner: str, now: float | None = None) -> None:
        """Hand back claimed rows not yet tried (the replica is stopping): due at once, for any replica."""
        if not outbox_ids:
            return
        with self._tx() as c:
            now = self._now(c, now)
            c.execute(
                "UPDATE outbox SET next_attempt_at = %s, claimed_by = NULL, lease_until = NULL "
                "WHERE id = ANY(%s) AND claimed_by = %s",
                (now, list(outbox_ids), owner),
            )

    def delete_finished_before(self, cutoff: float) -> int:
        """Retention: forget jobs done or failed before `cutoff`, with their results, tags and ids."""
        with self._tx() as c:
            old = "SELECT id FROM jobs WHERE state IN ('done', 'failed') AND finished_at < %s"
            for table in ("outbox", "results", "job_tags", "deliveries"):
                c.execute(f"DELETE FROM {table} WHERE job_id IN ({old})", (cutoff,))
            return c.execute(
                "DELETE FROM jobs WHERE state IN ('done', 'failed') AND finished_at < %s", (cutoff,)
            ).rowcount

    def forget_old_deliveries(self, now: float | None = None) -> int:
        with self._tx() as c:
            now = self._now(c, now)
            return c.execute(
                # a failed job's ids are kept (until retention deletes the job): replaying one of its
                # captured events would otherwise queue it again, and pull the image again, every time
                "DELETE FROM deliveries WHERE received_at < %s AND job_id NOT IN "
                "(SELECT id FROM jobs WHERE state = 'failed')",
                (now - DELIVERY_MEMORY_SECONDS,),
            ).rowcount

    # -- reads ----------------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        with self._tx() as c:
            rows = c.execute("SELECT state, COUNT(*) AS n FROM jobs GROUP BY state").fetchall()
        found = {r["state"]: r["n"] for r in rows}
        return {s: found.get(s, 0) for s in STATES}

    def jobs_for_digest(self, digest: str) -> list[dict]:
        with self._tx() as c:
            rows = c.execute("SELECT * FROM jobs WHERE digest = %s ORDER BY id", (digest,)).fetchall()
            return [self._job_summary(c, r) for r in rows]

    def results_for_job(self, job_id: int) -> list[dict]:
        with self._tx() as c:
            return c.execute(
                "SELECT fleet, verdict, report, duration_seconds, checked_at FROM results "
                "WHERE job_id = %s ORDER BY fleet",
                (job_id,),
            ).fetchall()

    def history(self, repository: str, limit: int = 100) -> list[dict]:
        with self._tx() as c:
            rows = c.execute(
                "SELECT * FROM jobs WHERE repository = %s ORDER BY created_at DESC, id DESC LIMIT %s",
                (repository, limit),
            ).fetchall()
            return [self._job_summary(c, r) for r in rows]

    def recent(self, limit: int = 50) -> list[dict]:
        with self._tx() as c:
            rows = c.execute("SELECT * FROM jobs ORDER BY updated_at DESC, id DESC LIMIT %s", (limit,)).fetchall()
            return [self._job_summary(c, r) for r in rows]

    @staticmethod
    def _job_summary(c, row: dict) -> dict:
        tags = [
            r["tag"]
            for r in c.execute("SELECT tag FROM job_tags WHERE job_id = %s ORDER BY seen_at, tag", (row["id"],))
        ]
        verdicts = {
            r["fleet"]: r["verdict"]
            for r in c.execute("SELECT fleet, verdict FROM results WHERE job_id = %s ORDER BY fleet", (row["id"],))
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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or exc.__class__.__name__
    return text.splitlines()[0]
