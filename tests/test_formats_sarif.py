"""SARIF output: valid SARIF 2.1.0, and shaped the way GitHub code scanning needs it."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os

import jsonschema
import pytest
from formats_sample import sample_report

from imgcheck.formats.report_formats import render
from imgcheck.formats.sarif import SARIF_SCHEMA_URI, fingerprint, image_repository
from imgcheck.model.report import Finding, Report

# Vendored, no network at test time: see tests/data/README.md for where it comes from.
SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "data", "sarif-schema-2.1.0.json")
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


@pytest.fixture(scope="module")
def validator():
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        schema = json.load(fh)
    jsonschema.Draft4Validator.check_schema(schema)
    # The schema is draft-04 but uses draft-06's `uri-reference` format: Draft4's own checker skips it,
    # so check every format jsonschema knows (uri-reference needs rfc3986-validator, in the test extra).
    checker = jsonschema.FormatChecker()
    assert "uri-reference" in checker.checkers, "pip install rfc3986-validator: SARIF URIs would go unchecked"
    return jsonschema.Draft4Validator(schema, format_checker=checker)


def _sarif(report: Report) -> dict:
    return json.loads(render(report, "sarif"))


def test_validates_against_sarif_schema(validator):
    validator.validate(_sarif(sample_report()))


def test_vendored_schema_is_the_official_file():
    with open(SCHEMA_PATH, "rb") as fh:
        data = fh.read()
    assert hashlib.sha256(data).hexdigest() == SCHEMA_SHA256  # unchanged since vendored (tests/data/README.md)
    assert json.loads(data)["id"] == SARIF_SCHEMA_URI  # our $schema names exactly this schema


def test_schema_catches_a_broken_log(validator):
    """The vendored schema really constrains: a wrong level or a missing message is rejected."""
    doc = _sarif(sample_report())
    doc["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(doc)
    doc = _sarif(sample_report())
    del doc["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(doc)


def test_github_code_scanning_requirements():
    report = sample_report()
    run = _sarif(report)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    # info findings are not alerts: no rule, no result
    assert [r["id"] for r in rules] == ["RDMA-DMABUF-UNSUPPORTED", "GPU-PEERMEM-INBOX"]
    dmabuf = rules[0]
    assert dmabuf["shortDescription"]["text"] == report.findings[0].title
    assert dmabuf["fullDescription"]["text"] == report.findings[0].mechanism
    assert dmabuf["helpUri"] == "https://github.com/NVIDIA/nccl/issues/778"
    assert dmabuf["defaultConfiguration"]["level"] == "error"
    assert "NCCL_DMABUF_ENABLE=0" in dmabuf["help"]["text"]
    assert [r["level"] for r in run["results"]] == ["error", "warning"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        # GitHub needs at least one location with an artifact URI and a start line
        loc = result["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == "registry.example/team/trainer"  # the name: no tag
        assert loc["region"]["startLine"] >= 1
        assert len(result["partialFingerprints"]["imgcheckFinding/v2"]) == 64
    first = run["results"][0]
    assert "[0] NCCL WARN Call to ibv_reg_dmabuf_mr failed" in first["message"]["text"]
    assert "gpu-a01, gpu-a02" in first["message"]["text"]
    assert [ll["name"] for ll in first["locations"][0]["logicalLocations"]] == ["gpu-a01", "gpu-a02"]
    # evidence keeps its path and layer for people reading the alert's properties
    assert first["properties"]["evidence"][0]["layer"].startswith("sha256:fd5e8675fe85")
    # unknowns are notifications about the run, not alerts
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert [(n["level"], n["descriptor"]["id"]) for n in notes] == [
        ("note", "NCCL-NOT-IN-IMAGE"),
        ("warning", "NODE-MEMLOCK-LOW"),
    ]
    assert all(r["ruleId"] not in ("NODE-MEMLOCK-LOW", "NCCL-NOT-IN-IMAGE") for r in run["results"])


def test_fingerprints_are_stable_across_runs_and_builds():
    a = sample_report()
    b = dataclasses.replace(a, generated_at="2031-01-01T00:00:00Z", tool_version="9.9.9")
    b = dataclasses.replace(
        b,
        image=dataclasses.replace(b.image, reference="registry.example/team/trainer:def", digest="sha256:" + "1" * 64),
    )
    fp = lambda r: [x["partialFingerprints"] for x in _sarif(r)["runs"][0]["results"]]  # noqa: E731
    assert fp(a) == fp(b)  # same problem in the next build of the same image: same alert
    # the nodes do not matter (issue 37: alerts must not churn with the fleet); the rule and repository do
    f = a.findings[0]
    assert fingerprint(f, "x/y:1") == fingerprint(dataclasses.replace(f, nodes=tuple(reversed(f.nodes))), "x/y:2")
    assert fingerprint(f, "x/y:1") == fingerprint(dataclasses.replace(f, nodes=("gpu-a01",)), "x/y:1")
    assert fingerprint(f, "x/y:1") != fingerprint(dataclasses.replace(f, id="OTHER"), "x/y:1")
    assert fingerprint(f, "x/y:1") != fingerprint(f, "x/z:1")


@pytest.mark.parametrize(
    "reference, repository",
    [
        ("registry.example/team/trainer:abc", "registry.example/team/trainer"),
        ("registry.example:5000/team/trainer", "registry.example:5000/team/trainer"),
        ("registry.example:5000/team/trainer:v1@sha256:" + "a" * 64, "registry.example:5000/team/trainer"),
        ("registry:nvcr.io/nvidia/pytorch:24.05-py3", "nvcr.io/nvidia/pytorch"),
        ("docker-archive:/tmp/build/trainer.tar", "docker-archive:/tmp/build/trainer.tar"),
        ("docker-archive:/tmp/build/trainer.tar:team/trainer:build-41", "docker-archive:/tmp/build/trainer.tar"),
        ("oci:/srv/layouts/trainer:build-41", "oci:/srv/layouts/trainer"),
        ("sif:/shared/images/trainer.sif", "sif:/shared/images/trainer.sif"),
    ],
)
def test_image_repository(reference, repository):
    assert image_repository(reference) == repository


def _location(doc) -> str:
    return doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]


@pytest.mark.parametrize(
    "reference, uri",
    [
        ("127.0.0.1:5000/team/trainer:build-41", "127.0.0.1%3A5000/team/trainer"),
        ("registry.example:5000/team/trainer:v1@sha256:" + "a" * 64, "registry.example%3A5000/team/trainer"),
        ("[::1]:5000/team/trainer:v2", "%5B%3A%3A1%5D%3A5000/team/trainer"),
    ],
)
def test_host_port_names_pass_the_uri_format_check(validator, reference, uri):
    report = sample_report()
    doc = _sarif(dataclasses.replace(report, image=dataclasses.replace(report.image, reference=reference)))
    validator.validate(doc)
    assert _location(doc) == uri


def test_format_checking_is_on(validator):
    doc = _sarif(sample_report())
    doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "127.0.0.1:5000/x"
    with pytest.raises(jsonschema.ValidationError, match="uri-reference"):
        validator.validate(doc)


def test_location_is_stable_across_builds():
    """GitHub keys alerts on the location: the next build's tag and digest must not open a new alert."""
    a = sample_report()
    b = dataclasses.replace(
        a,
        image=dataclasses.replace(
            a.image, reference="registry.example/team/trainer:def@sha256:" + "2" * 64, digest="sha256:" + "2" * 64
        ),
    )
    assert [r["locations"][0]["physicalLocation"] for r in _sarif(a)["runs"][0]["results"]] == [
        r["locations"][0]["physicalLocation"] for r in _sarif(b)["runs"][0]["results"]
    ]


