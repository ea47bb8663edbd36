"""`imgcheck serve` logs one JSON object per line with time and level, uvicorn's lines included:
accepted webhooks, checks with their verdicts and timing, registry failures, re-queued jobs."""

from __future__ import annotations

import json

import pytest
from pgkit import pg_server_url, pg_url  # noqa: F401  (fixtures)
from registryfixture import RegistryServer, free_port
from registrypush import Pusher, push_rootfs_image
from servicekit import (
    ServiceProcess,
    envelope,
    imgcheck_home,
    need_registry,
    notifications_yaml,
    post_event,
    wait_for,
    write_config,
)  # noqa: F401 (fixture)

from imgcheck.service.events import PushEvent
from imgcheck.service.store import Store

D1 = "sha256:" + "9" * 64


def lines(proc: ServiceProcess) -> list[dict]:
    out = [l for l in proc.output().splitlines() if l.strip()]
    parsed = [json.loads(l) for l in out]  # every line is JSON, or this raises
    for rec in parsed:
        assert rec["level"] in ("debug", "info", "warning", "error", "critical") and rec["time"].endswith("Z")
    return parsed


def events(proc, name):
    return [r for r in lines(proc) if r.get("event") == name]


def test_registry_failure_and_requeue_are_logged_as_json(tmp_path, imgcheck_home):
    db = str(tmp_path / "q.db")
    # a job left `running` by a process that died: the next start re-queues it and says so
    store = Store(db)
    store.enqueue("main", [PushEvent("team/old", "sha256:" + "8" * 64, "v0", "e-old")])
    assert store.claim("dead-owner", 300, 8) is not None
    store.close()
    cfg = write_config(str(tmp_path / "c.toml"), "127.0.0.1:1", database=db)  # nothing listens on port 1
    proc = ServiceProcess(cfg, str(tmp_path), log_level="info")
    try:
        assert events(proc, "jobs.requeued")[0]["count"] == 1
        assert post_event(proc.base, envelope("team/app", D1, tag="v1")).status_code == 202
        wait_for(
            lambda: any(r["image"] == f"main:team/app@{D1}" for r in events(proc, "registry.unavailable")),
            30,
            "the registry failure to be logged",
        )
        failure = next(r for r in events(proc, "registry.unavailable") if r["image"] == f"main:team/app@{D1}")
        assert failure["level"] == "warning" and failure["attempt"] == 1 and failure["error"]
        assert failure["delay_seconds"] > 0
        accepted = events(proc, "webhook.accepted")
        assert accepted[0]["queued"] == 1 and accepted[0]["image"] == [f"team/app@{D1}"]
        # uvicorn's own lines are JSON too (its startup line, the access log)
        assert any(r["logger"].startswith("uvicorn") for r in lines(proc))
    finally:
        proc.kill()


@pytest.mark.registry
def test_check_done_line_has_image_verdicts_and_timing(tmp_path, imgcheck_home, rootfs):
    need_registry()
    port = free_port()
    registry = RegistryServer(str(tmp_path / "registry"), notifications_yaml(f"http://127.0.0.1:{port}/webhook"))
    db = str(tmp_path / "q.db")
    cfg = write_config(str(tmp_path / "c.toml"), registry.host, database=db)
    proc = None
    try:
        proc = ServiceProcess(cfg, str(tmp_path), log_level="info", port=port)
        digest = push_rootfs_image(Pusher(registry.url), "team/trainer", "v1", rootfs("bookworm"))
        wait_for(lambda: events(proc, "check.done"), 60, "the check to be logged")
        (done,) = events(proc, "check.done")
        assert done["image"] == f"main:team/trainer@{digest}"
        assert done["verdicts"] == {"lab": "fail", "prod": "ok"}
        assert done["seconds"] > 0 and done["level"] == "info"
    finally:
        if proc:
            proc.kill()
        registry.stop()


def test_library_lines_are_json_too_when_postgresql_goes_away(tmp_path, imgcheck_home, pg_url, pg_server_url):
    """psycopg_pool's reconnect warnings went to logging's plain-text last resort, breaking JSON lines."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'imgcheck[serve-pg]')")
    from psycopg import sql

    cfg = write_config(
        str(tmp_path / "c.toml"),
        "127.0.0.1:1",
        database=str(tmp_path / "q.db"),
        extra_server=f'database_url = "{pg_url}"',
    )
    proc = ServiceProcess(cfg, str(tmp_path), log_level="info")
    try:
        with psycopg.connect(pg_server_url, autocommit=True) as conn:
            name = pg_url.rsplit("/", 1)[1]
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
        assert post_event(proc.base, envelope("team/app", D1, tag="v1")).status_code == 503
        wait_for(
            lambda: any(r["logger"].startswith("psycopg") for r in lines(proc)), 30, "the pool's reconnect warnings"
        )
        assert events(proc, "store.failed")  # and every line parsed as JSON (lines() raises otherwise)
    finally:
        proc.kill()
