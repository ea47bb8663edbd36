"""A base layer read once across three `imgcheck serve` replicas (in-flight work sharing).

Real chain: six images on one base layer pushed to Debian's docker-registry; three replicas (two workers
each, separate $IMGCHECK_HOMEs, one PostgreSQL for jobs and IMGCHECK_CACHE_URL) check them at once. They
pull through a loopback proxy that counts blob GETs and answers each after a second, as a slow link
would, so every worker is inside the base layer's read at the same time. Without the claims each replica
read the base (the issue measured 1.56x the bytes of one replica on a quiet machine, about 2x on a busy one).
"""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
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
IMAGES = 6
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization"}


class CountingProxy:
    """Forwards GET/HEAD to the registry; counts blob GETs by digest and delays each by `delay` seconds."""

    def __init__(self, upstream: str, delay: float):
        self.blob_gets: Counter = Counter()
        lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _forward(self, method: str) -> None:
                if method == "GET" and "/blobs/sha256:" in self.path:
                    with lock:
                        proxy.blob_gets[self.path.rsplit("/", 1)[1]] += 1
                    time.sleep(delay)
                conn = http.client.HTTPConnection(upstream, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP and k.lower() != "host"}
                conn.request(method, self.path, headers=headers)
                resp = conn.getresponse()
                body = resp.read()
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in HOP and k.lower() != "content-length":
                        self.send_header(k, v)
                self.send_header("Content-Length", resp.getheader("Content-Length") or str(len(body)))
                self.end_headers()
                if method == "GET":
                    self.wfile.write(body)
                conn.close()

            def do_GET(self):
                self._forward("GET")

            def do_HEAD(self):
                self._forward("HEAD")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()


def _rows(url: str, sql: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()


def test_three_replicas_read_a_shared_base_layer_once(tmp_path, imgcheck_home, pg_url):
    need_registry()
    registry = RegistryServer(str(tmp_path / "registry"))
    proxy = CountingProxy(registry.host, delay=1.0)
    replicas: list[ServiceProcess] = []
    try:
        base = make_layer(
            {
                "etc/os-release": b"ID=debian\nVERSION_ID=12\n",
                "usr/share/base.bin": os.urandom(2 << 20),  # incompressible: a real read
            }
        )
        pusher = Pusher(registry.url)
        images = [build_oci([base, make_layer({f"opt/app{i}": b"x" * (i + 1)})]) for i in range(IMAGES)]
        digests = [pusher.push_image("team/app", f"v{i}", image) for i, image in enumerate(images)]
        layers = [[entry["digest"] for entry in json.loads(image.manifest)["layers"]] for image in images]
        base_digest = layers[0][0]
        assert {ls[0] for ls in layers} == {base_digest}  # one base blob under all six
        for name in ("a", "b", "c"):
            state = tmp_path / name
            state.mkdir()
            cfg = write_config(
                str(state / "imgcheck.toml"),
                proxy.host,
                database=str(state / "local.db"),
                extra_server='database_url_env = "TEST_PG_URL"',
            )
            env = {"TEST_PG_URL": pg_url, "IMGCHECK_CACHE_URL": pg_url, "IMGCHECK_HOME": str(state / "home")}
            replicas.append(ServiceProcess(cfg, str(state), env, log_level="info"))
        for i, d in enumerate(digests):
            assert post_event(replicas[i % 3].base, envelope("team/app", d, tag=f"v{i}")).status_code == 202
        wait_for(
            lambda: _rows(pg_url, "SELECT COUNT(*) FROM jobs WHERE state = 'done'")[0][0] == IMAGES,
            180,
            "every image to be checked",
        )
        assert _rows(pg_url, "SELECT COUNT(*) FROM results")[0][0] == 2 * IMAGES
        # the base layer pulled once in all, each image's own layer once
        assert proxy.blob_gets[base_digest] == 1, proxy.blob_gets
        assert [proxy.blob_gets[ls[1]] for ls in layers] == [1] * IMAGES, proxy.blob_gets
        # the work was spread: more than one replica checked images (not one replica doing everything)
        assert sum('"check.done"' in r.output() for r in replicas) >= 2
        assert _rows(pg_url, "SELECT COUNT(*) FROM imgcheck_cache_claims") == [(0,)]  # all released
        for r in replicas:
            assert r.terminate() in (0, -15)
            assert "Traceback" not in r.output()
    finally:
        for r in replicas:
            r.kill()
        proxy.stop()
        registry.stop()
