"""`imgcheck inspect` (and so a warm re-check, whose time is mostly start-up) loads no node, report or engine
code: those are for `check`. A module imported at the top of a shared CLI helper once added 30 ms to every
warm re-check (docs/benchmarks.md, 2026-12-04)."""

from __future__ import annotations

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOT_FOR_INSPECT = ("imgcheck.model.node", "imgcheck.model.report", "imgcheck.node.select", "imgcheck.engine")

PROGRAM = (
    "import sys, io, contextlib\n"
    "from imgcheck.cli.main import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    code = main(['inspect', sys.argv[1], '-o', 'json', '-q'])\n"
    "print(code, *[m for m in sys.argv[2:] if m in sys.modules])\n"
)


def test_inspect_imports_no_node_report_or_engine_code(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM, f"oci-dir:{os.path.join(REPO, 'examples', 'bookworm-rdma')}", *NOT_FOR_INSPECT],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "IMGCHECK_HOME": str(tmp_path)},
        timeout=120,
    ).stdout.split()
    assert out == ["0"], out
