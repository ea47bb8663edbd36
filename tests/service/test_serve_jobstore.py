"""The job store's contract, run on both backends (one state machine, store.SqlJobStore, over SQLite and
over PostgreSQL): dedup and replay protection, leases, exactly-once completion, backoff bookkeeping,
the outbox's claims, retention, reads. PostgreSQL runs on the server pgkit provides (IMGCHECK_TEST_PG_URL,
or one it starts from Debian's binaries) and is skipped with the reason when there is none.
Backend-only behaviour: test_serve_store.py (SQLite's file, lock, schema), test_serve_store_pg.py
(replicas, migrations, the database clock)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest
from pgkit import pg_server_url, pg_url  # noqa: F401  (fixtures)

from imgcheck.service.events import PushEvent
from imgcheck.service.store import FleetResult, SqlJobStore, Store
from imgcheck.service.store_dialect import POSTGRES, SQLITE

D1 = "sha256:" + "1" * 64
D2 = "sha256:" + "2" * 64
WEEK_AND_A_DAY = 8 * 24 * 3600  # past the redelivery memory (DELIVERY_MEMORY_SECONDS)


@pytest.fixture(params=["sqlite", "postgresql"])
def open_store(request, tmp_path) -> Iterator[Callable[[], SqlJobStore]]:
    """Opens a store on this test's database; call it again for a second process / replica on the same one."""
    opened: list[SqlJobStore] = []
    if request.param == "sqlite":
        path = str(tmp_path / "q.db")

        def make() -> SqlJobStore:
            opened.append(Store(path))
            return opened[-1]

    else:
        pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'imgcheck[serve-pg]')")
        url = request.getfixturevalue("pg_url")
        from imgcheck.service.store_pg import PgStore

        def make() -> SqlJobStore:
            opened.append(PgStore(url, pool_size=4))
            return opened[-1]

    yield make
    for s in opened:
        s.close()


@pytest.fixture
def store(open_store) -> SqlJobStore:
    return open_store()


def results(n_fleets: int = 2) -> list[FleetResult]:
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
    assert store.counts() == {"queued": 2, "running": 0, "done": 0, "failed": 0}
    assert store.jobs_for_digest(D1)[0]["tags"] == ["v1", "v2"]


def test_enqueue_is_all_or_nothing(store):
    # the second push breaks a NOT NULL constraint half-way through the delivery's transaction
    with pytest.raises(Exception, match="(?i)null"):
        store.enqueue("main", [PushEvent("a/b", D1), PushEvent("a/b", None)])
    assert store.counts()["queued"] == 0
    assert store.enqueue("main", [PushEvent("a/b", D1)]).queued == 1


def test_claim_lease_complete_exactly_once(store):
    store.enqueue("main", [PushEvent("a/b", D1), PushEvent("a/b", D2)])
    j1 = store.claim("w1", lease_seconds=60, max_attempts=3)
    j2 = store.claim("w2", lease_seconds=60, max_attempts=3)
    assert {j1.digest, j2.digest} == {D1, D2} and j1.attempts == 1
    assert store.claim("w3", 60, 3) is None  # both leased
    assert not store.complete(j1, "w2", results())  # not the lease holder
    assert store.complete(j1, "w1", results())
    assert not store.complete(j1, "w1", results())  # never done twice
    assert [r["fleet"] for r in store.results_for_job(j1.id)] == ["f0", "f1"]
    assert store.counts() == {"queued": 0, "running": 1, "done": 1, "failed": 0}
    assert store.jobs_for_digest(j1.digest)[0]["verdicts"] == {"f0": "ok", "f1": "ok"}


def test_expired_lease_is_taken_over_and_the_old_holder_loses(store):
    store.enqueue("main", [PushEvent("a/b", D1)], now=900.0)
    old = store.claim("dead", lease_seconds=10, max_attempts=5, now=1000.0)
    assert store.claim("live", 10, 5, now=1005.0) is None
    new = store.claim("live", 10, 5, now=1011.0)
    assert new.id == old.id and new.attempts == 2
    assert not store.complete(old, "dead", results())
    assert not store.fail(old, "dead", "too late") and not store.retry_later(old, "dead", "too late", 1)
    assert store.complete(new, "live", results())
    assert len(store.results_for_job(new.id)) == 2


