"""What only the PostgreSQL backend does, against a real server: what replicas need (SKIP LOCKED claims
from several stores at once, outbox leases across replicas, migrations run by every replica), the
database clock, one-line connection errors. The job store's contract on both backends is
test_serve_jobstore.py."""

from __future__ import annotations

import threading

import pytest
from pgkit import pg_server_url, pg_url  # noqa: F401  (fixtures)

from imgcheck.service.events import PushEvent
from imgcheck.service.store import FleetResult, StoreUnavailableError

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'imgcheck[serve-pg]')")
from imgcheck.service.store_pg import SCHEMA_VERSION, PgStore  # noqa: E402

D1 = "sha256:" + "1" * 64
D2 = "sha256:" + "2" * 64


@pytest.fixture
def store(pg_url):
    s = PgStore(pg_url, pool_size=4)
    yield s
    s.close()


def results(n_fleets=2):
    return [FleetResult(fleet=f"f{i}", verdict="ok", report_json="{}") for i in range(n_fleets)]


def test_lease_expiry_uses_the_database_clock(store):
    """Without `now`, expiry is judged by the server's clock: a 1 s lease is free again ~1 s later."""
    import time

    store.enqueue("main", [PushEvent("a/b", D1)])
    held = store.claim("dead", lease_seconds=1, max_attempts=5)
    assert store.claim("live", 1, 5) is None
    deadline = time.monotonic() + 10
    taken = None
    while taken is None and time.monotonic() < deadline:
        time.sleep(0.2)
        taken = store.claim("live", 1, 5)
    assert taken is not None and taken.id == held.id and taken.attempts == 2


def test_migrations_are_recorded_once_and_rerun_safely(pg_url):
    stores = []
    barrier = threading.Barrier(4)
    errors = []

    def start():
        barrier.wait()
        try:
            stores.append(PgStore(pg_url, pool_size=2))  # four replicas starting together
        except Exception as exc:  # pragma: no cover - the assertion below shows it
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    try:
        assert stores[0].migrate() == 0
        with psycopg.connect(pg_url) as conn:
            # each migration recorded once, however many replicas ran them together
            assert conn.execute("SELECT version FROM schema_version ORDER BY version").fetchall() == [
                (v,) for v in range(1, SCHEMA_VERSION + 1)
            ]
    finally:
        for s in stores:
            s.close()


