"""Several `imgcheck serve` processes on one real PostgreSQL database, with replicas SIGKILLed.

- Replica A pulls from a "tarpit" (a socket nobody answers on), so its one worker holds one job's
  lease inside a real registry request; A is then SIGKILLed and its job must be taken over by
  another replica once the lease expires (no start-up requeue can happen: A never comes back).
- Replica B acknowledges a batch of events and is SIGKILLed at once, perhaps mid-check.
- Every acknowledged event still ends with exactly one result per (image, fleet), and every live
  replica answers the API identically (B and C, then C and a replica D started afterwards).
"""

from __future__ import annotations

import socket

import pytest
import requests
from imagebuild import build_oci, make_layer
from pgkit import pg_server_url, pg_url  # noqa: F401  (fixtures)
from registryfixture import RegistryServer
from registrypush import Pusher
from servicekit import ServiceProcess, envelope, imgcheck_home, need_registry, post_event, wait_for, write_config  # noqa: F401

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'imgcheck[serve-pg]')")

pytestmark = pytest.mark.registry
LEASE = 2  # seconds: short, so a dead replica's job is free again quickly


def _rows(url: str, sql: str, args=()) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql, args).fetchall()


def _replica(tmp_path, name: str, registry_host: str, pg_url: str, env: dict, workers: int = 2) -> ServiceProcess:
    state = tmp_path / name
    state.mkdir(exist_ok=True)
    cfg = write_config(
        str(state / "imgcheck.toml"),
        registry_host,
        database=str(state / "local.db"),
        workers=workers,
        extra_server=f'database_url_env = "TEST_PG_URL"\nlease_seconds = {LEASE}',
    )
    return ServiceProcess(cfg, str(state), {**env, "TEST_PG_URL": pg_url, "IMGCHECK_HOME": str(state / "home")})


def _same_answers(a: ServiceProcess, b: ServiceProcess, digests: list[str]) -> None:
    for path in [f"/results/{d}" for d in digests] + ["/images/team/app"]:
        left = requests.get(a.base + path, timeout=10)
        right = requests.get(b.base + path, timeout=10)
        assert left.status_code == right.status_code == 200, (path, left.text)
        assert left.json() == right.json(), path


def test_replicas_share_the_queue_and_survive_sigkill(tmp_path, imgcheck_home, pg_url):
    need_registry()
    registry = RegistryServer(str(tmp_path / "registry"))
    tarpit = socket.socket()
    tarpit.bind(("127.0.0.1", 0))
    tarpit.listen(64)  # the kernel completes handshakes; no one ever answers
    tarpit_host = f"127.0.0.1:{tarpit.getsockname()[1]}"
    env = {"IMGCHECK_REGISTRY_TIMEOUT": "120"}  # A's request must outlive the test, not time out
    replicas: list[ServiceProcess] = []
    try:
        pusher = Pusher(registry.url)
        digests = []
        for i in range(8):
            image = build_oci(
                [make_layer({"etc/os-release": b"ID=debian\nVERSION_ID=12\n", f"opt/app{i}": b"x" * (i + 1)})]
            )
            digests.append(pusher.push_image("team/app", f"v{i}", image))
        first, second = digests[:5], digests[5:]

        a = _replica(tmp_path, "a", tarpit_host, pg_url, env, workers=1)  # exactly one job held
        replicas.append(a)
        for i, d in enumerate(first):
            assert post_event(a.base, envelope("team/app", d, tag=f"v{i}")).status_code == 202
        held = wait_for(
            lambda: _rows(pg_url, "SELECT id, lease_owner FROM jobs WHERE state = 'running'"),
            30,
            "replica A to take a job",
        )
        assert len(held) == 1 and held[0][1].split(":")[1] == str(a.proc.pid)  # A's one worker, in the tarpit
        held_ids = [held[0][0]]

        b = _replica(tmp_path, "b", registry.host, pg_url, env)
        c = _replica(tmp_path, "c", registry.host, pg_url, env)
        replicas += [b, c]
        # a redelivery to another replica is a duplicate there too: the dedup lives in the database
        again = post_event(c.base, envelope("team/app", first[0], tag="v0")).json()
        assert (again["queued"], again["duplicates"]) == (0, 1)
        wait_for(
            lambda: _rows(pg_url, "SELECT COUNT(*) FROM jobs WHERE state = 'done'")[0][0] == 5 - len(held),
            90,
            "B and C to check the jobs A does not hold",
        )
        a.kill()  # SIGKILL while holding leases; A never restarts
        wait_for(
            lambda: _rows(pg_url, "SELECT COUNT(*) FROM jobs WHERE state = 'done'")[0][0] == 5,
            90,
            "the dead replica's jobs to be taken over after their leases expired",
        )
        taken = _rows(pg_url, "SELECT id, attempts, state FROM jobs WHERE id = ANY(%s) ORDER BY id", (held_ids,))
        assert taken == [(i, 2, "done") for i in held_ids]  # a second attempt, by a live replica
        _same_answers(b, c, first)

        for i, d in enumerate(second, start=len(first)):
            assert post_event(b.base, envelope("team/app", d, tag=f"v{i}")).status_code == 202
        b.kill()  # acknowledged, then SIGKILL: perhaps before, perhaps during their checks
        wait_for(
            lambda: _rows(pg_url, "SELECT COUNT(*) FROM jobs WHERE state = 'done'")[0][0] == 8,
            90,
            "C to check what B acknowledged",
        )

        rows = _rows(pg_url, "SELECT digest, state, last_error FROM jobs ORDER BY id")
        assert sorted(r[0] for r in rows) == sorted(digests) and {r[1] for r in rows} == {"done"}, rows
        counts = _rows(pg_url, "SELECT digest, fleet, COUNT(*) FROM results GROUP BY digest, fleet ORDER BY 1, 2")
        assert counts == sorted((d, f, 1) for d in digests for f in ("lab", "prod"))
        # the lab fleet's node has a memlock limit too low for RDMA: the verdicts are real checks
        verdicts = _rows(pg_url, "SELECT DISTINCT fleet, verdict FROM results ORDER BY 1")
        assert ("lab", "ok") not in verdicts, verdicts

        d = _replica(tmp_path, "d", registry.host, pg_url, env)
        replicas.append(d)
        _same_answers(c, d, digests)
        assert requests.get(d.base + "/readyz", timeout=10).json() == {"status": "ready"}
        for r in (c, d):
            assert r.terminate() in (0, -15)
            assert "Traceback" not in r.output()
    finally:
        for r in replicas:
            r.kill()
        tarpit.close()
        registry.stop()
