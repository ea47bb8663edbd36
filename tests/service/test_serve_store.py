"""The SQLite job queue: dedup, leases, exactly-once completion, orphan recovery, backoff bookkeeping."""

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


def test_duplicates_by_digest_and_by_event_id(store):
    first = store.enqueue("main", [PushEvent("a/b", D1, "v1", "e1")])
    assert (first.queued, first.duplicates) == (1, 0)
    again = store.enqueue("main", [PushEvent("a/b", D1, "v1", "e1")])  # redelivery
    retag = store.enqueue("main", [PushEvent("a/b", D1, "v2", "e2")])  # same digest, new tag
    other_repo = store.enqueue("main", [PushEvent("c/d", D1, "v1", "e3")])  # same digest elsewhere: own job
    assert (again.queued, again.duplicates) == (0, 1)
    assert (retag.queued, retag.duplicates) == (0, 1)
    assert other_repo.queued == 1
    assert store.counts()["queued"] == 2
    (job,) = store.jobs_for_digest(D1)[:1]
    assert job["tags"] == ["v1", "v2"]


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


def test_claim_lease_complete_exactly_once(store):
    store.enqueue("main", [PushEvent("a/b", D1), PushEvent("a/b", D2)])
    j1 = store.claim("w1", lease_seconds=60, max_attempts=3)
    j2 = store.claim("w2", lease_seconds=60, max_attempts=3)
    assert {j1.digest, j2.digest} == {D1, D2} and j1.attempts == 1
    assert store.claim("w3", 60, 3) is None  # both leased
    assert not store.complete(j1, "w2", results())  # not the lease holder
    assert store.complete(j1, "w1", results())
    assert not store.complete(j1, "w1", results())  # never done twice
    assert len(store.results_for_job(j1.id)) == 2
    assert store.counts() == {"queued": 0, "running": 1, "done": 1, "failed": 0}


def test_expired_lease_is_taken_over_and_the_old_holder_loses(store):
    store.enqueue("main", [PushEvent("a/b", D1)], now=900.0)
    old = store.claim("dead", lease_seconds=10, max_attempts=5, now=1000.0)
    assert store.claim("live", 10, 5, now=1005.0) is None
    new = store.claim("live", 10, 5, now=1011.0)
    assert new.id == old.id and new.attempts == 2
    assert not store.complete(old, "dead", results())
    assert store.complete(new, "live", results())
    assert len(store.results_for_job(new.id)) == 2


def test_renew_keeps_the_lease(store):
    store.enqueue("main", [PushEvent("a/b", D1)], now=900.0)
    job = store.claim("w", lease_seconds=10, max_attempts=5, now=1000.0)
    store.renew("w", [job.id], 10, now=1008.0)
    assert store.claim("x", 10, 5, now=1015.0) is None
    assert store.claim("x", 10, 5, now=1019.0) is not None


def test_a_job_that_keeps_killing_workers_is_failed(store):
    store.enqueue("main", [PushEvent("a/b", D1)], now=900.0)
    t = 1000.0
    for _ in range(2):
        assert store.claim("w", 1, max_attempts=2, now=t) is not None
        t += 5
    assert store.claim("w", 1, max_attempts=2, now=t) is None
    assert store.counts()["failed"] == 1
    assert "gave up after 2 attempts" in store.jobs_for_digest(D1)[0]["last_error"]


def test_retry_later_sets_next_attempt(store):
    store.enqueue("main", [PushEvent("a/b", D1)], now=900.0)
    job = store.claim("w", 60, 5, now=1000.0)
    assert store.retry_later(job, "w", "registry down", delay=30, now=1000.0)
    assert store.claim("w", 60, 5, now=1029.0) is None
    again = store.claim("w", 60, 5, now=1031.0)
    assert again.attempts == 2
    assert store.jobs_for_digest(D1)[0]["last_error"] == "registry down"


def test_a_new_push_requeues_a_failed_job_but_a_redelivery_does_not(store):
    store.enqueue("main", [PushEvent("a/b", D1, event_id="e1")])
    job = store.claim("w", 60, 5)
    store.fail(job, "w", "corrupt")
    assert store.enqueue("main", [PushEvent("a/b", D1, event_id="e1")]).queued == 0
    assert store.counts()["failed"] == 1
    assert store.enqueue("main", [PushEvent("a/b", D1, event_id="e2")]).queued == 1
    assert store.counts()["queued"] == 1


def test_a_replay_of_a_failed_jobs_event_after_the_memory_window_is_still_a_duplicate(store):
    store.enqueue("main", [PushEvent("a/b", D1, event_id="e1"), PushEvent("a/b", D2, event_id="e2")], now=1000.0)
    first, second = store.claim("w", 60, 5, now=1001.0), store.claim("w", 60, 5, now=1001.0)
    failed, done = (first, second) if first.digest == D1 else (second, first)
    assert store.fail(failed, "w", "corrupt", now=1002.0) and store.complete(done, "w", results(), now=1002.0)
    later = 1000.0 + 8 * 24 * 3600
    assert store.forget_old_deliveries(now=later) == 1  # e2 (its job is done: a replay cannot requeue it)
    assert store.enqueue("main", [PushEvent("a/b", D1, event_id="e1")], now=later).queued == 0
    assert store.counts()["failed"] == 1


def test_instance_lock_and_orphan_recovery(tmp_path):
    path = str(tmp_path / "q.db")
    first = Store(path)
    first.acquire_instance_lock()
    first.enqueue("main", [PushEvent("a/b", D1)])
    assert first.claim("w", 600, 5) is not None
    second = Store(path)
    with pytest.raises(StoreBusyError):
        second.acquire_instance_lock()
    first.close()  # the process "dies": its lock goes with it
    second.acquire_instance_lock()
    assert second.requeue_orphans() == 1
    job = second.claim("w2", 600, 5)
    assert job is not None and job.attempts == 2
    second.close()


def test_enqueue_is_all_or_nothing(store):
    bad = PushEvent("a/b", D2)
    with pytest.raises(sqlite3.Error):
        with store._write() as c:  # simulate a failure half-way through a delivery's transaction
            c.execute(
                "INSERT INTO jobs (registry, repository, digest, state, next_attempt_at, created_at, "
                "updated_at) VALUES ('main', 'a/b', ?, 'queued', 0, 0, 0)",
                (D1,),
            )
            c.execute("INSERT INTO nowhere VALUES (1)")
    assert store.counts()["queued"] == 0
    assert store.enqueue("main", [bad]).queued == 1


def test_newer_schema_is_refused(tmp_path):
    path = str(tmp_path / "q.db")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    from imgcheck.errors import UnavailableError

    with pytest.raises(UnavailableError, match="newer"):
        Store(path)


def test_concurrent_deliveries_of_one_digest_make_one_job(tmp_path):
    import threading

    path = str(tmp_path / "q.db")
    Store(path).close()
    outcomes, barrier = [], threading.Barrier(8)

    def deliver(i):
        s = Store(path)
        barrier.wait()
        outcomes.append(s.enqueue("main", [PushEvent("a/b", D1, f"t{i}", f"e{i}")]))
        s.close()

    threads = [threading.Thread(target=deliver, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s = Store(path)
    assert sum(o.queued for o in outcomes) == 1 and sum(o.duplicates for o in outcomes) == 7
    assert s.counts()["queued"] == 1 and len(s.jobs_for_digest(D1)[0]["tags"]) == 8
    s.close()
