#!/usr/bin/env python3
"""The CPU a verified cold read cannot avoid, against what imgcheck spends: where a cold read's time goes.

A cold read must inflate every gzip layer and hash every compressed byte (the blob digest) and every inflated byte
(the config's diff_id); imgcheck checks both, always. This measures, on the same layers, each as its own process:

  inflate        ISA-L inflate alone, serial: the "single-core floor" docs/benchmarks.md compares against
  verified       ISA-L inflate + sha256 of the compressed and of the inflated bytes, serial: the work a verified
                 read has to do
  verified-2t    the same in 2 threads, largest layer first (ISA-L and hashlib release the GIL): a verified read
                 with both cores busy and nothing else (no tar walk, no registry, no Python start-up)
  imgcheck       `imgcheck inspect --no-cache` of the OCI directory (its layer workers, walk, facts)

with wall time and user+system CPU seconds of each (CPU seconds move much less than wall time on this shared
machine). The bound: a 2-core read takes at least verified CPU / 2 seconds; that over the inflate floor's wall
time is the lowest ratio "cold vs the single-core floor" any verified read can reach on this machine.

Usage: python benchmarks/bench_floor.py [--synthetic-gb 10] [--runs 1] [--json OUT]
Builds (or reuses) the image bench_inspect.py builds, in $BENCH_CACHE.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_inspect as corpus  # noqa: E402  (the corpus and the synthetic image)

WORK = r"""
import hashlib, os, sys
from concurrent.futures import ThreadPoolExecutor
from isal import igzip
mode, threads, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

class Hashed:  # the compressed bytes as ISA-L reads them, hashed on the way (as a VerifyingReader does)
    def __init__(self, fh, h):
        self.fh, self.h = fh, h
    def readable(self):
        return True
    def readinto(self, b):
        n = self.fh.readinto(b)
        if self.h is not None and n:
            self.h.update(memoryview(b)[:n])
        return n
    def read(self, n=-1):
        data = self.fh.read(n)
        if self.h is not None:
            self.h.update(data)
        return data

def one(path):
    verified = mode == "verified"
    inflated = hashlib.sha256()
    buf, out = bytearray(1 << 20), 0
    with open(path, "rb", buffering=0) as fh, igzip.open(Hashed(fh, hashlib.sha256() if verified else None)) as gz:
        while n := gz.readinto(buf):
            out += n
            if verified:
                inflated.update(memoryview(buf)[:n])
    return out

paths = sorted(paths, key=lambda p: -os.path.getsize(p))  # largest first, as imgcheck
if threads > 1:
    total = sum(ThreadPoolExecutor(threads).map(one, paths))
else:
    total = sum(one(p) for p in paths)
print(total)
"""


def measured(cmd: list[str], env: dict | None = None) -> dict:
    """Wall seconds and the CPU seconds (user + system) of one child process tree."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu}


def ratios(med: dict) -> dict:
    """Against the single-core floor, taken as the serial inflate's CPU seconds (its wall time on a quiet machine):
    the 2-core bound of a verified read and imgcheck's CPU on 2 cores; and the loaded wall-time ratios of the round."""
    floor = med["inflate"]["cpu"]
    return {
        "verified_2core_bound_vs_floor (verified cpu / 2 / inflate cpu)": med["verified"]["cpu"] / 2 / floor,
        "imgcheck_cpu_on_2_cores_vs_floor (imgcheck cpu / 2 / inflate cpu)": med["imgcheck"]["cpu"] / 2 / floor,
        "imgcheck_cpu_vs_verified_cpu": med["imgcheck"]["cpu"] / med["verified"]["cpu"],
        "imgcheck_wall_vs_verified_2t_wall (same round)": med["imgcheck"]["wall"] / med["verified-2t"]["wall"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--synthetic-gb", type=float)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--json")
    args = parser.parse_args()

    tars = corpus.split_layers(corpus.corpus_rootfs())
    if args.synthetic_gb:
        tars = corpus.synthetic_layers(tars, args.synthetic_gb)
    image = corpus.oci_image(tars)
    tag = f"-synthetic-{args.synthetic_gb:g}g" if args.synthetic_gb else ""
    oci_dir = corpus.write_oci_dir(image, os.path.join(corpus.CACHE, f"corpus-oci{tag}"))
    gz = [layer["path"] for layer in image["layers"]]
    kinds = {
        "inflate": [sys.executable, "-c", WORK, "inflate", "1", *gz],
        "verified": [sys.executable, "-c", WORK, "verified", "1", *gz],
        "verified-2t": [sys.executable, "-c", WORK, "verified", "2", *gz],
    }
    rounds: list[dict] = []
    load_before = os.getloadavg()
    for _ in range(args.runs):  # interleaved: each round measures everything once
        one: dict = {kind: measured(cmd) for kind, cmd in kinds.items()}
        home = tempfile.mkdtemp(prefix="imgcheck-bench-floor-")
        one["imgcheck"] = measured(
            [sys.executable, "-m", "imgcheck.cli.main", "inspect", "-q", "--no-cache", f"oci-dir:{oci_dir}"],
            env={**os.environ, "IMGCHECK_HOME": home},
        )
        rounds.append(one)
        corpus.log(json.dumps(one))
    med = {k: {m: statistics.median(r[k][m] for r in rounds) for m in ("wall", "cpu")} for k in rounds[0]}
    results = {
        "image": {
            "layers": len(tars),
            "uncompressed_bytes": sum(os.path.getsize(t) for t in tars),
            "compressed_bytes": sum(layer["size"] for layer in image["layers"]),
            "synthetic_gb": args.synthetic_gb,
        },
        "runs": args.runs,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "median": med,
        "rounds": rounds,
        "ratios": ratios(med),
    }
    print(json.dumps(results, indent=2))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
