#!/usr/bin/env python3
"""libnccl's GPU architectures: the streaming fat-binary scan against the read by structure, on a real libnccl.

Takes the real libnccl.so.2 of a wheel (default: nvidia-nccl-cu12 2.21.5 from the tests' wheel cache), and reports
medians of: the streaming scan over the file's bytes in memory (what a tar layer pays on top of inflating it), the
structural read (bytes read), and `imgcheck inspect` of an Enroot squashfs image holding only that library (gzip
blocks, as `enroot import` makes with -comp gzip) read by structure and forced to stream every block.
Usage: python benchmarks/bench_nccl_scan.py [--runs 3] [--wheel PATH] [--json OUT]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))


def default_wheel() -> str:
    from wheelcache import WHEEL_CACHE

    found = glob.glob(os.path.join(WHEEL_CACHE, "nvidia-nccl-cu12==2.21.5", "*.whl"))
    if not found:
        sys.exit("no nvidia-nccl-cu12 2.21.5 wheel cached: IMGCHECK_TEST_REAL_NCCL=1 pytest tests/test_fatbin.py")
    return found[0]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--wheel")
    ap.add_argument("--json")
    args = ap.parse_args()
    from imgcheck.view.fatbin import FatbinScan, scan_structure

    with zipfile.ZipFile(args.wheel or default_wheel()) as whl:
        lib = whl.read("nvidia/nccl/lib/libnccl.so.2")
    result: dict = {"library_bytes": len(lib), "load_before": os.getloadavg()}

    def stream() -> None:
        s = FatbinScan(len(lib))
        view = memoryview(lib)
        for i in range(0, len(lib), 1 << 20):
            s.feed(view[i : i + (1 << 20)])
        s.result()

    read = [0]

    def structure() -> None:
        read[0] = 0

        def read_at(offset: int, n: int) -> bytes:
            read[0] += n
            return lib[offset : offset + n]

        scan_structure(read_at, len(lib))

    def timed(fn) -> float:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    result["stream_scan_s"] = statistics.median(timed(stream) for _ in range(args.runs))
    result["structure_scan_s"] = statistics.median(timed(structure) for _ in range(args.runs))
    result["structure_bytes_read"] = read[0]
    tool = shutil.which("mksquashfs")
    if tool:
        tmp = tempfile.mkdtemp(prefix="bench-nccl-")
        try:
            root = os.path.join(tmp, "root", "usr", "lib", "x86_64-linux-gnu")
            os.makedirs(root)
            with open(os.path.join(root, "libnccl.so.2.21.5"), "wb") as fh:
                fh.write(lib)
            os.symlink("libnccl.so.2.21.5", os.path.join(root, "libnccl.so.2"))
            image = os.path.join(tmp, "nccl.sqsh")
            subprocess.run(
                [tool, os.path.join(tmp, "root"), image, "-noappend", "-quiet", "-no-progress", "-comp", "gzip"],
                check=True,
            )
            base = "import sys\nfrom imgcheck.cli.main import main\n"
            forced = "import imgcheck.view.fatbin as f\nf.STRUCTURE_SCANNERS.clear()\n"
            cmd = ["inspect", f"enroot:{image}", "--no-cache", "-o", "json", "-q"]

            def inspect(prelude: str) -> float:
                start = time.perf_counter()
                run = subprocess.run(
                    [sys.executable, "-c", prelude + base + "sys.exit(main())", *cmd], capture_output=True
                )
                if run.returncode not in (0, 1) or b'"sass_archs": [' not in run.stdout:
                    raise RuntimeError(f"inspect failed: {run.stderr.decode(errors='replace')[-300:]}")
                return time.perf_counter() - start

            rounds = [(inspect(""), inspect(forced)) for _ in range(args.runs)]
            result["inspect_enroot_structure_s"] = statistics.median(a for a, _ in rounds)
            result["inspect_enroot_stream_s"] = statistics.median(b for _, b in rounds)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    result["load_after"] = os.getloadavg()
    for key, value in result.items():
        print(f"{key:30s} {value}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
