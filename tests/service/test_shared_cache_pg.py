"""IMGCHECK_CACHE_URL: layer and image facts shared through a real PostgreSQL server between readers
with separate $IMGCHECK_HOMEs (replicas, CI runners), pulling real images from a real registry."""

from __future__ import annotations

import json

import pytest
from imagebuild import build_oci, make_layer
from pgkit import pg_server_url, pg_url  # noqa: F401  (fixtures)
from registryfixture import RegistryServer, free_port
from registrypush import Pusher
from servicekit import need_registry

from imgcheck.sources.read_options import ReadOptions

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'imgcheck[serve-pg]')")

pytestmark = pytest.mark.registry

BASE = make_layer({"etc/os-release": b"ID=debian\nVERSION_ID=12\n", "usr/lib/base.txt": b"base" * 100})


def _inspect(monkeypatch, home, reference, cache_url):
    from imgcheck import api
    from imgcheck.view.reader import ReadStats

    monkeypatch.setenv("IMGCHECK_HOME", str(home))
    if cache_url:
        monkeypatch.setenv("IMGCHECK_CACHE_URL", cache_url)
    else:
        monkeypatch.delenv("IMGCHECK_CACHE_URL", raising=False)
    stats = ReadStats()
    facts = api.inspect_image(reference, ReadOptions(stats=stats))
    return facts, stats


@pytest.fixture
def registry(tmp_path):
    need_registry()
    server = RegistryServer(str(tmp_path / "registry"))
    yield server
    server.stop()


def test_a_second_reader_reads_no_layer_another_already_read(tmp_path, monkeypatch, registry, pg_url):
    pusher = Pusher(registry.url)
    one = build_oci([BASE, make_layer({"opt/one": b"1"})])
    two = build_oci([BASE, make_layer({"opt/two": b"2"})])
    d1 = pusher.push_image("team/one", "v1", one)
    d2 = pusher.push_image("team/two", "v1", two)
    ref1, ref2 = f"registry:{registry.host}/team/one@{d1}", f"registry:{registry.host}/team/two@{d2}"

    first, stats = _inspect(monkeypatch, tmp_path / "runner-a", ref1, pg_url)
    assert len(stats.layers_read) == 2 and not stats.facts_cached
    # another runner, empty home: the whole image's facts come from the database, no layer is touched
    again, stats = _inspect(monkeypatch, tmp_path / "runner-b", ref1, pg_url)
    assert stats.facts_cached and stats.layers_read == [] and again == first
    # a third runner, another image on the same base layer: only the new layer is read
    _, stats = _inspect(monkeypatch, tmp_path / "runner-c", ref2, pg_url)
    base_digest = [d for d in stats.layers_cached]
    assert len(stats.layers_read) == 1 and len(base_digest) == 1 and base_digest[0] not in stats.layers_read
    # without the shared cache an empty home reads everything again (the test above is not vacuous)
    _, stats = _inspect(monkeypatch, tmp_path / "runner-d", ref2, None)
    assert len(stats.layers_read) == 2
    with psycopg.connect(pg_url) as conn:
        kinds = dict(conn.execute("SELECT kind, COUNT(*) FROM imgcheck_cache GROUP BY kind").fetchall())
    assert kinds["layer"] == 3  # base, one, two: each stored once however many runners read it


