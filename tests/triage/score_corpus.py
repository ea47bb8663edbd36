"""Score `imgcheck triage` on the real-log corpus (cases.json): how often the first failure and
the top cause are right, and how often it blames the wrong thing.

    PYTHONPATH=src python tests/triage/score_corpus.py

Not a test (the tests in test_triage_cases.py assert every case); this prints the numbers the
docs/triage.md quotes, so a change to signatures can be measured on the same corpus.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def score(cases: list[dict]) -> dict[str, int]:
    from imgcheck.triage import triage

    out = {
        "cases": 0,
        "first_expected": 0,
        "first_right": 0,
        "unrecognised": 0,
        "wrong_blame": 0,
        "cause_expected": 0,
        "cause_right": 0,
        "verdict_right": 0,
    }
    for case in cases:
        out["cases"] += 1
        try:
            report = triage([os.path.join(HERE, p) for p in case["logs"]])
        except Exception:  # noqa: BLE001 - a crash counts as unrecognised, the tests catch it
            out["unrecognised"] += 1
            continue
        out["verdict_right"] += report.verdict == case["verdict"]
        ids = [d.signature for d in report.diagnoses]
        if "first" in case:
            out["first_expected"] += 1
            got = report.first_failure.signature if report.first_failure else None
            if got == case["first"]:
                out["first_right"] += 1
            elif got is None:
                out["unrecognised"] += 1
            else:
                out["wrong_blame"] += 1
        if "first_cause" in case:
            out["cause_expected"] += 1
            if (
                report.diagnoses
                and report.diagnoses[0].causes
                and report.diagnoses[0].causes[0].id == case["first_cause"]
            ):
                out["cause_right"] += 1
        _ = ids
    return out


def main() -> int:
    with open(os.path.join(HERE, "cases.json"), encoding="utf-8") as fh:
        cases = json.load(fh)["cases"]
    s = score(cases)
    print(
        f"{s['cases']} cases; verdict right {s['verdict_right']}; first failure right {s['first_right']}/"
        f"{s['first_expected']} (unrecognised {s['unrecognised']}, wrong blame {s['wrong_blame']}); "
        f"top cause right {s['cause_right']}/{s['cause_expected']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