def test_renew_keeps_the_lease_and_max_attempts_fails_the_job(store):
    store.enqueue("main", [PushEvent("a/b", D1)], now=900.0)
    job = store.claim("w", lease_seconds=10, max_attempts=2, now=1000.0)
    store.renew("w", [job.id], 10, now=1008.0)
    store.renew("someone-else", [job.id], 100, now=1008.0)  # not the holder: no effect
    assert store.claim("x", 10, 2, now=1015.0) is None
    assert store.claim("x", 10, 2, now=1019.0) is not None  # second attempt
    assert store.claim("y", 10, 2, now=1030.0) is None  # a third would exceed max_attempts
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


def test_skip_finishes_without_results_and_says_why(store):
    store.enqueue("main", [PushEvent("a/b", D1)])
    job = store.claim("w", 60, 5)
    assert not store.skip(job, "other", "a signature")
    assert store.skip(job, "w", "a signature")
    (summary,) = store.jobs_for_digest(D1)
    assert (summary["state"], summary["last_error"], summary["verdicts"]) == ("done", "skipped: a signature", {})
    assert store.outbox_due(owner="s") == []


def test_a_new_push_requeues_a_failed_job_but_a_redelivery_does_not(store):
    store.enqueue("main", [PushEvent("a/b", D1, event_id="e1")])
    job = store.claim("w", 60, 5)
    assert store.fail(job, "w", "corrupt")
    assert store.enqueue("main", [PushEvent("a/b", D1, event_id="e1")]).queued == 0
    assert store.counts()["failed"] == 1
    assert store.enqueue("main", [PushEvent("a/b", D1, event_id="e2")]).queued == 1
    assert store.counts()["queued"] == 1
    assert store.claim("w", 60, 5).attempts == 1  # a new push starts its attempts afresh


def test_retention_forgets_old_deliveries_only(store):
    store.enqueue("main", [PushEvent("a/b", D1, event_id="old")], now=1000.0)
    store.enqueue("main", [PushEvent("a/b", D2, event_id="new")], now=1000.0 + WEEK_AND_A_DAY)
    assert store.forget_old_deliveries(now=1000.0 + WEEK_AND_A_DAY) == 1
    assert store.counts()["queued"] == 2  # the jobs stay; only the redelivery memory is pruned


def test_a_replayed_event_of_a_failed_job_stays_a_duplicate_after_the_memory_window(store):
    """A captured event replayed after its job failed used to queue it (and pull the image) again."""
    store.enqueue("main", [PushEvent("a/b", D1, event_id="e1"), PushEvent("a/b", D2, event_id="e2")], now=1000.0)
    failed = store.claim("w", 60, 3, now=1001.0)
    done = store.claim("w", 60, 3, now=1001.0)
    assert store.fail(failed, "w", "corrupt", now=1002.0) and store.complete(done, "w", results(), now=1002.0)
    later = 1000.0 + WEEK_AND_A_DAY
    assert store.forget_old_deliveries(now=later) == 1  # the done job's id only
    replayed_id = "e1" if failed.digest == D1 else "e2"
    again = store.enqueue("main", [PushEvent("a/b", failed.digest, event_id=replayed_id)], now=later)
    assert (again.queued, again.duplicates) == (0, 1)
    assert store.counts()["failed"] == 1
    # a new push (a new event) of the failed digest is still a reason to try again
    assert store.enqueue("main", [PushEvent("a/b", failed.digest, event_id="e3")], now=later).queued == 1


