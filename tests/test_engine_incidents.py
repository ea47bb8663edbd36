"""Public incident reports as regression cases: the facts the reporters gave (plus stated assumptions),
and the outcome they saw. Each fixture cites its issue URL."""

from __future__ import annotations

import glob
import json
import os

import pytest
from engine_facts import run

from imgcheck.model.image import ImageFacts
from imgcheck.model.node_io import parse_node_facts
from imgcheck.model.serde import from_dict

CASES = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "fixtures", "incidents", "*.json")))


def test_there_are_incident_cases():
    assert len(CASES) >= 4


@pytest.mark.parametrize("path", CASES, ids=os.path.basename)
def test_incident(path):
    with open(path) as fh:
        case = json.load(fh)
    assert case["issue"].startswith("https://github.com/")
    image = from_dict(ImageFacts, case["image"], where=path)
    node = parse_node_facts(case["node"], path)
    result = run(image, node)
    for want in case["expect"]:
        found = [f for f in result.findings if f.id == want["id"]]
        assert found, f"{want['id']} not predicted; got {[f.id for f in result.findings]}"
        f = found[0]
        assert f.severity == want["severity"] and f.confidence == want["confidence"]
        if "predicted_error" in want:
            assert f.predicted_error == want["predicted_error"]
            assert f.predicted_error in case["seen"], "the prediction must match what the reporter saw"
    # nothing at error level beyond what the case expects
    expected_errors = {w["id"] for w in case["expect"] if w["severity"] == "error"}
    assert {f.id for f in result.findings if f.severity == "error"} <= expected_errors
