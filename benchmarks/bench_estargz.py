#!/usr/bin/env python3
"""eStargz (or zstd:chunked) read by range against the same layer read whole, from a local registry (issue 39).

The layer is the tests' real Debian bookworm rdma rootfs written as eStargz by the format's specification
(tests/estargzbuild.py; `--format zstd-chunked`: tests/zstdchunkedbuild.py); `--pad-mb N` adds N MB of incompressible files nobody wants (a CUDA-sized layer's bulk),
which a range read never fetches. Reports medians of a cold `inspect` (no caches) with range reads and with
--whole-layers, the compressed bytes each fetched, and the blob size.
Usage: python benchmarks/bench_estargz.py [--format estargz|zstd-chunked] [--runs 3] [--pad-mb 0] [--json OUT]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))


def padded(tar_path: str, pad_mb: int) -> bytes:
    with open(tar_path, "rb") as fh:
        data = fh.read()
    if not pad_mb:
        return data
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as src, tarfile.open(fileobj=out, mode="w:") as dst:
        for info in src:
            dst.addfile(info, src.extractfile(info) if info.isreg() else None)
        for i in range(pad_mb):
            info = tarfile.TarInfo(f"opt/bulk/blob{i:05d}.bin")
            info.size = 1 << 20
            dst.addfile(info, io.BytesIO(os.urandom(1 << 20)))
    return out.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pad-mb", type=int, default=0)
    ap.add_argument("--json")
    ap.add_argument("--format", choices=("estargz", "zstd-chunked"), default="estargz")
    args = ap.parse_args()

    import estargzbuild
    import zstdchunkedbuild
    from registryfixture import RegistryServer
    from registrypush import Pusher
    from rootfs import build_rootfs

    from imgcheck import api
    from imgcheck.sources.read_options import ReadOptions, ReadStats

    tar = padded(build_rootfs("bookworm"), args.pad_mb)
    work = tempfile.mkdtemp(prefix="imgcheck-bench-estargz-")
    server = RegistryServer(work)
    try:
        blob: bytes
        if args.format == "estargz":
            esgz = estargzbuild.from_tar(tar)
            estargzbuild.push_estargz(Pusher(server.url), "bench/esgz", esgz, esgz.toc_digest)
            blob = esgz.blob
        else:
            zc = zstdchunkedbuild.from_tar(tar)
            zstdchunkedbuild.push_zstd_chunked(
                Pusher(server.url), "bench/esgz", zc, zstdchunkedbuild.annotations_of(zc)
            )
            blob = zc.blob
        del tar
        ref = f"{server.host}/bench/esgz:latest"
        result: dict = {"format": args.format, "blob_bytes": len(blob), "pad_mb": args.pad_mb}
        for name, ranged in (("range", True), ("whole", False)):
            times, fetched = [], 0
            for _ in range(args.runs):
                stats = ReadStats()
                start = time.perf_counter()
                api.inspect_image(ref, ReadOptions(use_cache=False, stats=stats, range_reads=ranged))
                times.append(time.perf_counter() - start)
                fetched = stats.bytes_ranged if ranged else len(blob)
            result[name] = {"median_s": round(statistics.median(times), 3), "fetched_bytes": fetched}
        print(json.dumps(result, indent=2))
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(result, fh, indent=2)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
