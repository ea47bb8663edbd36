"""Where every NCCL release-note entry went: the coverage line of docs/knowledge-coverage.md (issue 32).

Each entry of catalogs/nccl_release_notes.json gets one class and one disposition:
- failure fix (a fix or known issue whose symptom is a hang, crash, corruption or error): a row of
  catalogs/nccl_fix_ranges.json gives its phase (init, collective, capture, teardown; build, never-released and
  error-path are never predicted), its conditions, and its first affected release where traced; or named by the
  conditions the notes give, or untraced (counted in NCCL-RELEASE-LATER-FIX's unknown);
- performance fix (slow, not failing): named as such where a fact narrows it or its first release was traced;
- behaviour change, known issue, feature, other: not a defect of a release, or curated in nccl_known_issues;
- a fix that names no symptom: not named (the notes do not say what fails).
Reads the catalogs only:
    python tools/nccl/release_coverage.py            # the summary
    python tools/nccl/release_coverage.py --untraced # the failure fixes still to trace, one a line
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

CATALOGS = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs"
FAILURES = {"hang", "crash", "data-corruption", "error"}


def _rows(name: str) -> list[dict]:
    return json.loads((CATALOGS / f"{name}.json").read_text())["rows"]


def _traced_disposition(trace: dict) -> str:
    """Where a row of nccl_fix_ranges puts its entry: the phase first, then whether its first release was found."""
    phase = trace.get("phase")
    if trace.get("same_as"):
        return f"named by {trace['same_as']}"
    if phase in ("build", "never-released"):
        return f"{phase}: no image has it"
    if phase == "error-path":
        return "error path: follows another failure (triage names it)"
    if trace["first_affected"]:
        return f"traced, phase {phase or 'not stated'}"
    return f"conditions and phase {phase or 'not stated'}, first release not traced"


def disposition(row: dict, traced: dict[str, dict]) -> tuple[str, str]:
    kind, symptom = row["kind"], row["symptom"]
    if row["entry"] in traced:
        trace = traced[row["entry"]]
        slow = (trace.get("symptom") or symptom) == "performance"
        return "performance fix" if slow else "failure fix", _traced_disposition(trace)
    if kind in ("fix", "known-issue") and symptom in FAILURES:
        return "failure fix", "conditions named" if row["conditions"] else "untraced, no condition"
    if kind == "fix" and symptom == "performance":
        return "performance fix", "untraced, not named" if row["conditions"] else "generic, not named"
    if kind == "fix":
        return "fix naming no symptom", "not named"
    if kind == "change":
        return "behaviour change", "not a defect"
    if kind == "known-issue":
        return "known issue", "curated in nccl_known_issues where sourced"
    return kind, "not a defect"


def main(argv: list[str]) -> int:
    notes = _rows("nccl_release_notes")
    traced = {r["entry"]: r for r in _rows("nccl_fix_ranges")}
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    for row in notes:
        cls, disp = disposition(row, traced)
        counts[(cls, disp)] += 1
        if "--untraced" in argv and cls == "failure fix" and ("not traced" in disp or disp.startswith("untraced")):
            print(f"{row['entry']}\t{row['symptom']}\t{row['text'][:120]}")
    if "--untraced" in argv:
        return 0
    print(f"{len(notes)} entries, {len(traced)} rows of nccl_fix_ranges")
    for (cls, disp), n in sorted(counts.items()):
        print(f"{n:5d}  {cls}: {disp}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