def test_one_result_per_problem_not_per_node_group(validator):
    """The same rule and title on two node groups (different evidence) is one alert naming both groups."""
    report = sample_report()
    first = report.findings[0]
    other = dataclasses.replace(
        first, nodes=("gpu-c01",), mechanism=first.mechanism + " (group c)", evidence=first.evidence[:1]
    )
    doc = _sarif(dataclasses.replace(report, findings=(first, other) + report.findings[1:]))
    validator.validate(doc)
    results = [r for r in doc["runs"][0]["results"] if r["ruleId"] == first.id]
    assert len(results) == 1
    assert results[0]["properties"]["nodes"] == list(first.nodes) + ["gpu-c01"]


def test_odd_references_stay_valid_uris(validator):
    image = dataclasses.replace(sample_report().image, reference="oci-dir:/tmp/my images/trainer dir")
    doc = _sarif(dataclasses.replace(sample_report(), image=image))
    validator.validate(doc)
    assert (
        doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        == "oci-dir:/tmp/my%20images/trainer%20dir"
    )


def test_clean_report_has_no_results_but_is_valid(validator):
    report = dataclasses.replace(sample_report(), findings=(), unknowns=(), verdict="ok")
    doc = _sarif(report)
    validator.validate(doc)
    assert doc["runs"][0]["results"] == []  # an empty list closes earlier alerts on GitHub
    assert doc["runs"][0]["properties"]["verdict"] == "ok"


