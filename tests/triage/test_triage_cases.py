"""Real log excerpts from public issue threads (tests/triage/logs, cited in logs/README.md):
triage must name the expected first signature, first failing rank/host and first cause."""

from __future__ import annotations

import json
import os
import re

import pytest

from imgcheck.cli.main import main
from imgcheck.triage import triage

HERE = os.path.dirname(__file__)
with open(os.path.join(HERE, "cases.json"), encoding="utf-8") as _fh:
    CASES = json.load(_fh)["cases"]


def _paths(case):
    return [os.path.join(HERE, p) for p in case["logs"]]


def _id(case):
    return (
        os.path.basename(case["logs"][0]).rsplit(".", 1)[0] if len(case["logs"]) == 1 else case["logs"][0].split("/")[1]
    )


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_real_excerpt(case):
    report = triage(_paths(case))
    assert report.verdict == case["verdict"]
    ids = [d.signature for d in report.diagnoses]
    if "first" in case:
        assert report.first_failure is not None
        assert report.first_failure.signature == case["first"]
        assert ids[0] == case["first"]  # the text leads with the first failure's signature
    if "first_line" in case:  # the first-failure line itself, as the log printed it
        assert case["first_line"] in report.first_failure.where.text
    for sid in case.get("not_first", []):  # what must not be blamed
        assert report.first_failure is None or report.first_failure.signature != sid
    if case.get("no_first"):  # only warnings: no line is a located failure
        assert report.first_failure is None
    for sid in case.get("info", []):  # recognised, but information for this job (not a failure)
        d = next(d for d in report.diagnoses if d.signature == sid)
        assert d.severity == "info" and d.note
        assert report.first_failure is None or report.first_failure.signature != sid
    if "diagnoses" in case:
        assert ids == case["diagnoses"]
    for sid in case.get("also", []):
        assert sid in ids
    for sid in case.get("absent", []):
        assert sid not in ids
    if "rank" in case:
        assert report.first_failure.where.rank == case["rank"]
    if "host" in case:
        assert report.first_failure.where.host == case["host"]
    if "first_file" in case:
        assert report.first_failure.where.source == os.path.join(HERE, case["first_file"])
        assert report.first_failure.where.source != _paths(case)[0]  # not simply the first file given
    if "timeline_ranks" in case:
        assert [t.where.rank for t in report.timeline] == case["timeline_ranks"]
    if "outcome" in case:  # how far the run got, from its own end-of-run and progress lines
        assert report.outcome.state == case["outcome"]
    if "first_cause" in case:
        assert report.diagnoses[0].causes[0].id == case["first_cause"]
    if "second_cause" in case:  # the order below the top matters too (advice to read vs a guess)
        assert report.diagnoses[0].causes[1].id == case["second_cause"]
    for cid in case.get("cause_in", []):
        assert cid in [c.id for c in report.diagnoses[0].causes]
    if "cause_order" in case:
        assert [c.id for c in report.diagnoses[0].causes] == case["cause_order"]
    for sid, cause in case.get("cause_of", {}).items():
        d = next(d for d in report.diagnoses if d.signature == sid)
        assert d.causes[0].id == cause
    if "occurrences" in case:
        assert report.diagnoses[0].occurrences == case["occurrences"]
    if "hosts" in case:
        assert list(report.diagnoses[0].hosts) == case["hosts"]
    for key in ("nccl_versions", "ib_devices", "networks"):
        if key in case:
            assert list(getattr(report.context, key)) == case[key]
    if "relaxed_ordering" in case:
        assert report.context.relaxed_ordering is case["relaxed_ordering"]
    # every answer says how sure it is and why
    assert report.certainty is not None and report.certainty.level in ("high", "medium", "low")
    assert report.certainty.reasons
    # every diagnosis carries its sources and an ordered list of next commands
    for d in report.diagnoses:
        assert d.sources and d.confidence in ("verified", "reported", "vendor-guidance", "hypothesis")
        assert [c.order for c in d.causes] == list(range(1, len(d.causes) + 1))
        assert all(c.next for c in d.causes)


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_exit_code_and_json(case, capsys):
    rc = main(["triage", *_paths(case), "-o", "json"])
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert rc == case["exit"]
    assert doc["schema_version"] == 3 and doc["kind"] == "triage"
    assert doc["outcome"]["state"] in ("completed", "progressed", "failed_check", "ended", "unknown")
    assert doc["verdict"] == case["verdict"]
    if case["verdict"] == "no_known_signature":
        assert doc["first_failure"] is None and doc["diagnoses"] == []
        if doc["outcome"]["state"] in ("completed", "progressed"):  # the run went on: nothing to hunt for
            assert doc["general_order"] == []
        else:
            assert len(doc["general_order"]) >= 3 and doc["general_sources"]


def test_no_signature_text_is_honest(capsys):
    rc = main(["triage", os.path.join(HERE, "logs", "gpustack-3067-socket-no-error.log"), "-o", "table"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "NO KNOWN SIGNATURE" in out
    assert "General triage order" in out
    assert "FIRST FAILURE" not in out and "SIGNATURE " not in out.replace("NO KNOWN SIGNATURE", "")
    # the INFO context is still reported
    assert "network Socket" in out
    assert "CERTAINTY  low" in out


def test_table_leads_with_first_failure_and_causes(capsys):
    logs = [os.path.join(HERE, "logs", "basicsr-737", f"rank{r}.log") for r in (1, 0, 2)]
    rc = main(["triage", *logs, "-o", "table"])
    out = capsys.readouterr().out
    assert rc == 1
    lines = out.splitlines()
    first = next(i for i, l in enumerate(lines) if l.startswith("FIRST FAILURE"))
    sig = next(i for i, l in enumerate(lines) if l.startswith("SIGNATURE"))
    assert first < sig
    assert lines[first].startswith("FIRST FAILURE  rank 0")
    assert "TORCH-WATCHDOG-TIMEOUT" in lines[sig]
    # the vendor order: data starvation, silent crash, NCCL test on the same nodes (job or platform), then collectives
    # that differ across ranks (PyTorch's own first suspect), fabric last
    steps = [l for l in lines[sig:] if re.match(r"\s+\d+\. \[", l)]
    assert "Dataloader or storage" in steps[0]
    assert "died or hung" in steps[1]
    assert "NCCL test on the same nodes" in steps[2]
    assert "did not call the same collectives" in steps[3]
    assert "fabric" in steps[-1] or any("fabric" in s for s in steps[4:])