def test_newer_schema_is_refused(pg_url):
    PgStore(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_version (version) VALUES (99)")
    with pytest.raises(StoreUnavailableError, match="newer"):
        PgStore(pg_url)


def test_an_old_pod_runs_beside_a_newer_expand_only_schema(pg_url):
    """Expand/contract: a step that declares this code still works (compatible_from) lets an old pod that
    restarts mid-rollout start; a contract step (compatible_from above it) still refuses it."""
    from imgcheck.service import store_pg

    PgStore(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = conn.execute("SELECT version, compatible_from FROM schema_version ORDER BY version").fetchall()
        assert rows[-1] == (3, 2)  # the outbox lease step is expand-only
        conn.execute("INSERT INTO schema_version (version, compatible_from) VALUES (%s, %s)", (99, SCHEMA_VERSION))
    old = PgStore(pg_url)  # the newer release's expand step: this release keeps running
    try:
        old.enqueue("main", [PushEvent("a/b", D1)])
        assert old.claim("w", 60, 3) is not None
    finally:
        old.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_version (version, compatible_from) VALUES (100, 100)")  # a contract step
    with pytest.raises(StoreUnavailableError, match="step 100"):
        PgStore(pg_url)
    assert store_pg.COMPATIBLE_FROM.get(SCHEMA_VERSION) is not None  # the newest step says whom it keeps working


def test_concurrent_claims_from_several_replicas_take_each_job_once(pg_url):
    """Three stores (as three replicas) with four threads each drain 60 jobs: no job is claimed twice."""
    seed = PgStore(pg_url)
    seed.enqueue("main", [PushEvent("a/b", "sha256:" + f"{i:064x}") for i in range(60)])
    replicas = [PgStore(pg_url, pool_size=4) for _ in range(3)]
    claimed, lock = [], threading.Lock()

    def work(store, owner):
        for _ in range(200):  # bounded: 60 jobs among 12 workers
            job = store.claim(owner, 60, 5)
            if job is None:
                return
            assert store.complete(job, owner, results(1))
            with lock:
                claimed.append(job.id)

    threads = [threading.Thread(target=work, args=(r, f"r{i}w{k}")) for i, r in enumerate(replicas) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    try:
        assert len(claimed) == 60 and len(set(claimed)) == 60
        assert seed.counts()["done"] == 60
        with psycopg.connect(pg_url) as conn:
            assert conn.execute("SELECT COUNT(*), COUNT(DISTINCT job_id) FROM results").fetchone() == (60, 60)
    finally:
        for s in (seed, *replicas):
            s.close()


def test_unreachable_server_is_one_clear_error():
    from registryfixture import free_port

    url = f"postgresql://nobody:secret-pw@127.0.0.1:{free_port()}/imgcheck"
    with pytest.raises(StoreUnavailableError) as info:
        PgStore(url, connect_timeout=2)
    message = str(info.value)
    assert "cannot connect to PostgreSQL" in message and "secret-pw" not in message and "\n" not in message
    cause = info.value.__cause__  # psycopg's whole message, for --debug and the service log
    assert cause is not None and "secret-pw" not in str(cause)


def test_a_database_failure_mid_job_neither_kills_the_worker_nor_loses_the_job(pg_url, tmp_path):
    """complete() fails once (the database dropped the connection): the worker thread survives, and the
    job, whose lease then lapses, is checked again and stored once."""
    from servicekit import wait_for, write_config

    from imgcheck.service.config import load_config
    from imgcheck.service.worker import WorkerPool

    config = load_config(
        write_config(
            str(tmp_path / "c.toml"),
            "127.0.0.1:1",
            database=str(tmp_path / "q.db"),
            workers=1,
            extra_server=f'database_url = "{pg_url}"\nlease_seconds = 1',
        )
    )
    store = PgStore(pg_url)
    failures = []

    class Flaky:  # a fake only for the error path: the real store with one failing commit
        def __getattr__(self, name):
            return getattr(store, name)

        def complete(self, job, owner, results, now=None):
            if not failures:
                failures.append(job.id)
                raise StoreUnavailableError("connection lost")
            return store.complete(job, owner, results, now)

    pool = WorkerPool(config, Flaky(), check=lambda config, job: results())
    store.enqueue("main", [PushEvent("a/b", D1), PushEvent("a/b", D2)])
    pool.start()
    try:
        wait_for(lambda: store.counts()["done"] == 2, 30, "both jobs to be done")
    finally:
        pool.stop()
        store.close()
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 4  # two fleets x two jobs, once each
        (attempts,) = conn.execute("SELECT attempts FROM jobs WHERE id = %s", (failures[0],)).fetchone()
    assert attempts == 2


def test_outbox_rows_are_leased_to_one_replica_and_taken_over_when_it_dies(pg_url):
    """Three stores (three replicas) drain one outbox at once: every row goes to exactly one of them, and
    a row whose holder died (never marked sent) is due again only after its lease ran out."""
    stores = [PgStore(pg_url, pool_size=4) for _ in range(3)]
    try:
        digests = [f"sha256:{i:064x}" for i in range(12)]
        stores[0].enqueue("main", [PushEvent("a/b", d) for d in digests])
        while (job := stores[0].claim("w", 60, 3)) is not None:
            assert stores[0].complete(job, "w", results())  # two fleets: 24 outbox rows
        got: dict[str, list[int]] = {}
        barrier = threading.Barrier(3)

        def drain(i: int) -> None:
            barrier.wait()
            got[f"r{i}"] = [r["id"] for r in stores[i].outbox_due(limit=100, owner=f"r{i}", lease_seconds=60)]

        threads = [threading.Thread(target=drain, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        claimed = [i for ids in got.values() for i in ids]
        assert len(claimed) == len(set(claimed)) == 24  # no row handed to two replicas
        for s in stores:  # after the claim transactions committed, nothing is due for anyone
            assert s.outbox_due(limit=100, owner="late", lease_seconds=60) == []
        # r0 sends and marks its rows; r1 gives one back (receiver refused); r2 dies holding its rows
        for i in got["r0"]:
            stores[0].outbox_done(i)
        if got["r1"]:
            stores[1].outbox_retry(got["r1"][0], "refused", delay=0.0, owner="r1")
            assert [r["id"] for r in stores[2].outbox_due(limit=100, owner="r2b", lease_seconds=60)] == [got["r1"][0]]
        # r2's lease expires: its rows (never marked) are due again and taken over once
        later = stores[0].outbox_due(limit=100, now=10**10, owner="r3", lease_seconds=60)
        assert set(got["r2"]) <= {r["id"] for r in later}
        assert stores[1].outbox_due(limit=100, now=10**10, owner="r4", lease_seconds=60) == []
    finally:
        for s in stores:
            s.close()
