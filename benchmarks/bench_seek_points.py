#!/usr/bin/env python3
"""What taking seek points in the cold inflate costs (issue 39): CPU seconds of one layer's verified read.

One gzip layer (`--tar PATH`, gzipped at level 6 here; default: the tests' real Debian bookworm rdma rootfs) read as a
cold check reads it (view/layer_index.index_layer over a VerifyingReader: the blob's sha256, the inflate, the diff_id's
sha256, the tar walk) three ways, in interleaved rounds: ISA-L without seek points (IMGCHECK_SEEK_INDEX_MIN=0), the
zran inflate with seek points (a local blob), and the same with the span digests a registry layer also keeps. Reports
median CPU seconds (user + system of this process), the points taken and the peak RSS.
Usage: python benchmarks/bench_seek_points.py [--tar PATH] [--runs 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import resource
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tar")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()

    from imgcheck.extractors.assemble import want_set
    from imgcheck.sources.base import VerifyingReader
    from imgcheck.view import zran
    from imgcheck.view.file_index import SPAN
    from imgcheck.view.layer_index import index_layer

    if args.tar is None:
        from rootfs import build_rootfs

        args.tar = build_rootfs("bookworm")
    with open(args.tar, "rb") as fh:
        blob = gzip.compress(fh.read(), 6)
    digest = "sha256:" + hashlib.sha256(blob).hexdigest()
    spacing = max(SPAN, -(-len(blob) // zran.MAX_POINTS))
    modes = {"isal": (None, False), "zran_points": (spacing, False), "zran_points_and_spans": (spacing, True)}
    cpu: dict[str, list[float]] = {m: [] for m in modes}
    points = {}
    load_before = os.getloadavg()
    for _ in range(args.runs):
        for mode, (seek, spans) in modes.items():
            start = _cpu()
            raw = VerifyingReader(io.BytesIO(blob), digest, "layer", len(blob))
            idx = index_layer(raw, digest, want_set(), seek_spacing=seek, span_digests=spans)
            cpu[mode].append(_cpu() - start)
            points[mode] = 0 if idx.seek_index is None else len(zran.parse_index(idx.seek_index))
    result = {
        "tar": args.tar,
        "blob_bytes": len(blob),
        "inflate": zran.lib().name if zran.lib() is not None else None,
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu_median_s": {m: round(statistics.median(v), 3) for m, v in cpu.items()},
        "cpu_s": {m: [round(x, 3) for x in v] for m, v in cpu.items()},
        "vs_isal": {m: round(statistics.median(v) / statistics.median(cpu["isal"]), 3) for m, v in cpu.items()},
        "points": points,
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