def test_large_fleet_names_are_capped_in_messages():
    nodes = tuple(f"n{i:05d}" for i in range(5000))
    finding = Finding(
        id="X-Y", severity="error", title="t", predicted_error=None, mechanism="m", confidence="hypothesis", nodes=nodes
    )
    doc = _sarif(Report(image=sample_report().image, findings=(finding,), verdict="fail"))
    result = doc["runs"][0]["results"][0]
    assert "and 4900 more" in result["message"]["text"]
    assert len(result["locations"][0]["logicalLocations"]) == 100
    assert len(result["properties"]["nodes"]) == 5000


def test_alerts_stay_put_when_the_fleet_changes_by_one_node():
    """Issue 37: two fleets that differ by one node (one added, drained or replaced) keep every alert's
    fingerprint; the nodes move to the message and properties. The fleet name, when given, separates fleets."""
    a = sample_report()
    grown = tuple(dataclasses.replace(f, nodes=f.nodes + ("gpu-a99",)) for f in a.findings)
    b = dataclasses.replace(a, findings=grown)
    fp = lambda r, fleet=None: [  # noqa: E731
        x["partialFingerprints"] for x in json.loads(render(r, "sarif", fleet=fleet))["runs"][0]["results"]
    ]
    assert fp(a) == fp(b)
    assert fp(a, "prod") == fp(b, "prod")
    assert fp(a, "prod") != fp(a, "staging") != fp(a)
    grown_result = json.loads(render(b, "sarif", fleet="prod"))["runs"][0]
    assert "gpu-a99" in grown_result["results"][0]["message"]["text"]
    assert "gpu-a99" in grown_result["results"][0]["properties"]["nodes"]
    assert grown_result["properties"]["fleet"] == "prod"


def test_two_alerts_of_one_rule_keep_two_fingerprints(validator):
    a = sample_report()
    f = a.findings[0]
    other = dataclasses.replace(f, title=f.title + " (other driver)", nodes=("gpu-b01",))
    doc = _sarif(dataclasses.replace(a, findings=(f, other) + tuple(a.findings[1:])))
    validator.validate(doc)
    prints = [r["partialFingerprints"]["imgcheckFinding/v2"] for r in doc["runs"][0]["results"]]
    assert len(prints) == len(set(prints))


def test_driver_information_uri_from_package_metadata(monkeypatch, validator):
    from importlib import metadata

    class Meta:
        def get_all(self, name):
            return ["Homepage, https://example.org/imgcheck"] if name == "Project-URL" else None

    monkeypatch.setattr(metadata, "metadata", lambda name: Meta())
    doc = _sarif(sample_report())
    validator.validate(doc)
    assert doc["runs"][0]["tool"]["driver"]["informationUri"] == "https://example.org/imgcheck"