def test_a_wrong_or_damaged_shared_entry_is_a_miss_not_a_fact(tmp_path, monkeypatch, registry, pg_url):
    pusher = Pusher(registry.url)
    image = build_oci([BASE, make_layer({"opt/x": b"x"})])
    digest = pusher.push_image("team/x", "v1", image)
    ref = f"registry:{registry.host}/team/x@{digest}"
    good, _ = _inspect(monkeypatch, tmp_path / "a", ref, pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DELETE FROM imgcheck_cache WHERE kind = 'facts'")  # force the layer path
        rows = conn.execute("SELECT key FROM imgcheck_cache WHERE kind = 'layer' ORDER BY key").fetchall()
        # swap the two layers' entries: each now claims to be the other layer
        (k1,), (k2,) = rows
        conn.execute("UPDATE imgcheck_cache SET key = 'tmp' WHERE key = %s", (k1,))
        conn.execute("UPDATE imgcheck_cache SET key = %s WHERE key = %s", (k1, k2))
        conn.execute("UPDATE imgcheck_cache SET key = %s WHERE key = 'tmp'", (k2,))
    facts, stats = _inspect(monkeypatch, tmp_path / "b", ref, pg_url)
    assert len(stats.layers_read) == 2 and stats.layers_cached == []  # digest binding rejected both
    assert facts.os == good.os
    # the verified re-read healed the rows: the next empty home reads nothing
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DELETE FROM imgcheck_cache WHERE kind = 'facts'")
    _, stats = _inspect(monkeypatch, tmp_path / "b2", ref, pg_url)
    assert stats.layers_read == [] and len(stats.layers_cached) == 2
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE imgcheck_cache SET value = 'garbage'::bytea")
    _, stats = _inspect(monkeypatch, tmp_path / "c", ref, pg_url)
    assert len(stats.layers_read) == 2


def test_an_unreachable_shared_cache_only_makes_reads_local(tmp_path, monkeypatch, registry, caplog):
    pusher = Pusher(registry.url)
    digest = pusher.push_image("team/y", "v1", build_oci([BASE]))
    url = f"postgresql://nobody:pw@127.0.0.1:{free_port()}/none"
    facts, stats = _inspect(monkeypatch, tmp_path / "a", f"registry:{registry.host}/team/y@{digest}", url)
    assert facts.os.id == "debian" and len(stats.layers_read) == 1
    assert sum("shared cache unavailable" in r.getMessage() for r in caplog.records) == 1


def test_a_layer_being_read_elsewhere_is_waited_for_and_a_dead_readers_claim_taken_over(
    tmp_path, monkeypatch, registry, pg_url
):
    import threading

    pusher = Pusher(registry.url)
    one = build_oci([BASE, make_layer({"opt/one": b"1"})])
    base = json.loads(one.manifest)["layers"][0]["digest"]
    d1 = pusher.push_image("team/one", "v1", one)
    d2 = pusher.push_image("team/two", "v1", build_oci([BASE, make_layer({"opt/two": b"2"})]))
    d3 = pusher.push_image("team/three", "v1", build_oci([BASE, make_layer({"opt/three": b"3"})]))
    _, stats = _inspect(monkeypatch, tmp_path / "a", f"registry:{registry.host}/team/one@{d1}", pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        namespace, value = conn.execute(
            "SELECT namespace, value FROM imgcheck_cache WHERE kind = 'layer' AND key = %s", (base,)
        ).fetchone()
        # another reader is reading the base now: its entry is gone, its claim is live
        conn.execute("DELETE FROM imgcheck_cache WHERE key = %s", (base,))
        conn.execute(
            "INSERT INTO imgcheck_cache_claims VALUES (%s, %s, 'other:1:x', clock_timestamp() + interval '60 s')",
            (namespace, base),
        )

    def holder_finishes():
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("SELECT pg_sleep(1.5)")
            conn.execute(
                "INSERT INTO imgcheck_cache (kind, namespace, key, value) VALUES ('layer', %s, %s, %s)",
                (namespace, base, value),
            )
            conn.execute("DELETE FROM imgcheck_cache_claims WHERE key = %s", (base,))

    finisher = threading.Thread(target=holder_finishes)
    finisher.start()
    _, stats = _inspect(monkeypatch, tmp_path / "b", f"registry:{registry.host}/team/two@{d2}", pg_url)
    finisher.join()
    assert stats.layers_waited == [base] and base not in stats.layers_read and len(stats.layers_read) == 1
    # a reader that died holding its claim: the entry never comes, the expired claim is taken over
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DELETE FROM imgcheck_cache WHERE key = %s", (base,))
        conn.execute(
            "INSERT INTO imgcheck_cache_claims VALUES (%s, %s, 'dead:1:x', clock_timestamp() - interval '1 s')",
            (namespace, base),
        )
    _, stats = _inspect(monkeypatch, tmp_path / "c", f"registry:{registry.host}/team/three@{d3}", pg_url)
    assert base in stats.layers_read and stats.layers_waited == []
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT COUNT(*) FROM imgcheck_cache_claims").fetchone() == (0,)  # released
        assert conn.execute("SELECT COUNT(*) FROM imgcheck_cache WHERE key = %s", (base,)).fetchone() == (1,)


def test_the_cache_role_reads_and_shares_layers_and_cannot_touch_the_job_store(tmp_path, monkeypatch, registry, pg_url):
    """deploy/service-pg/cache-role.sql, run as the owner: the cache works under that role alone (claims
    included), and the role can neither read jobs nor delete cache entries."""
    import os
    import uuid

    from imgcheck.service.store_pg import PgStore

    PgStore(pg_url).close()  # the job store's tables, owned by the admin/job-store role
    sql_path = os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "service-pg", "cache-role.sql")
    password = uuid.uuid4().hex
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(open(sql_path, encoding="utf-8").read())
        conn.execute(f"ALTER ROLE imgcheck_cache PASSWORD '{password}'")
    head, _, rest = pg_url.partition("://")
    cache_url = f"{head}://imgcheck_cache:{password}@{rest.split('@', 1)[1]}"
    pusher = Pusher(registry.url)
    digest = pusher.push_image("team/role", "v1", build_oci([BASE, make_layer({"opt/r": b"r"})]))
    ref = f"registry:{registry.host}/team/role@{digest}"
    _, stats = _inspect(monkeypatch, tmp_path / "a", ref, cache_url)
    assert len(stats.layers_read) == 2
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DELETE FROM imgcheck_cache WHERE kind = 'facts'")
    _, stats = _inspect(monkeypatch, tmp_path / "b", ref, cache_url)
    assert stats.layers_read == [] and len(stats.layers_cached) == 2  # shared through the restricted role
    with psycopg.connect(cache_url, autocommit=True) as conn:
        for sql in ("SELECT COUNT(*) FROM jobs", "DELETE FROM imgcheck_cache", "CREATE TABLE x (i int)"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(sql)
