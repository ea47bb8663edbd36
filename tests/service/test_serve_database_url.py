"""Choosing the store by URL (`database_url`, IMGCHECK_DATABASE_URL; SQLite stays the default), the CLI's
one-line errors for a bad or unreachable database, and /readyz vs /livez on a real PostgreSQL server."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import requests
from pgkit import pg_server_url, pg_url  # noqa: F401  (fixtures)
from registryfixture import free_port
from servicekit import ThreadedService, imgcheck_home, write_config  # noqa: F401

from imgcheck.errors import BadInputError
from imgcheck.service.config import load_config
from imgcheck.service.storage import open_store
from imgcheck.service.store import Store

BASE = """
[server]
{server}

[registries.main]
host = "registry.example.com"
secret = "s"

[fleets.prod]
node_facts = ["nodes/"]
"""


def cfg(tmp_path, server: str) -> str:
    p = tmp_path / "imgcheck.toml"
    p.write_text(BASE.format(server=server))
    (tmp_path / "nodes").mkdir(exist_ok=True)  # the fleet's node facts exist: start-up checks them first
    return str(p)


def test_sqlite_stays_the_default(tmp_path):
    c = load_config(cfg(tmp_path, 'database = "state/q.db"'), env={})
    assert c.database_url is None
    store = open_store(c.database, c.database_url)
    try:
        assert isinstance(store, Store) and store.path == str(tmp_path / "state" / "q.db")
    finally:
        store.close()


def test_url_from_the_config_its_env_form_or_imgcheck_database_url(tmp_path):
    url = "postgresql://u:p@db.example:5432/imgcheck"
    home = str(tmp_path / "home")
    inline = load_config(cfg(tmp_path, f'database_url = "{url}"'), env={"IMGCHECK_HOME": home})
    assert inline.database_url == url
    assert inline.database == os.path.join(home, "serve", "imgcheck.db")  # local state only (auth file)
    via_env = load_config(cfg(tmp_path, 'database_url_env = "PG"'), env={"PG": url})
    assert via_env.database_url == url
    default = load_config(cfg(tmp_path, 'database = "q.db"'), env={"IMGCHECK_DATABASE_URL": url})
    assert default.database_url == url
    path = str(tmp_path / "by-url" / "x.db")
    sqlite = load_config(cfg(tmp_path, f'database_url = "sqlite://{path}"'), env={})
    store = open_store(sqlite.database, sqlite.database_url)
    try:
        assert isinstance(store, Store) and store.path == path and os.path.exists(path)
    finally:
        store.close()


def test_bad_urls_are_one_line_errors(tmp_path):
    with pytest.raises(BadInputError, match="database_url must start with"):
        load_config(cfg(tmp_path, 'database_url = "mysql://x/y"'), env={})
    with pytest.raises(BadInputError, match="environment variable PG"):
        load_config(cfg(tmp_path, 'database_url_env = "PG"'), env={})
    with pytest.raises(BadInputError, match="`database` is required"):
        load_config(cfg(tmp_path, "workers = 1"), env={})


def _serve(config_path: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "imgcheck.cli.main", "serve", "--config", config_path, "--port", str(free_port())],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )


def test_serve_with_an_unreachable_database_exits_3_with_one_line(tmp_path):
    pytest.importorskip("psycopg")
    url = f"postgresql://imgcheck:hunter2@127.0.0.1:{free_port()}/imgcheck?connect_timeout=2"
    done = _serve(cfg(tmp_path, 'database_url_env = "PG"'), {"PG": url, "IMGCHECK_HOME": str(tmp_path / "h")})
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot connect to PostgreSQL" in lines[0] and "hunter2" not in lines[0], lines
    assert "Traceback" not in done.stderr


def test_readyz_follows_the_database_and_the_disk_livez_does_not(tmp_path, imgcheck_home, pg_url, pg_server_url):
    import psycopg
    from psycopg import sql

    config = write_config(
        str(tmp_path / "imgcheck.toml"),
        "127.0.0.1:9",
        database=str(tmp_path / "s" / "q.db"),
        extra_server=f'database_url = "{pg_url}"',
    )
    service = ThreadedService(config, start_workers=False)
    try:
        assert requests.get(service.base + "/readyz", timeout=10).json() == {"status": "ready"}
        # the layer cache's disk stops taking writes (a file where the directory should be)
        blocker = tmp_path / "not-a-dir"
        blocker.write_text("")
        os.environ["IMGCHECK_HOME"] = str(blocker / "home")
        r = requests.get(service.base + "/readyz", timeout=10)
        assert r.status_code == 503 and "not writable" in r.json()["problems"][0]
        os.environ["IMGCHECK_HOME"] = imgcheck_home
        # the database goes away: its connections are terminated and it no longer exists
        name = pg_url.rsplit("/", 1)[1]
        with psycopg.connect(pg_server_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
        r = requests.get(service.base + "/readyz", timeout=30)
        assert r.status_code == 503 and r.json()["problems"][0].startswith("database:"), r.text
        password = pg_url.split("@")[0].rsplit(":", 1)[1]
        assert password not in r.text and "***@" in r.text  # no credentials in the answer
        assert requests.get(service.base + "/livez", timeout=10).status_code == 200
        # a webhook now gets 503 (the sender retries) rather than a lost event
        from servicekit import envelope, post_event

        down = post_event(service.base, envelope("team/app", "sha256:" + "a" * 64))
        assert down.status_code == 503
        # and the outage is a metric, not only log lines; the scrape itself still answers
        metrics = requests.get(service.base + "/metrics", timeout=30)
        assert metrics.status_code == 200
        assert 'imgcheck_store_errors_total{operation="enqueue"} 1.0' in metrics.text
        assert 'imgcheck_store_errors_total{operation="counts"}' in metrics.text
    finally:
        service.stop()


def test_pull_credentials_work_with_only_a_database_url(tmp_path, monkeypatch, pg_url):
    """No `database` path: the private registry auth file goes under $IMGCHECK_HOME/serve/."""
    home = tmp_path / "home"
    monkeypatch.setenv("IMGCHECK_HOME", str(home))
    monkeypatch.setenv("REGISTRY_AUTH_FILE", "")
    p = tmp_path / "imgcheck.toml"
    p.write_text(
        BASE.replace('secret = "s"', 'secret = "s"\nusername = "bot"\npassword = "pw"').format(
            server=f'database_url = "{pg_url}"'
        )
    )
    (tmp_path / "nodes").mkdir()
    service = ThreadedService(str(p), start_workers=False)
    try:
        auth = home / "serve" / "registry-auth.json"
        assert os.environ["REGISTRY_AUTH_FILE"] == str(auth) and auth.stat().st_mode & 0o077 == 0
        assert requests.get(service.base + "/readyz", timeout=10).status_code == 200
    finally:
        service.stop()
