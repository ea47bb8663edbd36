"""/healthz (alive) vs /readyz (able to take and check pushes), the start-up preflight, and retention.

The full disk is real: a small tmpfs mounted for the state
directory, then filled up (needs root / CAP_SYS_ADMIN, skipped otherwise). A full disk is also what
"not writable" reports (the probe write fails with ENOSPC); a read-only remount cannot be tested
this way while SQLite holds the files open.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest
import requests
from servicekit import NODES, ServiceProcess, db_rows, envelope, imgcheck_home, post_event, write_config  # noqa: F401 (fixture)

from imgcheck.service.events import PushEvent
from imgcheck.service.store import FleetResult, Store

D1 = "sha256:" + "1" * 64
D2 = "sha256:" + "2" * 64


def ready(proc):
    resp = requests.get(proc.base + "/readyz", timeout=10)
    return resp.status_code, resp.json()


def test_mistyped_node_facts_path_fails_at_start_in_one_line(tmp_path, imgcheck_home):
    cfg = write_config(str(tmp_path / "c.toml"), "127.0.0.1:1", database=str(tmp_path / "q.db"))
    text = open(cfg).read().replace("lab-memlock.json", "lab-memlok.json")
    open(cfg, "w").write(text)
    run = subprocess.run(
        [sys.executable, "-m", "imgcheck.cli.main", "serve", "--config", cfg, "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 3, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "lab-memlok.json does not exist" in lines[0] and "Traceback" not in run.stderr


def test_node_facts_path_gone_after_start_fails_readiness_not_liveness(tmp_path, imgcheck_home):
    nodes = tmp_path / "lab-nodes"
    nodes.mkdir()
    shutil.copy(os.path.join(NODES, "lab-memlock.json"), nodes)
    cfg = write_config(str(tmp_path / "c.toml"), "127.0.0.1:1", database=str(tmp_path / "q.db"))
    text = open(cfg).read().replace(f'"{NODES}/lab-memlock.json"', f'"{nodes}"')
    open(cfg, "w").write(text)
    proc = ServiceProcess(cfg, str(tmp_path))
    try:
        assert ready(proc) == (200, {"status": "ready"})
        nodes.rename(tmp_path / "lab-nodes.old")
        status, body = ready(proc)
        assert status == 503 and any(f"{nodes} does not exist" in p for p in body["problems"])
        assert requests.get(proc.base + "/healthz", timeout=10).status_code == 200
    finally:
        proc.kill()


@pytest.fixture
def small_state_dir(tmp_path):
    mnt = tmp_path / "state"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN)")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill(directory) -> str:
    path = os.path.join(directory, "filler")
    with open(path, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    return path


def test_full_disk_fails_readiness_until_space_is_freed(tmp_path, imgcheck_home, small_state_dir):
    cfg = write_config(
        str(tmp_path / "c.toml"),
        "127.0.0.1:1",
        database=str(small_state_dir / "q.db"),
        extra_server="min_free_bytes = 524288",
    )
    proc = ServiceProcess(cfg, str(tmp_path))
    try:
        assert ready(proc) == (200, {"status": "ready"})
        filler = fill(small_state_dir)
        status, body = ready(proc)
        assert status == 503 and any("below min_free_bytes" in p for p in body["problems"]), body
        assert any("not writable" in p for p in body["problems"]), body
        assert requests.get(proc.base + "/healthz", timeout=10).status_code == 200  # alive, just not ready
        assert post_event(proc.base, envelope("team/app", D2)).status_code == 503  # the sender will retry
        os.unlink(filler)
        assert ready(proc)[0] == 200
        assert post_event(proc.base, envelope("team/app", D1)).status_code == 202
    finally:
        proc.kill()


def test_retention_deletes_old_finished_jobs_at_start(tmp_path, imgcheck_home):
    db = str(tmp_path / "q.db")
    store = Store(db)
    long_ago = time.time() - 30 * 86400
    for digest, when in ((D1, long_ago), (D2, time.time())):
        store.enqueue("main", [PushEvent("team/app", digest, "v1", f"e-{digest[7:12]}")], now=when)
        job = store.claim("old-process", 300, 8, now=when)
        assert store.complete(job, "old-process", [FleetResult("lab", "ok", '{"verdict": "ok"}')], now=when)
    store.close()
    cfg = write_config(str(tmp_path / "c.toml"), "127.0.0.1:1", database=db, extra_server="retention_days = 7")
    proc = ServiceProcess(cfg, str(tmp_path))
    try:
        assert requests.get(f"{proc.base}/results/{D1}", timeout=10).status_code == 404
        assert requests.get(f"{proc.base}/results/{D2}", timeout=10).json()["images"][0]["state"] == "done"
        for table in ("jobs", "results", "job_tags", "deliveries", "outbox"):
            assert db_rows(db, f"SELECT COUNT(*) FROM {table}")[0][0] <= 1, table
    finally:
        proc.kill()
