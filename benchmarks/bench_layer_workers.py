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
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_inspect import CACHE, raw_decompress, run_measured  # noqa: E402  (the same floor and timer)

CLI = (
    "import sys, threading\n"
    "if sys.argv[1] == 'threads':\n  threading.Thread(target=threading.Event().wait, daemon=True).start()\n"
    "from imgcheck.cli.main import main\n"
    "sys.exit(main(['inspect', 'oci-dir:' + sys.argv[2], '-o', 'json', '-q']))\n"
)


def cold(mode: str, oci: str) -> float:
    home = tempfile.mkdtemp(prefix="imgcheck-bench-")
    try:
        return run_measured([sys.executable, "-c", CLI, mode, oci], {**os.environ, "IMGCHECK_HOME": home})[0]
    finally:
        shutil.rmtree(home)


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    gz = sorted(glob.glob(os.path.join(CACHE, "layer-[0-9]-*[a-z].tar.gz")))
    oci = os.path.join(CACHE, "corpus-oci")
    if not gz or not os.path.exists(oci):
        print("no corpus: run benchmarks/bench_inspect.py first", file=sys.stderr)
        return 2
    runs: dict[str, list[float]] = {}
    for _ in range(rounds):
        runs.setdefault("raw_isal_2_threads", []).append(raw_decompress(gz, parallel=True))
        runs.setdefault("imgcheck_processes", []).append(cold("processes", oci))
        runs.setdefault("imgcheck_threads", []).append(cold("threads", oci))
    for name, times in runs.items():
        print(f"{name:22s} {statistics.median(times):6.2f} s  {[round(t, 2) for t in times]}")
    raw = runs["raw_isal_2_threads"]
    for name in ("imgcheck_processes", "imgcheck_threads"):
        ratio = statistics.median(t / r for t, r in zip(runs[name], raw))
        print(f"{name} / raw inflate: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
