#!/usr/bin/env python3
"""A re-check after a wants change (a new extractor, a WANTS_FINGERPRINT bump) as a fraction of a cold check (issue 39).

The layer is the tests' real Debian bookworm rdma rootfs with `--pad-mb N` MB of real shared libraries of this
machine (renamed, so no want matches them) spread evenly between its members, so the wanted files lie throughout the
layer as in a CUDA layer; one gzip (or `--compression zstd`) layer of an OCI layout. For each mode, each run starts
from an empty $IMGCHECK_HOME: a cold `inspect` (which keeps the layer's file index), then the caches' keys are
changed as an upgrade with other wants changes them and the image is inspected again. Modes: `seek` (the default:
the cold read's one inflate takes seek points, view/zran.py), `stream` (IMGCHECK_SEEK_INDEX_MIN=0: the cold read is
ISA-L's, the re-read inflates in order up to the last wanted file; for `--compression tar` the re-read reads each
wanted file where it lies). Reports medians, bytes read, and the load.
With `--registry` both reads are of the same blob pushed to a local registry (Debian's docker-registry): the re-read
by HTTP Range from the seek points the registry's cold read took, or in order from the blob's stream without them.
Usage: python benchmarks/bench_reread.py [--runs 3] [--pad-mb 1024] [--compression gzip|zstd|tar] [--modes seek,stream]
       [--registry] [--json OUT]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import statistics
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib", "/usr/bin")


def _bulk_files(total: int) -> list[bytes]:
    """Real binaries of this machine, about `total` bytes, cycled if there are not enough."""
    found: list[bytes] = []
    size = 0
    for top in LIB_DIRS:
        for base, _dirs, files in os.walk(top):
            for name in sorted(files):
                path = os.path.join(base, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                try:
                    with open(path, "rb") as fh:
                        data = fh.read(64 << 20)
                except OSError:
                    continue
                if len(data) < 64 << 10:
                    continue
                found.append(data)
                size += len(data)
                if size >= total:
                    return found
    out = list(found)
    while found and size < total:
        out.extend(found)
        size += sum(len(d) for d in found)
    return out


def padded(tar_path: str, pad_mb: int) -> bytes:
    with open(tar_path, "rb") as fh:
        data = fh.read()
    if not pad_mb:
        return data
    bulk = _bulk_files(pad_mb << 20)
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as src, tarfile.open(fileobj=out, mode="w:") as dst:
        members = src.getmembers()
        every = max(1, len(members) // max(1, len(bulk)))
        pending = list(bulk)
        for i, info in enumerate(members):
            dst.addfile(info, src.extractfile(info) if info.isreg() else None)
            if i % every == 0 and pending:
                blob = pending.pop()
                pad = tarfile.TarInfo(f"opt/bulk/blob{len(pending):05d}.bin")
                pad.size = len(blob)
                dst.addfile(pad, io.BytesIO(blob))
        for n, blob in enumerate(pending):
            pad = tarfile.TarInfo(f"opt/bulk/rest{n:05d}.bin")
            pad.size = len(blob)
            dst.addfile(pad, io.BytesIO(blob))
    return out.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pad-mb", type=int, default=1024)
    ap.add_argument("--compression", choices=("gzip", "zstd", "tar"), default="gzip")
    ap.add_argument("--modes", default="seek,stream")
    ap.add_argument(
        "--registry",
        action="store_true",
        help="re-read from a local registry (Debian's docker-registry) holding the same blob: by HTTP Range from the "
        "seek points the OCI read kept (mode seek), in order without them (mode stream)",
    )
    ap.add_argument("--json")
    args = ap.parse_args()

    from imagebuild import build_oci, write_oci_dir
    from rootfs import build_rootfs

    from imgcheck import api
    from imgcheck.extractors import identity
    from imgcheck.sources.read_options import ReadOptions, ReadStats
    from imgcheck.view import zran

    work = tempfile.mkdtemp(prefix="imgcheck-bench-reread-")
    registry = None
    saved = (identity.LAYER_CACHE_NAMESPACE, identity.CACHE_NAMESPACE)
    try:
        tar = padded(build_rootfs("bookworm"), args.pad_mb)
        built = build_oci([tar], None if args.compression == "tar" else args.compression)
        uncompressed = len(tar)
        del tar
        ref = "oci-dir:" + write_oci_dir(os.path.join(work, "img"), built)
        blob = max(len(b) for b in built.blobs.values())
        again_ref, registry = ref, None
        if args.registry:  # both reads from the registry: its cold read keeps the record
            sys.path.insert(0, HERE)
            import bench_inspect
            from registrypush import Pusher

            os.makedirs(os.path.join(work, "registry"))
            registry, host = bench_inspect.start_registry(os.path.join(work, "registry"))
            Pusher(f"http://{host}").push_image("bench/reread", "v1", built)
            again_ref = ref = f"{host}/bench/reread:v1"
        del built
        result: dict = {
            "compression": args.compression,
            "pad_mb": args.pad_mb,
            "blob_bytes": blob,
            "uncompressed_bytes": uncompressed,
            "load_before": os.getloadavg(),
            "cpus": os.cpu_count(),
            "re_read_from": "registry" if args.registry else "oci-dir",
        }
        for mode in args.modes.split(","):
            os.environ["IMGCHECK_SEEK_INDEX_MIN"] = "1" if mode == "seek" else "0"
            cold_t, again_t, reread, reread_compressed = [], [], 0, 0
            for run in range(args.runs):
                os.environ["IMGCHECK_HOME"] = os.path.join(work, f"home-{mode}-{run}")
                identity.LAYER_CACHE_NAMESPACE, identity.CACHE_NAMESPACE = saved
                start = time.perf_counter()
                api.inspect_image(ref, ReadOptions(workers=1))
                cold_t.append(time.perf_counter() - start)
                identity.LAYER_CACHE_NAMESPACE = saved[0] + "\nbench: other wants"
                identity.CACHE_NAMESPACE = saved[1] + "\nbench: other wants"
                stats = ReadStats()
                start = time.perf_counter()
                api.inspect_image(again_ref, ReadOptions(workers=1, stats=stats))
                again_t.append(time.perf_counter() - start)
                assert stats.layers_reread, "the re-check did not use the file index"
                reread, reread_compressed = stats.bytes_reread, stats.bytes_reread_compressed
            cold, again = statistics.median(cold_t), statistics.median(again_t)
            result[mode] = {
                "cold_median_s": round(cold, 3),
                "after_wants_change_median_s": round(again, 3),
                "fraction_of_cold": round(again / cold, 3),
                "reread_inflated_bytes": reread,
                "reread_compressed_bytes": reread_compressed,
                "cold_s": [round(t, 3) for t in cold_t],
                "after_s": [round(t, 3) for t in again_t],
            }
        result["load_after"] = os.getloadavg()
        result["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        result["seek_inflate"] = zran.lib().name if zran.lib() is not None else None
        print(json.dumps(result, indent=2))
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(result, fh, indent=2)
    finally:
        identity.LAYER_CACHE_NAMESPACE, identity.CACHE_NAMESPACE = saved
        if registry is not None:
            registry.terminate()
            registry.wait()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
