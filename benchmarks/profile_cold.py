#!/usr/bin/env python3
"""Where a cold read's CPU goes, by function (cProfile), and what holds memory (tracemalloc): issue #39.

Every layer of the benchmark image (the OCI directory bench_inspect.py / bench_floor.py build in $BENCH_CACHE) is
indexed in this one process, in order, exactly as a layer worker does it (view/reader.py index_image_layer with the
CLI's wants and limits, seek points included): CPU time per function is meaningful on a loaded machine where wall time
is not. With --memory the same read runs under tracemalloc instead and the peak and its largest holders are printed.
With --tree-memory `imgcheck inspect --no-cache` of the image runs as the CLI does (parent and forked layer workers),
its process tree sampled every 20 ms: the peak of the summed RSS (pages shared after the fork counted once per
process, as bench_inspect.py reports it) and of the summed PSS (each shared page split between its sharers: what the
tree really holds).

With --pipeline the image's largest layer is read alone (as a layer worker reads it), with its diff_id hashed in line
and in a second thread (view/layer_index.py `pipelined`), rounds interleaved: the process's CPU and the main thread's
CPU of each. The main thread's is the read's critical path when a core is free (the last layer, a dominant layer).

Usage: python benchmarks/profile_cold.py [--oci DIR] [--top 30] [--memory | --tree-memory | --pipeline] [--runs 3]
       [--json OUT]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import sys
import time
import tracemalloc

from imgcheck.extractors.assemble import want_set
from imgcheck.sources.read_options import Limits
from imgcheck.sources.resolve import open_source, parse_image_ref
from imgcheck.view.reader import index_image_layer

DEFAULT_OCI = os.path.join(os.environ.get("BENCH_CACHE", "/var/cache/imgcheck-bench"), "corpus-oci")


def read_all(ref: str) -> int:
    source = open_source(parse_image_ref(ref))
    total = 0
    try:
        image = source.open()
        wants = want_set()
        for layer in image.layers:
            total += index_image_layer(image, layer, wants, Limits()).uncompressed_bytes  # not held past its layer
    finally:
        source.close()
    return total


def _tree_kib(pid: int) -> tuple[int, int]:
    """(RSS, PSS) in KiB of a process and its descendants, summed."""
    rss = pss = 0
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue  # it ended meanwhile
    return rss, pss


def tree_memory(ref: str) -> dict:
    """Peak summed RSS and PSS of a cold `imgcheck inspect` process tree, and the process count at the peak."""
    import subprocess
    import tempfile

    env = {**os.environ, "IMGCHECK_HOME": tempfile.mkdtemp(prefix="imgcheck-profile-cold-")}
    cmd = [sys.executable, "-m", "imgcheck.cli.main", "inspect", "-q", "--no-cache", ref]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    peak_rss = peak_pss = 0
    while proc.poll() is None:
        rss, pss = _tree_kib(proc.pid)
        peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
        time.sleep(0.02)
    return {"peak_tree_rss_mib": round(peak_rss / 1024, 1), "peak_tree_pss_mib": round(peak_pss / 1024, 1)}


def pipeline(oci: str, runs: int) -> dict:
    """CPU and main-thread CPU of the largest layer's read, diff_id hashed in line and in a second thread."""
    from imgcheck.sources.base import VerifyingReader
    from imgcheck.view.file_index import SPAN
    from imgcheck.view.layer_index import index_layer

    blobs = os.path.join(oci, "blobs", "sha256")
    path = max((os.path.join(blobs, name) for name in os.listdir(blobs)), key=os.path.getsize)
    size, digest = os.path.getsize(path), "sha256:" + os.path.basename(path)
    rounds = []
    for _ in range(runs):
        one = {}
        for pipelined in (False, True):
            cpu, main, wall = time.process_time(), time.thread_time(), time.perf_counter()
            with open(path, "rb") as fh:
                raw = VerifyingReader(fh, digest, "layer", size)
                index_layer(raw, digest, want_set(), seek_spacing=max(SPAN, size // 512), pipelined=pipelined)
            name = "pipelined" if pipelined else "in_line"
            one[name] = {
                "cpu": round(time.process_time() - cpu, 2),
                "main_thread_cpu": round(time.thread_time() - main, 2),
                "wall": round(time.perf_counter() - wall, 2),
            }
        rounds.append(one)
    return {"layer_bytes": size, "rounds": rounds}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--oci", default=DEFAULT_OCI)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--tree-memory", action="store_true")
    parser.add_argument("--pipeline", action="store_true")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    ref = f"oci-dir:{args.oci}"
    result: dict = {"image": args.oci, "load_average_before": os.getloadavg()}
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if args.pipeline:
        result["pipeline"] = pipeline(args.oci, args.runs)
        total = 0
    elif args.tree_memory:
        result.update(tree_memory(ref))
        total = 0
    elif args.memory:
        # what is held at the end of each layer's walk (its members recorded, seek windows, kept bytes, directory
        # set: everything a layer holds at once), from the layer where the most is held
        from imgcheck.view import layer_index

        finish = layer_index.LayerBuilder.finish
        held: dict = {"bytes": -1, "snapshot": None}

        def finish_and_look(self):  # type: ignore[no-untyped-def]
            current, _peak = tracemalloc.get_traced_memory()
            if current > held["bytes"]:
                held["bytes"], held["snapshot"] = current, tracemalloc.take_snapshot()
            return finish(self)

        layer_index.LayerBuilder.finish = finish_and_look  # type: ignore[method-assign]
        tracemalloc.start(1)
        total = read_all(ref)
        _current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        result["tracemalloc_peak_mib"] = round(peak / 2**20, 1)
        result["held_at_a_walk_end_mib"] = round(held["bytes"] / 2**20, 1)
        result["largest_at_a_walk_end"] = [str(s) for s in held["snapshot"].statistics("lineno")[: args.top]]
    else:
        prof = cProfile.Profile(time.thread_time)  # CPU of the thread that walks (cProfile's default is wall time)
        prof.enable()
        total = read_all(ref)
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.top)
        result["profile_by_tottime"] = out.getvalue().splitlines()
    result["cpu_seconds"] = round(time.process_time() - cpu0, 2)
    result["wall_seconds"] = round(time.perf_counter() - wall0, 2)
    result["uncompressed_bytes"] = total
    result["max_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    result["load_average_after"] = os.getloadavg()
    text = json.dumps(result, indent=2)
    print(
        text
        if args.json is None
        else "\n".join(result.get("profile_by_tottime", result.get("largest_at_a_walk_end", [])))
    )
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
