"""What the one job store (store.SqlJobStore) needs from a database, and where SQLite and PostgreSQL differ.

The job state machine is written once, in store.py, against a `Backend`: a source of transactions (`Tx`)
plus the few things only the backend knows (its single-instance lock, its clock). The SQL it sends differs
only through the `Dialect`:
- placeholders: the store writes `?` (sqlite3's paramstyle); psycopg's is `%s`. No statement contains a
  literal `?` or `%`, so the translation is a plain substitution.
- row locking: PostgreSQL claims rows with `FOR UPDATE SKIP LOCKED`, so replicas never take the same row
  nor wait on each other; SQLite has no row locks, and every write transaction is `BEGIN IMMEDIATE`
  (one writer at a time), which gives the same guarantee.
- the clock: PostgreSQL's clock_timestamp() (replicas with skewed clocks still agree on when a lease
  expired); SQLite has one process, whose clock is the one to use.
- upserts: both accept `INSERT ... ON CONFLICT (...) DO NOTHING` (SQLite since 3.24) and report the rows
  an INSERT or UPDATE touched as the cursor's rowcount, so the store uses that one form and no RETURNING
  (which SQLite gained only in 3.35).
DDL and migrations stay with each backend (store_sqlite.py, store_pg.py): the column types differ.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

Row = dict[str, Any]  # one result row, by column name


@dataclass(frozen=True)
class Dialect:
    name: str
    placeholder: str  # the driver's parameter marker
    skip_locked: str  # appended to a SELECT that claims rows for this transaction
    clock_sql: str | None  # a query whose `now` column is the database's epoch seconds; None: the process clock

    def sql(self, text: str) -> str:
        if self.placeholder == "?":
            return text
        if "%" in text:  # psycopg would read it as a parameter marker: the store writes no literal `%`
            raise ValueError(f"a literal % in the store's SQL: {text[:80]}")
        return text.replace("?", self.placeholder)


SQLITE = Dialect(name="sqlite", placeholder="?", skip_locked="", clock_sql=None)
POSTGRES = Dialect(
    name="postgresql",
    placeholder="%s",
    skip_locked=" FOR UPDATE SKIP LOCKED",
    clock_sql="SELECT extract(epoch FROM clock_timestamp())::double precision AS now",
)


class _Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> Sequence[Any]: ...


class Connection(Protocol):
    """What sqlite3.Connection and psycopg.Connection both offer (rows readable by column name)."""

    def execute(self, sql: str, params: Sequence[Any], /) -> _Cursor: ...


class Tx:
    """Statements of one transaction (or, for reads, one connection) in the store's `?` SQL."""

    def __init__(self, conn: Connection, dialect: Dialect):
        self._conn = conn
        self.dialect = dialect

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        row = self._conn.execute(self.dialect.sql(sql), params).fetchone()
        return None if row is None else dict(row)

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return [dict(r) for r in self._conn.execute(self.dialect.sql(sql), params).fetchall()]

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Execute a write; the number of rows it inserted, updated or deleted."""
        return self._conn.execute(self.dialect.sql(sql), params).rowcount

    def now(self, given: float | None = None) -> float:
        """`given` (tests pin time), else the dialect's clock."""
        if given is not None:
            return given
        if self.dialect.clock_sql is None:
            return time.time()
        row = self.one(self.dialect.clock_sql)
        assert row is not None  # a SELECT without FROM returns one row
        return float(row["now"])


def marks(values: Sequence[object]) -> str:
    """`?, ?, ?` for an IN list of len(values) (never empty: callers return early)."""
    return ", ".join("?" for _ in values)


class Backend(Protocol):
    """A database the job store runs on (store_sqlite.SqliteBackend, store_pg.PgBackend)."""

    dialect: Dialect
    shared: bool  # several processes may use it at once (no process can prove another dead)

    def write(self) -> AbstractContextManager[Tx]:
        """One write transaction; a database that cannot be used raises StoreUnavailableError."""
        ...

    def read(self) -> AbstractContextManager[Tx]: ...
    def ping(self) -> None: ...
    def close(self) -> None: ...
    def acquire_instance_lock(self) -> None: ...
    def release_instance_lock(self) -> None: ...
    def holds_instance_lock(self) -> bool: ...