def test_outbox_rows_commit_with_results_and_are_leased_to_one_sender(store):
    store.enqueue("main", [PushEvent("a/b", D1), PushEvent("a/b", D2)], now=900.0)
    for _ in range(2):
        job = store.claim("w", 60, 3, now=1000.0)
        assert store.complete(job, "w", results(), now=1000.0)  # two fleets: four outbox rows
    rows = store.outbox_due(limit=3, now=1001.0, owner="s1", lease_seconds=30)
    assert len(rows) == 3 and {r["verdict"] for r in rows} == {"ok"} and rows[0]["report"] == "{}"
    assert {r["digest"] for r in rows} <= {D1, D2} and all(r["registry"] == "main" for r in rows)
    # claimed: not due for anyone else until the lease ends
    (rest,) = store.outbox_due(limit=10, now=1002.0, owner="s2", lease_seconds=30)
    assert rest["id"] not in {r["id"] for r in rows}
    assert store.outbox_due(limit=10, now=1003.0, owner="s3", lease_seconds=30) == []
    sent, refused, stopping = rows
    store.outbox_done(sent["id"])
    store.outbox_retry(refused["id"], "refused", delay=100, now=1004.0, owner="not-the-holder")  # no effect
    store.outbox_retry(refused["id"], "refused", delay=100, now=1004.0, owner="s1")
    store.outbox_release([stopping["id"]], "s1", now=1005.0)  # the sender stops: due at once, for anyone
    assert [r["id"] for r in store.outbox_due(limit=10, now=1006.0, owner="s4")] == [stopping["id"]]
    # the holder died: its row is due again once the lease ran out; the refused one after its delay
    later = [r for r in store.outbox_due(limit=10, now=1200.0, owner="s5")]
    assert refused["id"] in {r["id"] for r in later} and sent["id"] not in {r["id"] for r in later}
    assert [r["attempts"] for r in later if r["id"] == refused["id"]] == [1]


def test_retention_deletes_finished_jobs_with_their_rows(store):
    store.enqueue("main", [PushEvent("a/b", D1, "v1", "e1"), PushEvent("a/b", D2)], now=900.0)
    done = store.claim("w", 60, 3, now=1000.0)
    assert store.complete(done, "w", results(), now=1000.0)
    assert store.delete_finished_before(999.0) == 0
    assert store.delete_finished_before(1001.0) == 1
    assert store.jobs_for_digest(done.digest) == [] and store.results_for_job(done.id) == []
    assert store.outbox_due(owner="s", now=2000.0) == []
    assert store.counts() == {"queued": 1, "running": 0, "done": 0, "failed": 0}  # the unfinished job stays


def test_reads_history_and_recent(store):
    store.enqueue("main", [PushEvent("a/b", D1, "v1")], now=1000.0)
    store.enqueue("main", [PushEvent("a/b", D2, "v2")], now=1001.0)
    store.enqueue("main", [PushEvent("c/d", D1)], now=1002.0)
    assert [j["digest"] for j in store.history("a/b")] == [D2, D1]  # newest first
    assert [j["tags"] for j in store.history("a/b", limit=1)] == [["v2"]]
    assert [j["repository"] for j in store.recent(2)] == ["c/d", "a/b"]
    assert store.history("nobody/here") == []
    store.ping()


def test_concurrent_deliveries_of_one_digest_make_one_job(open_store):
    """Eight processes (SQLite) or replicas (PostgreSQL) receive pushes of one digest at once, three of
    them the same event: one job, every other delivery a duplicate, every new tag kept."""
    open_store().close()  # the schema exists before the race
    outcomes, barrier = [], threading.Barrier(8)

    def deliver(i: int) -> None:
        s = open_store()
        barrier.wait()
        outcomes.append(s.enqueue("main", [PushEvent("a/b", D1, f"t{i}", "same" if i < 3 else f"e{i}")]))

    threads = [threading.Thread(target=deliver, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    s = open_store()
    assert sum(o.queued for o in outcomes) == 1 and sum(o.duplicates for o in outcomes) == 7
    assert s.counts()["queued"] == 1 and len(s.jobs_for_digest(D1)[0]["tags"]) == 6  # t0 (or t1/t2) + t3..t7


def test_the_dialects_differ_only_in_markers_locking_and_clock():
    sql = "SELECT id FROM jobs WHERE digest = ? AND state = ? LIMIT 1"
    assert SQLITE.sql(sql) == sql and SQLITE.skip_locked == "" and SQLITE.clock_sql is None
    assert POSTGRES.sql(sql) == "SELECT id FROM jobs WHERE digest = %s AND state = %s LIMIT 1"
    assert POSTGRES.skip_locked == " FOR UPDATE SKIP LOCKED" and "clock_timestamp()" in POSTGRES.clock_sql
    with pytest.raises(ValueError, match="literal %"):  # psycopg would take it for a marker
        POSTGRES.sql("SELECT 1 WHERE repository LIKE 'team/%' AND digest = ?")
