#!/usr/bin/env python3
"""What building a seek-point index costs in memory: rapidgzip on one thread, per chunk size and layer size.

imgcheck builds a layer's seek-point index (view/parallel_gzip.py, IMGCHECK_SEEK_INDEX_MIN) by inflating the layer
with rapidgzip (parallelization=1) and exporting its index. For each gzip file and each chunk size (rapidgzip's
`chunk_size`, bytes of compressed input per chunk: the spacing of its seek points), one process each, this records
the process's peak RSS (before the index is exported, and in all: exported to a temporary file as imgcheck does,
or to memory as it did), its CPU seconds, the exported index's size and the inflated size; and ISA-L's inflate of the
same file as the baseline. Usage:
  python benchmarks/bench_seek_memory.py [--chunk-sizes 1,2,4] [--exports file,memory] [--json OUT] LAYER.tar.gz ...
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ONE = r"""
import io, json, resource, sys, tempfile
path, chunk, export = sys.argv[1], int(sys.argv[2]), sys.argv[3]
buf, out, index, before_export = bytearray(1 << 20), 0, 0, None
if chunk:
    import rapidgzip
    with rapidgzip.RapidgzipFile(path, parallelization=1, chunk_size=chunk) as gz:
        while n := gz.readinto(buf):
            out += n
        before_export = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if export == "memory":  # as view/parallel_gzip.py exported it before 2026-12-07
            exported = io.BytesIO()
            gz.export_index(exported)
            index = len(exported.getvalue())
        else:  # as it does now: to a temporary file, read back once
            with tempfile.TemporaryFile() as spool:
                gz.export_index(spool)
                spool.seek(0)
                index = len(spool.read())
else:
    from isal import igzip
    with igzip.open(path) as gz:
        while n := gz.readinto(buf):
            out += n
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"peak_rss_mib": usage.ru_maxrss / 1024, "cpu_s": usage.ru_utime + usage.ru_stime,
                  "inflated_bytes": out, "index_bytes": index,
                  "peak_rss_mib_before_export": before_export}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunk-sizes", default="1,2,4", help="MiB, comma-separated (rapidgzip's default is 4)")
    ap.add_argument("--exports", default="file,memory", help="where the index is exported: file and/or memory")
    ap.add_argument("--json")
    ap.add_argument("layers", nargs="+")
    args = ap.parse_args()
    rows = []
    load_before = os.getloadavg()
    for path in args.layers:
        runs = [(0, "-")] + [(int(c), e) for c in args.chunk_sizes.split(",") for e in args.exports.split(",")]
        for mib, export in runs:
            done = subprocess.run(
                [sys.executable, "-c", ONE, path, str(mib << 20), export], check=True, capture_output=True, text=True
            )
            row = {"layer": os.path.basename(path), "compressed_bytes": os.path.getsize(path), "export": export}
            row["decoder"] = f"rapidgzip chunk {mib} MiB" if mib else "isal"
            row.update(json.loads(done.stdout))
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    results = {"load_average_before": load_before, "load_average_after": os.getloadavg(), "rows": rows}
    print(json.dumps(results, indent=2))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
