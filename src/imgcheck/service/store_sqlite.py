"""The embedded SQLite database under the job store: connections, schema, the single-instance lock.

A single `imgcheck serve` owns a SQLite file through an exclusive lock file (flock, released by the
kernel when the process dies). Holding it proves that every `running` job and every claimed outbox row
is an orphan of a dead process, so start-up hands them back at once (store.JobStore.requeue_orphans).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import UnavailableError
from .store_dialect import SQLITE, Tx
from .store_types import StoreBusyError, StoreUnavailableError

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

SCHEMA_VERSION = 1  # PRAGMA user_version; a newer file is refused

# Expand-only additions since SCHEMA_VERSION 1, added where missing (nullable columns). They keep the version,
# so an earlier release still opens the file (it ignores them) and a downgrade needs no restore.
# outbox leases, as PostgreSQL's step 3: the store claims outbox rows the same way on both backends.
ADDED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("outbox", "claimed_by", "TEXT"),
    ("outbox", "lease_until", "REAL"),
)


class SqliteBackend:
    """Thread-safe: each thread gets its own connection; every write is one IMMEDIATE transaction."""

    dialect = SQLITE
    shared = False

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
        try:
            self._migrate(self._conn())
        except sqlite3.Error as exc:
            raise UnavailableError(f"{path}: cannot set up the database ({exc})") from None

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise UnavailableError(
                f"{self.path}: database schema {version} is newer than this imgcheck ({SCHEMA_VERSION})"
            )
        conn.executescript(SCHEMA)  # idempotent (IF NOT EXISTS); executescript commits
        conn.execute("BEGIN IMMEDIATE")  # processes starting together: the columns are read under the lock
        try:
            for table, column, kind in ADDED_COLUMNS:
                if column not in {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # -- connections and transactions ------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
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

    @contextmanager
    def write(self) -> Iterator[Tx]:
        conn = self._conn()
        with _unavailable(self.path):
            # IMMEDIATE takes the write lock up front: no deadlock between two read-then-write transactions
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield Tx(conn, self.dialect)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[Tx]:
        with _unavailable(self.path):
            yield Tx(self._conn(), self.dialect)  # autocommit: each SELECT sees the last commit (WAL)

    def ping(self) -> None:
        with self.read() as tx:
            tx.one("SELECT 1 AS one")

    def close(self) -> None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
        self.release_instance_lock()

    # -- single-instance lock -------------------------------------------------------------------

    def acquire_instance_lock(self) -> None:
        """Exclusive ownership of this database by one process (see module doc)."""
        fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
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

    def holds_instance_lock(self) -> bool:
        return self._lock_fd is not None


@contextmanager
def _unavailable(path: str) -> Iterator[None]:
    """A database that cannot be used now (locked past the busy timeout, disk full, I/O error, corrupt)
    is StoreUnavailableError, as on PostgreSQL; a constraint or SQL mistake is a bug and stays itself."""
    try:
        yield
    except (sqlite3.IntegrityError, sqlite3.ProgrammingError):
        raise
    except sqlite3.Error as exc:
        raise StoreUnavailableError(f"{path}: {exc}") from exc
