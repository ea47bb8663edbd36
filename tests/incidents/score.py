"""The incident corpus score: how many cases imgcheck names the established mechanism of, and why the rest are gaps.

python tests/incidents/score.py          # prints the README line and the gaps by mechanism
"""

from __future__ import annotations

import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))

from corpus import CASES, SEVERITY_RANK, gaps, image_doc, image_facts, job_facts, node_facts, resolve  # noqa: E402


def named(case, matrix) -> bool:
    from imgcheck.engine import evaluate

    result = evaluate(
        image_facts(image_doc(case["image"], case["id"]), case["id"]),
        node_facts(case["node"], case["id"]),
        matrix,
        job=job_facts(case.get("job"), case["id"]),
    )
    found = {f.id: SEVERITY_RANK[f.severity] for f in result.findings}
    return all(
        resolve(w["id"]).rule in found and found[resolve(w["id"]).rule] >= SEVERITY_RANK[w["severity"]]
        for w in case["expect"]
    )


def score(matrix=None) -> tuple[int, int, Counter]:
    from imgcheck.matrix import load_matrix

    matrix = matrix or load_matrix()
    with_mechanism = [c for c in CASES if c["expect"]]
    hits = sum(1 for c in with_mechanism if not gaps(c) and named(c, matrix))
    missing = Counter(w["id"] for c in with_mechanism if gaps(c) for w in c["expect"] if resolve(w["id"]).rule is None)
    return hits, len(with_mechanism), missing


def readme_line(hits: int, total: int, negatives: int) -> str:
    return (
        f"imgcheck names the established mechanism in **{hits} of {total}** incident cases "
        f"(and blames nothing the thread rules out in {negatives} more)"
    )


if __name__ == "__main__":
    hits, total, missing = score()
    print(readme_line(hits, total, sum(1 for c in CASES if not c["expect"])))
    for mechanism, n in missing.most_common():
        print(f"  gap: {mechanism} ({n})")
