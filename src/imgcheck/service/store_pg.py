"""PostgreSQL under the job store (store.SqlJobStore), shared by several `imgcheck serve` replicas.

The state machine is store.py's; what several writers need comes from the POSTGRES dialect and here:
- claims select with `FOR UPDATE SKIP LOCKED`, so concurrent replicas never take the same row and
  never wait on each other's claims (https://www.postgresql.org/docs/15/sql-select.html#SQL-FOR-UPDATE-SHARE).
- No replica can prove another is dead (`shared`), so there is no start-up requeue: a job left `running`
  by a killed replica is taken over by claim() once its lease expires (the holder renews it while alive).
- Time comes from the database clock (clock_timestamp()), so replicas with skewed clocks still agree
  on when a lease expired. Tests may pass `now` explicitly, as with SQLite.
- Migrations run at start inside one transaction under an advisory lock, so replicas starting
  together apply each step once; `schema_version` records the steps applied.
Connections come from a psycopg_pool pool, checked before use so a restarted server is reconnected.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import BadInputError
from .store import SqlJobStore
from .store_dialect import POSTGRES, Tx
from .store_types import StoreUnavailableError

try:  # the `serve-pg` extra
    import psycopg
    from psycopg.rows import DictRow, dict_row
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    psycopg = None  # type: ignore[assignment]  # the extra is missing: PgBackend says so in one line
    _IMPORT_ERROR: str | None = exc.name
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


def _redact(url: str) -> str:
    """The URL for messages, without its password."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


class PgBackend:
    """Thread-safe: every call borrows a pooled connection; every call is one transaction."""

    dialect = POSTGRES
    shared = True  # replicas share the database by design (orphans are recovered by lease)

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
        self._pool: ConnectionPool[psycopg.Connection[DictRow]] | None = None
        try:
            # one direct attempt first: a clear one-line error, without the pool's retry warnings
            psycopg.connect(url, connect_timeout=int(max(connect_timeout, 1))).close()
            self._pool = ConnectionPool(
                url,
                connection_class=psycopg.Connection[DictRow],
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
            self.close()
            # the first line here; the whole of psycopg's message (DETAIL, HINT) stays as the cause for --debug
            raise StoreUnavailableError(f"{self.where}: cannot connect to PostgreSQL ({_first_line(exc)})") from exc
        self.migrate()

    @contextmanager
    def _pooled(self, timeout: float | None = None) -> Iterator[psycopg.Connection[DictRow]]:
        """One transaction on a pooled connection; database failures become StoreUnavailableError."""
        assert self._pool is not None, "the store is closed"
        try:
            with self._pool.connection(timeout=timeout) as conn, conn.transaction():
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as exc:
            raise StoreUnavailableError(f"{self.where}: {_first_line(exc)}") from exc  # all of it as the cause

    @contextmanager
    def write(self) -> Iterator[Tx]:
        with self._pooled() as conn:
            yield Tx(conn, self.dialect)

    read = write  # a read borrows a connection too, in a transaction of its own (one snapshot)

    def ping(self) -> None:
        """Raise StoreUnavailableError unless the database answers (the readiness probe)."""
        with self._pooled(timeout=3.0) as c:  # answer within the probe's timeout
            c.execute("SELECT 1")

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()

    def acquire_instance_lock(self) -> None:
        """Nothing to lock: replicas share the database by design (orphans are recovered by lease)."""

    def release_instance_lock(self) -> None:
        pass

    def holds_instance_lock(self) -> bool:
        return False

    # -- migrations -----------------------------------------------------------------------------

    def migrate(self) -> int:
        """Apply the steps not yet applied; returns how many ran. Safe to run from every replica."""
        with self._pooled() as c:
            c.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            c.execute(
                "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
                "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            c.execute("ALTER TABLE schema_version ADD COLUMN IF NOT EXISTS compatible_from INTEGER")
            found = c.execute("SELECT COALESCE(MAX(version), 0) AS v FROM schema_version").fetchone()
            assert found is not None  # an aggregate without GROUP BY returns one row
            current = int(found["v"])
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


class PgStore(SqlJobStore):
    """The job store on a PostgreSQL database shared by several replicas."""

    def __init__(self, url: str, pool_size: int = 8, connect_timeout: float = 10.0):
        self._pg = PgBackend(url, pool_size=pool_size, connect_timeout=connect_timeout)
        super().__init__(self._pg)

    def migrate(self) -> int:
        return self._pg.migrate()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or exc.__class__.__name__
    return text.splitlines()[0]
