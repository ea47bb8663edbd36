#!/usr/bin/env python3
"""Checks per minute of `imgcheck serve` with 1, 2 and 3 replicas on one PostgreSQL database, and the
share of layers not pulled from the registry (served by a cache: the replica's own or, with
IMGCHECK_CACHE_URL, the shared one; run again with --no-shared to separate the two).

N images sharing one base layer (each with its own top layer) are pushed to Debian's docker-registry;
for each replica count a fresh database and fresh $IMGCHECK_HOMEs are used, the replicas are started,
then one push event per image is posted round-robin and the clock runs until every job is done.
Layer pulls are counted by a small forwarding proxy in front of the registry (the registry's own
access log is off in the test fixture). There is no in-flight deduplication: workers that start on
the same new layer at the same moment each pull it, so small runs understate what sharing saves.
Everything is on loopback; on a 2-core machine the replicas share the CPU, so the numbers show
contention as much as scaling.

Usage: python benchmarks/bench_replicas.py [--images N] [--replicas 1,2,3] [--workers W] [--no-shared]
       [--base-mib M] [--json PATH]
PostgreSQL: $IMGCHECK_TEST_PG_URL (a superuser URL, as .ci/run exports), else a throwaway server from
Debian's binaries.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(ROOT, "tests"), os.path.join(ROOT, "tests", "service"), os.path.join(ROOT, "src")]

from imagebuild import build_oci, make_layer  # noqa: E402
from registryfixture import RegistryServer  # noqa: E402
from registrypush import Pusher  # noqa: E402
from servicekit import ServiceProcess, envelope, post_event, write_config  # noqa: E402

BLOB = re.compile(r"^/v2/.+/blobs/(sha256:[0-9a-f]{64})$")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class CountingProxy:
    """Forwards GET/HEAD to the registry and counts blob GETs per digest."""

    def __init__(self, upstream: str):
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self, method: str) -> None:
                conn = http.client.HTTPConnection(upstream, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                conn.request(method, self.path, headers=headers)
                resp = conn.getresponse()
                body = resp.read()
                m = BLOB.match(self.path.split("?")[0])
                if method == "GET" and m and resp.status == 200:
                    with proxy.lock:
                        proxy.counts[m.group(1)] = proxy.counts.get(m.group(1), 0) + 1
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("connection", "transfer-encoding", "content-length"):
                        self.send_header(k, v)
                self.send_header(
                    "Content-Length", str(len(body) if method == "GET" else resp.getheader("Content-Length") or 0)
                )
                self.end_headers()
                if method == "GET":
                    self.wfile.write(body)
                conn.close()

            def do_GET(self):
                self._forward("GET")

            def do_HEAD(self):
                self._forward("HEAD")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def pulls(self, digests: set[str]) -> int:
        with self.lock:
            return sum(n for d, n in self.counts.items() if d in digests)

    def reset(self) -> None:
        with self.lock:
            self.counts.clear()

    def stop(self) -> None:
        self.server.shutdown()


def server_url() -> tuple[str, object]:
    url = os.environ.get("IMGCHECK_TEST_PG_URL")
    if url:
        return url, None
    import pgkit

    bindir = pgkit._bindir()
    if bindir is None:
        sys.exit("bench_replicas: no PostgreSQL server binaries (apt-get install postgresql)")
    server = pgkit._Server(bindir)
    return server.url, server


def new_database(admin_url: str) -> tuple[str, str]:
    import psycopg
    from psycopg import sql

    name = f"imgcheck_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return admin_url.rsplit("/", 1)[0] + "/" + name, name


def drop_database(admin_url: str, name: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def done_count(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SELECT COUNT(*) FROM jobs WHERE state IN ('done', 'failed')").fetchone()[0]


def run_once(
    replicas: int,
    images: list[tuple[str, str]],
    layer_digests: set[str],
    proxy: CountingProxy,
    admin_url: str,
    workers: int,
    shared: bool,
    work: str,
) -> dict:
    url, name = new_database(admin_url)
    procs: list[ServiceProcess] = []
    try:
        for i in range(replicas):
            state = os.path.join(work, f"r{replicas}-{i}")
            os.makedirs(state, exist_ok=True)
            cfg = write_config(
                os.path.join(state, "imgcheck.toml"),
                proxy.host,
                database=os.path.join(state, "l.db"),
                workers=workers,
                extra_server='database_url_env = "BENCH_PG_URL"\nlease_seconds = 30',
            )
            env = {"BENCH_PG_URL": url, "IMGCHECK_HOME": os.path.join(state, "home")}
            if shared:
                env["IMGCHECK_CACHE_URL"] = url
            procs.append(ServiceProcess(cfg, state, env))
        proxy.reset()
        started = time.monotonic()
        for k, (repo, digest) in enumerate(images):
            r = post_event(procs[k % replicas].base, envelope(repo, digest, tag="v1"))
            assert r.status_code == 202, r.text
        deadline = started + 1800
        while done_count(url) < len(images):
            if time.monotonic() > deadline:
                raise SystemExit(f"bench_replicas: {replicas} replica(s) did not finish in 30 minutes")
            time.sleep(0.2)
        seconds = time.monotonic() - started
        pulled = proxy.pulls(layer_digests)
        needed = 2 * len(images)  # base + own layer per image
        return {
            "replicas": replicas,
            "workers_per_replica": workers,
            "images": len(images),
            "seconds": round(seconds, 2),
            "checks_per_minute": round(len(images) / seconds * 60, 1),
            "layer_pulls": pulled,
            "layers_needed": needed,
            "shared_cache": shared,
            "share_of_layers_not_pulled": round(1 - pulled / needed, 3),
        }
    finally:
        for p in procs:
            p.terminate()
        drop_database(admin_url, name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=30)
    parser.add_argument("--replicas", default="1,2,3")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--base-mib", type=float, default=8.0, help="size of the shared base layer's payload")
    parser.add_argument("--no-shared", action="store_true", help="without IMGCHECK_CACHE_URL")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    counts = [int(x) for x in args.replicas.split(",")]
    work = tempfile.mkdtemp(prefix="imgcheck-bench-replicas-")
    admin_url, pg = server_url()
    registry = RegistryServer(os.path.join(work, "registry"))
    proxy = CountingProxy(registry.host)
    try:
        pusher = Pusher(registry.url)
        base = make_layer(
            {
                "etc/os-release": b"ID=debian\nVERSION_ID=12\n",
                "usr/lib/base.bin": os.urandom(int(args.base_mib * 1024 * 1024)),
            }
        )
        images, layer_digests = [], set()
        for i in range(args.images):
            built = build_oci([base, make_layer({f"opt/app{i}": str(i).encode()})])
            manifest = json.loads(built.manifest)
            layer_digests |= {layer["digest"] for layer in manifest["layers"]}
            images.append((f"bench/app{i}", pusher.push_image(f"bench/app{i}", "v1", built)))
        log(f"pushed {len(images)} images ({len(layer_digests)} distinct layers)")
        results = []
        for r in counts:
            result = run_once(r, images, layer_digests, proxy, admin_url, args.workers, not args.no_shared, work)
            log(json.dumps(result))
            results.append(result)
        print(f"{'replicas':>8} {'checks/min':>11} {'seconds':>8} {'layer pulls':>12} {'not pulled':>11}")
        for r in results:
            print(
                f"{r['replicas']:>8} {r['checks_per_minute']:>11} {r['seconds']:>8} "
                f"{r['layer_pulls']:>5}/{r['layers_needed']:<6} {r['share_of_layers_not_pulled']:>11.0%}"
            )
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"cpus": os.cpu_count(), "shared": not args.no_shared, "results": results}, fh, indent=2)
    finally:
        proxy.stop()
        registry.stop()
        if pg is not None:
            pg.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
