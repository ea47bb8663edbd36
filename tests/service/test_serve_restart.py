"""Durability: events accepted, `imgcheck serve` SIGKILLed mid-check, restarted: each image checked once.

The first process pulls from a "tarpit" (a listening socket nobody accepts on, so its one worker
blocks inside a real registry request); the restarted process is configured with the real
docker-registry holding the images. Nothing but the database carries the queue across the kill.
"""

from __future__ import annotations

import socket

import pytest
from imagebuild import build_oci, make_layer
from registryfixture import RegistryServer
from registrypush import Pusher
from servicekit import (
    ServiceProcess,
    db_rows,
    envelope,
    imgcheck_home,
    need_registry,
    post_event,
    wait_for,
    write_config,
)  # noqa: F401 (imgcheck_home is a fixture)

pytestmark = pytest.mark.registry


def test_sigkill_mid_queue_then_restart_checks_every_event_once(tmp_path, imgcheck_home):
    need_registry()
    registry = RegistryServer(str(tmp_path / "registry"))
    tarpit = socket.socket()
    tarpit.bind(("127.0.0.1", 0))
    tarpit.listen(64)  # the kernel completes handshakes; no one ever answers
    tarpit_host = f"127.0.0.1:{tarpit.getsockname()[1]}"
    db = str(tmp_path / "state" / "imgcheck.db")
    cfg = str(tmp_path / "imgcheck.toml")
    env = {"IMGCHECK_HOME": imgcheck_home}
    service = None
    try:
        pusher = Pusher(registry.url)
        digests = []
        for i in range(3):
            image = build_oci(
                [make_layer({"etc/os-release": b"ID=debian\nVERSION_ID=12\n", f"opt/app{i}": b"x" * (i + 1)})]
            )
            digests.append(pusher.push_image("team/app", f"v{i}", image))

        write_config(cfg, tarpit_host, database=db, workers=1)
        service = ServiceProcess(cfg, str(tmp_path), env)
        for i, digest in enumerate(digests):
            assert post_event(service.base, envelope("team/app", digest, tag=f"v{i}")).status_code == 202
        # a redelivery of the first event while the queue is busy
        assert post_event(service.base, envelope("team/app", digests[0], tag="v0")).json()["duplicates"] == 1
        wait_for(
            lambda: db_rows(db, "SELECT COUNT(*) FROM jobs WHERE state = 'running'")[0][0] == 1,
            20,
            "the worker to take a job",
        )
        service.kill()  # SIGKILL: no shutdown code runs
        states = db_rows(db, "SELECT state, attempts FROM jobs ORDER BY id")
        assert sorted(states) == [("queued", 0), ("queued", 0), ("running", 1)]
        assert db_rows(db, "SELECT COUNT(*) FROM results")[0][0] == 0

        write_config(cfg, registry.host, database=db, workers=1)  # same database, reachable registry
        service = ServiceProcess(cfg, str(tmp_path), env)
        wait_for(
            lambda: db_rows(db, "SELECT COUNT(*) FROM jobs WHERE state IN ('done', 'failed')")[0][0] == 3,
            60,
            "all three jobs to finish after the restart",
        )
        rows = db_rows(db, "SELECT digest, state, attempts, last_error FROM jobs ORDER BY id")
        assert [r[1] for r in rows] == ["done"] * 3, rows
        assert sorted(r[0] for r in rows) == sorted(digests)
        # the job that was running at the kill ran twice; the others once; none was lost
        assert sorted(r[2] for r in rows) == [1, 1, 2]
        # exactly one result per image and fleet
        results = db_rows(db, "SELECT digest, fleet, COUNT(*) FROM results GROUP BY digest, fleet ORDER BY 1, 2")
        assert results == sorted((d, f, 1) for d in digests for f in ("lab", "prod"))
        assert db_rows(db, "SELECT COUNT(*) FROM deliveries")[0][0] == 3
        # SIGTERM: uvicorn shuts down gracefully, then re-raises the signal (so -15, as systemd expects)
        assert service.terminate() in (0, -15)
        assert "Traceback" not in service.output()
    finally:
        if service is not None:
            service.kill()
        tarpit.close()
        registry.stop()
