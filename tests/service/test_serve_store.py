"""What only the SQLite backend does: its file's constraints, the single-instance lock and start-up
recovery of orphans, its schema steps, and a locked database as "unavailable". The job store's contract
on both backends is test_serve_jobstore.py."""

from __future__ import annotations

import sqlite3

import pytest

from imgcheck.service.events import PushEvent
from imgcheck.service.store import FleetResult, Store, StoreBusyError

D1 = "sha256:" + "1" * 64
D2 = "sha256:" + "2" * 64


@pytest.fixture
def store(tmp_path):
    s = Store(str(tmp_path / "q.db"))
    yield s
    s.close()


def results(n_fleets=2):
    return [FleetResult(fleet=f"f{i}", verdict="ok", report_json="{}") for i in range(n_fleets)]


def test_unique_constraint_holds_even_for_raw_inserts(store):
    store.enqueue("main", [PushEvent("a/b", D1)])
    conn = sqlite3.connect(store.path)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO jobs (registry, repository, digest, state, next_attempt_at, created_at, "
            "updated_at) VALUES ('main', 'a/b', ?, 'queued', 0, 0, 0)",
            (D1,),
        )
    conn.close()


def test_instance_lock_and_orphan_recovery(tmp_path):
    path = str(tmp_path / "q.db")
    first = Store(path)
    first.acquire_instance_lock()
    first.enqueue("main", [PushEvent("a/b", D1), PushEvent("a/b", D2)])
    assert first.claim("w", 600, 5) is not None
    done = first.claim("w", 600, 5)
    assert first.complete(done, "w", results())
    assert len(first.outbox_due(owner="sender", lease_seconds=600)) == 2  # claimed, then the process dies
    second = Store(path)
    with pytest.raises(RuntimeError, match="instance lock"):
        second.requeue_orphans()  # without the lock it cannot know the other process is dead
    with pytest.raises(StoreBusyError):
        second.acquire_instance_lock()
    first.close()  # the process "dies": its lock goes with it
    second.acquire_instance_lock()
    assert second.requeue_orphans() == 1
    job = second.claim("w2", 600, 5)
    assert job is not None and job.attempts == 2
    assert len(second.outbox_due(owner="sender2")) == 2  # the dead sender's claims are handed back at once
    second.close()


def test_newer_schema_is_refused(tmp_path):
    path = str(tmp_path / "q.db")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    from imgcheck.errors import UnavailableError

    with pytest.raises(UnavailableError, match="newer"):
        Store(path)


def test_a_database_of_the_previous_release_gains_the_outbox_lease_columns_and_keeps_its_rows(tmp_path):
    """A file written before the one store (no outbox lease columns) is expanded in place: its queued job and
    its unsent notification survive, and the schema version stays, so the previous release still opens it."""
    from imgcheck.service import store_sqlite

    path = str(tmp_path / "q.db")
    conn = sqlite3.connect(path)
    conn.executescript(store_sqlite.SCHEMA)  # schema 1 as that release created it
    conn.execute("PRAGMA user_version = 1")
    conn.execute(
        "INSERT INTO jobs (id, registry, repository, digest, state, next_attempt_at, created_at, updated_at, "
        "finished_at) VALUES (1, 'main', 'a/b', ?, 'done', 0, 0, 0, 0), (2, 'main', 'a/b', ?, 'queued', 0, 0, 0, NULL)",
        (D1, D2),
    )
    conn.execute("INSERT INTO results VALUES (1, 'f0', ?, 'ok', '{}', NULL, 0)", (D1,))
    conn.execute("INSERT INTO outbox (job_id, fleet, next_attempt_at) VALUES (1, 'f0', 0)")
    conn.commit()
    conn.close()
    store = Store(path)
    try:
        assert [r["digest"] for r in store.outbox_due(owner="s")] == [D1]
        assert store.claim("w", 60, 3).digest == D2
    finally:
        store.close()
    Store(path).close()  # a second start finds the columns there
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert {"claimed_by", "lease_until"} <= {r[1] for r in conn.execute("PRAGMA table_info(outbox)")}
    conn.close()


def test_a_database_locked_past_the_busy_timeout_is_unavailable_not_a_crash(tmp_path):
    """Another writer holding the file (a backup tool, a stuck process): the webhook must answer 503."""
    from imgcheck.service.store import StoreUnavailableError

    path = str(tmp_path / "q.db")
    store = Store(path, busy_timeout=0.1)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreUnavailableError, match="locked"):
            store.enqueue("main", [PushEvent("a/b", D1)])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.enqueue("main", [PushEvent("a/b", D1)]).queued == 1  # nothing half-written
    store.close()
