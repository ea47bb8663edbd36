#!/usr/bin/env python3
"""Inflate one gzip layer: ISA-L on one core against rapidgzip's parallel decoder, per layer size.

For each gzip file given, in interleaved rounds (this shared machine's speed drifts over minutes), medians of
wall and CPU time of:
  isal            ISA-L inflate alone, one core (the floor the inspect benchmark compares with)
  rapidgzip-N     rapidgzip inflate alone, N threads (parallelization=N), N = 1 and the core count
  isal+digests    what imgcheck does with a layer from an OCI directory, less the tar walk: sha256 of the
                  compressed bytes as read, ISA-L inflate, sha256 of every inflated byte (the diff_id)
  rapidgzip+digests  the same with rapidgzip (the compressed sha256 in a thread of its own, since rapidgzip
                  reads the file out of order from its own handle; the diff_id over its output in order)
and the machine's load average before and after. Usage:
  python benchmarks/bench_inflate.py [--runs 3] [--json OUT] LAYER.tar.gz ...
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import threading
import time

BUF = 1 << 20


def isal_inflate(path: str, digests: bool) -> int:
    from isal import igzip

    total, buf = 0, bytearray(BUF)
    view = memoryview(buf)
    raw_hash, out_hash = hashlib.sha256(), hashlib.sha256()

    class Hashing:
        def __init__(self, fh):
            self.fh = fh

        def readable(self):
            return True

        def readinto(self, b):
            n = self.fh.readinto(b)
            raw_hash.update(memoryview(b)[:n])
            return n

        def read(self, n=-1):
            data = self.fh.read(n)
            raw_hash.update(data)
            return data

    with open(path, "rb") as fh:
        gz = igzip.GzipFile(fileobj=Hashing(fh) if digests else fh, mode="rb")
        readinto = gz._buffer.readinto
        while n := readinto(buf):
            total += n
            if digests:
                out_hash.update(view[:n])
    return total


def rapidgzip_inflate(path: str, threads: int, digests: bool) -> int:
    import rapidgzip

    total, buf = 0, bytearray(BUF)
    view = memoryview(buf)
    out_hash = hashlib.sha256()
    hasher = None
    if digests:

        def hash_file() -> None:
            h = hashlib.sha256()
            with open(path, "rb") as fh:
                while chunk := fh.read(BUF):
                    h.update(chunk)

        hasher = threading.Thread(target=hash_file)
        hasher.start()
    with rapidgzip.RapidgzipFile(path, parallelization=threads) as gz:
        while n := gz.readinto(buf):
            total += n
            if digests:
                out_hash.update(view[:n])
    if hasher is not None:
        hasher.join()
    return total


def timed(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("layers", nargs="+")
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    try:
        import rapidgzip  # noqa: F401
    except ImportError:
        print("rapidgzip is not installed (pip install rapidgzip): only ISA-L is measured", file=sys.stderr)
        have_rg = False
    else:
        have_rg = True
    cases = {"isal": lambda p: isal_inflate(p, False), "isal+digests": lambda p: isal_inflate(p, True)}
    if have_rg:
        cases["rapidgzip-1"] = lambda p: rapidgzip_inflate(p, 1, False)
        cases[f"rapidgzip-{cores}"] = lambda p: rapidgzip_inflate(p, cores, False)
        cases["rapidgzip+digests"] = lambda p: rapidgzip_inflate(p, cores, True)
    result = {"cores": cores, "load_before": os.getloadavg(), "layers": []}
    for path in args.layers:
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, fn in cases.items():
                times[name].append(timed(lambda fn=fn, path=path: fn(path)))
        row = {
            "path": os.path.basename(path),
            "compressed_bytes": os.path.getsize(path),
            "inflated_bytes": isal_inflate(path, False),
        }
        for name, runs in times.items():
            row[name] = {
                "wall_s": round(statistics.median(w for w, _ in runs), 3),
                "cpu_s": round(statistics.median(c for _, c in runs), 3),
            }
        result["layers"].append(row)
        line = ", ".join(f"{n} {row[n]['wall_s']:.2f}s" for n in cases)
        print(
            f"{row['path']} ({row['compressed_bytes'] / 1e6:.0f} MB gzip, {row['inflated_bytes'] / 1e6:.0f} MB): {line}"
        )
    result["load_after"] = os.getloadavg()
    print(f"load average before {result['load_before']}, after {result['load_after']}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
