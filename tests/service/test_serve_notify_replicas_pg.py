"""One notification per result with three `imgcheck serve` replicas on one PostgreSQL database.

Real chain: images pushed to Debian's docker-registry, events posted to the replicas, every replica's
outbox sender polling the same outbox. The receiver counts POSTs per (digest, fleet): each result is
notified exactly once (the issue measured 84-108 POSTs for 60 results before outbox rows were leased).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from imagebuild import build_oci, make_layer
from pgkit import pg_server_url, pg_url  # noqa: F401  (fixtures)
from registryfixture import RegistryServer
from registrypush import Pusher
from servicekit import ServiceProcess, envelope, imgcheck_home, need_registry, post_event, wait_for, write_config  # noqa: F401

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'imgcheck[serve-pg]')")

pytestmark = pytest.mark.registry
IMAGES = 10


class Counting(BaseHTTPRequestHandler):
    posts: Counter = Counter()
    lock = threading.Lock()

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with type(self).lock:
            type(self).posts[(body["digest"], body["fleet"])] += 1
        self.send_response(204)
        self.end_headers()


def _rows(url: str, sql: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()


def test_three_replicas_send_each_notification_once(tmp_path, imgcheck_home, pg_url):
    need_registry()
    registry = RegistryServer(str(tmp_path / "registry"))
    Counting.posts = Counter()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    hook = f"http://127.0.0.1:{httpd.server_address[1]}/hook"
    replicas: list[ServiceProcess] = []
    try:
        pusher = Pusher(registry.url)
        digests = [
            pusher.push_image(
                "team/app",
                f"v{i}",
                build_oci([make_layer({"etc/os-release": b"ID=debian\nVERSION_ID=12\n", f"opt/a{i}": b"x" * i})]),
            )
            for i in range(IMAGES)
        ]
        for name in ("a", "b", "c"):
            state = tmp_path / name
            state.mkdir()
            cfg = write_config(
                str(state / "imgcheck.toml"),
                registry.host,
                database=str(state / "local.db"),
                extra_server='database_url_env = "TEST_PG_URL"',
                notify=f'[notify]\nurl = "{hook}"\nverdicts = ["ok", "warn", "fail"]\n',
            )
            replicas.append(
                ServiceProcess(cfg, str(state), {"TEST_PG_URL": pg_url, "IMGCHECK_HOME": str(state / "home")})
            )
        for i, d in enumerate(digests):  # spread over the replicas, as a Service would
            assert post_event(replicas[i % 3].base, envelope("team/app", d, tag=f"v{i}")).status_code == 202
        wait_for(
            lambda: (
                _rows(pg_url, "SELECT COUNT(*) FROM results")[0][0] == 2 * IMAGES
                and _rows(pg_url, "SELECT COUNT(*) FROM outbox")[0][0] == 0
            ),
            120,
            "every result to be checked and notified",
        )
        # a repeat would have been sent while its row was still in the outbox, i.e. before this point
        for r in replicas:
            r.terminate()
        assert set(Counting.posts) == {(d, f) for d in digests for f in ("lab", "prod")}
        assert set(Counting.posts.values()) == {1}, Counting.posts
        for r in replicas:
            assert "Traceback" not in r.output()
    finally:
        for r in replicas:
            r.kill()
        httpd.shutdown()
        registry.stop()
