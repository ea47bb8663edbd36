#!/usr/bin/env python3
"""Checks per minute of `imgcheck serve` with 1, 2 and 3 replicas on one PostgreSQL database, and the
share of layers not pulled from the registry (served by a cache: the replica's own or, with
IMGCHECK_CACHE_URL, the shared one; run again with --no-shared to separate the two).

N images sharing one base layer (each with its own top layer) are pushed to Debian's docker-registry;
for each replica count a fresh database and fresh $IMGCHECK_HOMEs are used, the replicas are started,
then one push event per image is posted round-robin and the clock runs until every job is done.
Layer pulls and bytes are counted by a small forwarding proxy per replica in front of the registry
(the registry's own access log is off in the test fixture), so registry bytes are known per replica.
With IMGCHECK_CACHE_URL a layer being read by one worker is claimed and the others wait for its facts
(shared_cache.py), so a burst of images on one new base pulls the base once in all.
Per run it records checks per minute, p50/p95 of push-to-result latency (jobs.finished_at -
created_at, database clock), replica CPU seconds per check (utime + stime of the serve processes,
from /proc) and the machine's load average before and after. Everything is on loopback; on a
2-core machine the replicas share the CPU, so the numbers show contention as much as scaling.

--base-rootfs PATH uses a real rootfs tar (e.g. an mmdebstrap minbase, as tests/rootfs.py builds) as
the base layer, gzip-compressed once (level 1, as tests/registrypush.py does), instead of a synthetic
--base-mib payload: the real case (a new base rolled out, many images built on it pushed together).

Usage: python benchmarks/bench_replicas.py [--images N] [--repos R] [--replicas 1,2,3] [--workers W]
       [--no-shared] [--base-mib M | --base-rootfs TAR] [--json PATH]
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
    """Forwards GET/HEAD to the registry and counts blob GETs (and their bytes) per digest."""

    def __init__(self, upstream: str):
        self.counts: dict[str, int] = {}
        self.bytes = 0
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
                        proxy.bytes += len(body)
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
            self.bytes = 0

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


def latencies(url: str) -> list[float]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT finished_at - created_at FROM jobs WHERE state = 'done' ORDER BY 1").fetchall()
    return [r[0] for r in rows]


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (and its waited-for children), from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / ticks


def done_count(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SELECT COUNT(*) FROM jobs WHERE state IN ('done', 'failed')").fetchone()[0]


def run_once(
    replicas: int,
    images: list[tuple[str, str]],
    layer_digests: set[str],
    proxies: list[CountingProxy],
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
                proxies[i].host,
                database=os.path.join(state, "l.db"),
                workers=workers,
                extra_server='database_url_env = "BENCH_PG_URL"\nlease_seconds = 30',
            )
            env = {"BENCH_PG_URL": url, "IMGCHECK_HOME": os.path.join(state, "home")}
            if shared:
                env["IMGCHECK_CACHE_URL"] = url
            procs.append(ServiceProcess(cfg, state, env))
        for proxy in proxies:
            proxy.reset()
        load_before = os.getloadavg()
        cpu_before = [cpu_seconds(p.proc.pid) for p in procs]
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
        cpu = sum(cpu_seconds(p.proc.pid) - before for p, before in zip(procs, cpu_before))
        pulled = sum(proxy.pulls(layer_digests) for proxy in proxies[:replicas])
        needed = 2 * len(images)  # base + own layer per image
        waits = latencies(url)
        return {
            "replicas": replicas,
            "workers_per_replica": workers,
            "images": len(images),
            "seconds": round(seconds, 2),
            "checks_per_minute": round(len(images) / seconds * 60, 1),
            "latency_p50_seconds": percentile(waits, 0.5),
            "latency_p95_seconds": percentile(waits, 0.95),
            "replica_cpu_seconds_per_check": round(cpu / len(images), 3),
            "registry_mib_per_replica": [round(p.bytes / (1 << 20), 1) for p in proxies[:replicas]],
            "registry_mib_total": round(sum(p.bytes for p in proxies[:replicas]) / (1 << 20), 1),
            "layer_pulls": pulled,
            "layers_needed": needed,
            "shared_cache": shared,
            "share_of_layers_not_pulled": round(1 - pulled / needed, 3),
            "loadavg_1m_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        }
    finally:
        for p in procs:
            p.terminate()
        drop_database(admin_url, name)


def push_on_real_base(pusher: Pusher, rootfs_tars: list[str], count: int, repos: int) -> tuple[list, set, dict]:
    """`count` images, each one of the real bases (in turn) plus its own small layer, spread over `repos`
    repositories.

    Each base blob is uploaded once and cross-mounted into the other repositories (distribution's
    `?mount=&from=`), as a registry holds a base shared by many repositories."""
    from imagebuild import LAYER_TYPES, compress, file_sha256, image_config, sha256
    from registrypush import OCI_MANIFEST, gzipped_rootfs

    first = "bench/app0"
    bases = []
    for tar in rootfs_tars:
        gz = gzipped_rootfs(tar)
        bases.append((tar, file_sha256(gz), file_sha256(tar), os.path.getsize(gz)))
        pusher.push_file_blob(first, gz)
    images, layers = [], {b[1] for b in bases}
    for i in range(count):
        repo = f"bench/app{i % repos}"
        _, base_digest, base_diff, base_size = bases[i % len(bases)]
        if not pusher.has_blob(repo, base_digest):
            resp = pusher.session.post(
                f"{pusher.base}/v2/{repo}/blobs/uploads/?mount={base_digest}&from={first}", timeout=60
            )
            assert resp.status_code == 201, (resp.status_code, resp.text)
        top = make_layer({f"opt/app{i}/VERSION": str(i).encode()})
        top_blob = compress(top, "gzip")
        pusher.push_blob(repo, top_blob)
        config = json.dumps(image_config([base_diff, sha256(top)]), sort_keys=True).encode()
        pusher.push_blob(repo, config)
        manifest = json.dumps(
            {
                "schemaVersion": 2,
                "mediaType": OCI_MANIFEST,
                "config": {
                    "mediaType": "application/vnd.oci.image.config.v1+json",
                    "digest": sha256(config),
                    "size": len(config),
                },
                "layers": [
                    {"mediaType": LAYER_TYPES["gzip"], "digest": base_digest, "size": base_size},
                    {"mediaType": LAYER_TYPES["gzip"], "digest": sha256(top_blob), "size": len(top_blob)},
                ],
            },
            sort_keys=True,
        ).encode()
        layers.add(sha256(top_blob))
        images.append((repo, pusher.push_manifest(repo, f"v{i}", manifest, OCI_MANIFEST)))
    info = {
        os.path.basename(tar): {
            "gzip_mib": round(size / (1 << 20), 1),
            "uncompressed_mib": round(os.path.getsize(tar) / (1 << 20), 1),
        }
        for tar, _, _, size in bases
    }
    return images, layers, info


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=30)
    parser.add_argument("--replicas", default="1,2,3")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--base-mib", type=float, default=8.0, help="size of the shared base layer's payload")
    parser.add_argument(
        "--base-rootfs", help="real rootfs tars (comma-separated) as the shared base layers, gzip-compressed once"
    )
    parser.add_argument("--repos", type=int, default=0, help="spread the images over this many repositories")
    parser.add_argument("--no-shared", action="store_true", help="without IMGCHECK_CACHE_URL")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    counts = [int(x) for x in args.replicas.split(",")]
    work = tempfile.mkdtemp(prefix="imgcheck-bench-replicas-")
    admin_url, pg = server_url()
    registry = RegistryServer(os.path.join(work, "registry"))
    proxies = [CountingProxy(registry.host) for _ in range(max(counts))]
    base_info: dict = {}
    try:
        pusher = Pusher(registry.url)
        repos = args.repos or args.images
        if args.base_rootfs:
            images, layer_digests, base_info = push_on_real_base(
                pusher, args.base_rootfs.split(","), args.images, repos
            )
        else:
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
                repo = f"bench/app{i % repos}"
                images.append((repo, pusher.push_image(repo, f"v{i}", built)))
        log(f"pushed {len(images)} images ({len(layer_digests)} distinct layers) {base_info}")
        results = []
        for r in counts:
            result = run_once(r, images, layer_digests, proxies, admin_url, args.workers, not args.no_shared, work)
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
                doc = {"cpus": os.cpu_count(), "shared": not args.no_shared, "base": base_info, "results": results}
                json.dump(doc, fh, indent=2)
    finally:
        for proxy in proxies:
            proxy.stop()
        registry.stop()
        if pg is not None:
            pg.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
