#!/usr/bin/env python3
"""Time a fleet check: N generated nodes in K distinct configurations (defaults 10,000 / 20).

Reports the engine evaluations (one per distinct configuration), the time to group and evaluate,
and the time to render each output format. Usage: python benchmarks/bench_fleet.py [--nodes N] [--distinct K]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from fleetgen import fleet  # noqa: E402
from test_fleet_scale import ngc_like_image  # noqa: E402

from imgcheck.engine import REQUIRED_ROWS, build_report  # noqa: E402
from imgcheck.engine.report import evaluate_fleet  # noqa: E402
from imgcheck.formats.report_formats import render  # noqa: E402
from imgcheck.matrix import load_matrix  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--distinct", type=int, default=20)
    args = parser.parse_args()
    matrix = load_matrix(None, required=REQUIRED_ROWS)
    nodes = fleet(args.nodes, args.distinct)
    image = ngc_like_image()
    start = time.perf_counter()
    result = evaluate_fleet(image, nodes, matrix)
    evaluated = time.perf_counter() - start
    report = build_report(image, nodes, matrix)
    print(
        f"{args.nodes} nodes, {args.distinct} configurations: {result.evaluations} engine evaluations, "
        f"{evaluated:.2f} s to group and evaluate"
    )
    for fmt in ("json", "sarif", "junit", "markdown", "table"):
        start = time.perf_counter()
        text = render(report, fmt)
        print(f"  render {fmt:9s} {time.perf_counter() - start:6.2f} s  {len(text) / 1024:8.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
