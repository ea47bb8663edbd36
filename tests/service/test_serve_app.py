"""The HTTP surface: rejections change nothing, duplicates are one job, results/history/page/metrics."""

from __future__ import annotations

import json

import pytest
import requests
from servicekit import SECRET, ThreadedService, db_rows, envelope, imgcheck_home, post_event, wait_for, write_config  # noqa: F401 (imgcheck_home is a fixture)

from imgcheck.errors import BadInputError
from imgcheck.service.auth import sign
from imgcheck.service.store import FleetResult

D1 = "sha256:" + "c" * 64
D2 = "sha256:" + "d" * 64


@pytest.fixture
def svc(tmp_path, imgcheck_home):
    db = str(tmp_path / "q.db")
    s = ThreadedService(write_config(str(tmp_path / "c.toml"), "127.0.0.1:1", database=db), start_workers=False)
    s.db = db
    yield s
    s.stop()


def table_counts(db):
    return {t: db_rows(db, f"SELECT COUNT(*) FROM {t}")[0][0] for t in ("jobs", "job_tags", "deliveries", "results")}


def test_rejected_requests_change_nothing(svc):
    body = envelope("team/app", D1)
    before = table_counts(svc.db)
    assert post_event(svc.base, body, secret="wrong").status_code == 401
    assert post_event(svc.base, body, secret=None).status_code == 401
    assert post_event(svc.base, body, secret=None, **{"X-Hub-Signature-256": sign(body, SECRET)}).status_code == 401
    big = b'{"events": [' + b" " * 70_000 + b"]}"
    assert post_event(svc.base, big).status_code == 413
    # no Content-Length (chunked): the limit is enforced while streaming
    chunks = (b" " * 8192 for _ in range(10))
    resp = requests.post(svc.base + "/webhook", data=chunks, timeout=10, headers={"Authorization": f"Bearer {SECRET}"})
    assert resp.status_code == 413
    assert post_event(svc.base, b"{not json").status_code == 400
    assert post_event(svc.base, envelope("team/app", "sha256:123")).status_code == 400
    assert post_event(svc.base, body, path="/webhook/nope").status_code == 404
    assert table_counts(svc.db) == before == {"jobs": 0, "job_tags": 0, "deliveries": 0, "results": 0}
    metrics = requests.get(svc.base + "/metrics", timeout=5).text
    assert 'imgcheck_webhook_requests_total{status="401"} 3.0' in metrics
    assert 'imgcheck_webhook_requests_total{status="413"} 2.0' in metrics


def test_duplicate_deliveries_make_one_job(svc):
    for _ in range(3):
        resp = post_event(svc.base, envelope("team/app", D1, tag="v1", event_id="same-id"))
        assert resp.status_code == 202
    assert resp.json() == {"queued": 0, "duplicates": 1, "ignored": 0}
    post_event(svc.base, envelope("team/app", D1, tag="v2", event_id="other-id"))
    assert db_rows(svc.db, "SELECT repository, digest, state FROM jobs") == [("team/app", D1, "queued")]
    assert sorted(r[0] for r in db_rows(svc.db, "SELECT tag FROM job_tags")) == ["v1", "v2"]
    history = requests.get(svc.base + "/images/team/app", timeout=5).json()
    assert [h["digest"] for h in history["history"]] == [D1]
    assert requests.get(svc.base + f"/results/{D1}", timeout=5).json()["images"][0]["state"] == "queued"


def test_harbor_payload_and_hmac(tmp_path, imgcheck_home):
    db = str(tmp_path / "q.db")
    cfg = write_config(str(tmp_path / "c.toml"), "127.0.0.1:1", database=db)
    with open(cfg, "a") as fh:
        fh.write('\n[registries.harbor]\nhost = "harbor.example"\nhmac_secret = "k3y"\n')
    s = ThreadedService(cfg, start_workers=False)
    try:
        body = json.dumps(
            {
                "type": "PUSH_ARTIFACT",
                "occur_at": 1,
                "operator": "a",
                "event_data": {"resources": [{"digest": D2, "tag": "t"}], "repository": {"repo_full_name": "lib/app"}},
            }
        ).encode()
        # two registries: the bare /webhook is ambiguous
        assert post_event(s.base, body).status_code == 404
        assert post_event(s.base, body, secret=None, path="/webhook/harbor").status_code == 401
        resp = post_event(
            s.base, body, secret=None, path="/webhook/harbor", **{"X-Hub-Signature-256": sign(body, "k3y")}
        )
        assert resp.status_code == 202 and resp.json()["queued"] == 1
        assert db_rows(db, "SELECT registry, repository, digest FROM jobs") == [("harbor", "lib/app", D2)]
    finally:
        s.stop()


def test_results_page_and_metrics_with_hostile_text(tmp_path, imgcheck_home):
    db = str(tmp_path / "q.db")

    def check(config, job):
        if job.digest == D2:
            raise BadInputError("<script>alert('x')</script> & more")
        report = {"schema_version": 1, "verdict": "fail", "findings": [{"id": "MEMLOCK-TOO-LOW"}]}
        return [
            FleetResult("lab", "fail", json.dumps(report)),
            FleetResult("prod", "ok", json.dumps({"verdict": "ok"})),
        ]

    s = ThreadedService(write_config(str(tmp_path / "c.toml"), "127.0.0.1:1", database=db), check=check)
    try:
        assert post_event(s.base, envelope("team/app", D1)).status_code == 202
        assert post_event(s.base, envelope("team/app", D2)).status_code == 202
        wait_for(
            lambda: db_rows(db, "SELECT COUNT(*) FROM jobs WHERE state IN ('done', 'failed')")[0][0] == 2,
            20,
            "both jobs to finish",
        )
        page = requests.get(s.base + "/", timeout=5)
        assert "script-src" not in page.headers["Content-Security-Policy"]
        assert "<script>" not in page.text and "&lt;script&gt;" in page.text
        assert 'class="verdict verdict-fail" data-fleet="lab">fail<' in page.text
        # the bare CLI report for one fleet, and the envelope with every fleet's report
        one = requests.get(s.base + f"/results/{D1}", params={"fleet": "lab"}, timeout=5).json()
        assert one["findings"][0]["id"] == "MEMLOCK-TOO-LOW"
        both = requests.get(s.base + f"/results/{D1}", timeout=5).json()
        assert set(both["images"][0]["reports"]) == {"lab", "prod"}
        assert requests.get(s.base + "/results/sha256:xyz", timeout=5).status_code == 400
        typo = requests.get(s.base + f"/results/{D1}", params={"fleet": "prdo"}, timeout=5)
        assert typo.status_code == 404 and "did you mean 'prod'?" in typo.text  # issue 37
        assert requests.get(s.base + "/results/sha256:" + "e" * 64, timeout=5).status_code == 404
        assert requests.get(s.base + "/healthz", timeout=5).json()["jobs"]["done"] == 1
        metrics = requests.get(s.base + "/metrics", timeout=5).text
        assert 'imgcheck_checks_total{fleet="lab",verdict="fail"} 1.0' in metrics
        assert 'imgcheck_failures_predicted_total{fleet="lab"} 1.0' in metrics
        assert 'imgcheck_events_received_total{outcome="queued"} 2.0' in metrics
        assert 'imgcheck_job_errors_total{outcome="failed"} 1.0' in metrics
        assert "imgcheck_queue_depth 0.0" in metrics
        assert "imgcheck_check_duration_seconds_count 1.0" in metrics
    finally:
        s.stop()
