#!/usr/bin/env python3
"""Layer worker processes against threads, on the corpus OCI directory bench_inspect.py builds.

Interleaved rounds of: the 2-thread raw ISA-L inflate of the corpus layers (largest first), a
cold `imgcheck inspect` (layers in forked worker processes), and the same with one idle thread
started first (which makes imgcheck read its layers in threads instead). Prints medians and the
within-round ratios to the raw inflate.

Usage: python benchmarks/bench_layer_workers.py [ROUNDS]   (run bench_inspect.py once first)
"""

from __future__ import annotations

import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CACHE = os.environ.get("BENCH_CACHE", "/var/cache/imgcheck-bench")
RAW = ("import sys, os\nfrom isal import igzip\nfrom concurrent.futures import ThreadPoolExecutor\n"
       "def one(p):\n  with igzip.open(p,'rb') as f:\n    while f.read(1<<22): pass\n"
       "list(ThreadPoolExecutor(2).map(one, sorted(sys.argv[1:], key=lambda p: -os.path.getsize(p))))\n")
CLI = ("import sys, threading\n"
       "if sys.argv[1] == 'threads':\n  threading.Thread(target=threading.Event().wait, daemon=True).start()\n"
       "from imgcheck.cli.main import main\n"
       "sys.exit(main(['inspect', 'oci-dir:' + sys.argv[2], '-o', 'json', '-q', '--stats']))\n")


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    gz = sorted(glob.glob(os.path.join(CACHE, "layer-[0-9]-*[a-z].tar.gz")))
    oci = os.path.join(CACHE, "corpus-oci")
    if not gz or not os.path.exists(oci):
        print("no corpus: run benchmarks/bench_inspect.py first", file=sys.stderr)
        return 2
    runs: dict[str, list[float]] = {}
    for _ in range(rounds):
        for name, cmd in (("raw_isal_2_threads", [sys.executable, "-c", RAW, *gz]),
                          ("imgcheck_processes", [sys.executable, "-c", CLI, "processes", oci]),
                          ("imgcheck_threads", [sys.executable, "-c", CLI, "threads", oci])):
            home = tempfile.mkdtemp(prefix="imgcheck-bench-")
            start = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, env={**os.environ, "IMGCHECK_HOME": home})
            runs.setdefault(name, []).append(time.perf_counter() - start)
            shutil.rmtree(home)
    for name, times in runs.items():
        print(f"{name:22s} {statistics.median(times):6.2f} s  {[round(t, 2) for t in times]}")
    raw = runs["raw_isal_2_threads"]
    for name in ("imgcheck_processes", "imgcheck_threads"):
        ratio = statistics.median(t / r for t, r in zip(runs[name], raw))
        print(f"{name} / raw inflate: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
