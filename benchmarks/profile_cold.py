#!/usr/bin/env python3
"""Where a cold read's CPU goes, by function (cProfile), and what holds memory (tracemalloc): issue #39.

Every layer of the benchmark image (the OCI directory bench_inspect.py / bench_floor.py build in $BENCH_CACHE) is
indexed in this one process, in order, exactly as a layer worker does it (view/reader.py index_image_layer with the
CLI's wants and limits, seek points included): CPU time per function is meaningful on a loaded machine where wall time
is not. With --memory the same read runs under tracemalloc instead and the peak and its largest holders are printed.

Usage: python benchmarks/profile_cold.py [--oci DIR] [--top 30] [--memory] [--json OUT]
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
            idx = index_image_layer(image, layer, wants, Limits())
            total += idx.uncompressed_bytes
    finally:
        source.close()
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--oci", default=DEFAULT_OCI)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()
    ref = f"oci-dir:{args.oci}"
    result: dict = {"image": args.oci, "load_average_before": os.getloadavg()}
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if args.memory:
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
        prof = cProfile.Profile()
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
