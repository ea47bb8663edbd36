"""The incident corpus (tests/incidents/cases.json): public threads with an established cause, each as the facts it
states. imgcheck must name the mechanism the thread established, must not blame what the thread rules out, and
must give the working configuration of the same thread a different verdict."""

from __future__ import annotations

import pytest
from corpus import CASES, SEVERITY_RANK, deep_merge, gaps, image_doc, image_facts, job_facts, node_facts, resolve

from imgcheck.engine import RULE_IDS, evaluate
from imgcheck.matrix import load_matrix
from imgcheck.model.report import unconditional

MATRIX = load_matrix()


def _evaluate(image_spec: dict, node_doc: dict, case_id: str, job_doc: dict | None = None):
    image = image_facts(image_doc(image_spec, case_id), f"{case_id} image")
    node = node_facts(node_doc, f"{case_id} node")
    return evaluate(image, node, MATRIX, job=job_facts(job_doc, f"{case_id} job"))


def _ids(result, at_least: str = "info") -> set[str]:
    return {f.id for f in result.findings if SEVERITY_RANK[f.severity] >= SEVERITY_RANK[at_least]}


def _verdict(result) -> str:
    """As the report's verdict: from the findings that hold on the facts alone (a conditional finding assumes a
    component the facts do not show, and never makes a verdict)."""
    worst = max((SEVERITY_RANK[f.severity] for f in unconditional(result.findings)), default=-1)
    return {2: "fail", 1: "warn"}.get(worst, "ok")


def test_corpus_is_sourced_and_well_formed():
    seen = set()
    for case in CASES:
        assert case["id"] not in seen, case["id"]
        seen.add(case["id"])
        assert case["url"].startswith("https://github.com/"), case["id"]
        assert case["cause"] and case["established_by"] and case["fix"], case["id"]
        for rule in (
            [w["id"] for w in case["expect"]] + case.get("must_not", []) + case.get("working", {}).get("absent", [])
        ):
            resolved = resolve(rule)  # a placeholder must be declared
            assert resolved.rule is None or resolved.rule in RULE_IDS, f"{case['id']}: unknown rule {rule}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_incident_case(case, request):
    why_not = gaps(case)
    if why_not:
        request.applymarker(pytest.mark.xfail(reason="; ".join(why_not), strict=True))
    result = _evaluate(case["image"], case["node"], case["id"], case.get("job"))
    for want in case["expect"]:
        rule = resolve(want["id"]).rule
        assert rule in _ids(result, want["severity"]), (
            f"{want['id']} (>= {want['severity']}) not predicted; got {sorted(_ids(result))}"
        )
        # conditional: the trigger is the job's program, which no fact shows; it must be named, and only as assumed
        if want.get("conditional"):
            assert rule not in {f.id for f in unconditional(result.findings)}, f"{want['id']} warns unconditionally"
    for rule in case.get("must_not", []):
        assert resolve(rule).rule not in _ids(result, "warning"), f"blames {rule}, which the thread rules out"
    working = case.get("working")
    if working:
        patch = working.get("image", {})
        fixed_image = deep_merge(case["image"], patch)  # a patch naming a profile is that profile (corpus.py)
        fixed_job = deep_merge(case["job"], working["job"]) if "job" in working else case.get("job")
        fixed = _evaluate(fixed_image, deep_merge(case["node"], working.get("node", {})), case["id"], fixed_job)
        for rule in working["absent"]:
            assert resolve(rule).rule not in _ids(fixed), f"{rule} still predicted for the working configuration"
        decisive = [w for w in case["expect"] if not w.get("conditional")]
        if any(SEVERITY_RANK[w["severity"]] >= SEVERITY_RANK["warning"] for w in decisive):
            assert _verdict(fixed) != _verdict(result), "the failing and the working configuration get the same verdict"
