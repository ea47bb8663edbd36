"""Payloads as Harbor and GitHub really send them, posted to the real app over HTTP.

Harbor's body is its own documented "Artifact pushed" example, verbatim (a by-digest push: the
digest is in `tag`): https://goharbor.io/docs/edge/working-with-projects/project-configuration/configure-webhooks/
GitHub's bodies follow its webhook schema (github/rest-api-description, webhook-ping and
webhook-package-published); the event name travels in X-GitHub-Event and the body is signed with
X-Hub-Signature-256.
"""

from __future__ import annotations

import json

import pytest
from servicekit import ThreadedService, db_rows, imgcheck_home, post_event, write_config  # noqa: F401 (fixture)

from imgcheck.service.auth import sign

HARBOR_DOC_EXAMPLE = b"""{
  "type": "PUSH_ARTIFACT",
  "occur_at": 1680501893,
  "operator": "harbor-jobservice",
  "event_data": {
    "resources": [
      {
        "digest": "sha256:954b378c375d852eb3c63ab88978f640b4348b01c1b3456a024a81536dafbbf4",
        "tag": "sha256:954b378c375d852eb3c63ab88978f640b4348b01c1b3456a024a81536dafbbf4",
        "resource_url": "localhost/harbor/alpine@sha256:954b378c375d852eb3c63ab88978f640b4348b01c1b3456a024a81536dafbbf4"
      }
    ],
    "repository": {
      "date_created": 1680501893,
      "name": "alpine",
      "namespace": "harbor",
      "repo_full_name": "harbor/alpine",
      "repo_type": "private"
    }
  }
}"""
HARBOR_DIGEST = "sha256:954b378c375d852eb3c63ab88978f640b4348b01c1b3456a024a81536dafbbf4"
GH_SECRET = "gh-hook-secret"
GH_DIGEST = "sha256:" + "5" * 64


@pytest.fixture
def svc(tmp_path, imgcheck_home):
    db = str(tmp_path / "q.db")
    cfg = write_config(str(tmp_path / "c.toml"), "127.0.0.1:1", database=db)
    with open(cfg, "a") as fh:
        fh.write(
            f'\n[registries.harbor]\nhost = "harbor.example"\nsecret = "h4rbor"\n'
            f'\n[registries.ghcr]\nhost = "ghcr.io"\nhmac_secret = "{GH_SECRET}"\n'
        )
    s = ThreadedService(cfg, start_workers=False)
    s.db = db
    yield s
    s.stop()


def github(base, event, doc, secret=GH_SECRET, delivery="72d3162e-cc78-11e3-81ab-4c9367dc0958"):
    body = json.dumps(doc).encode()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "User-Agent": "GitHub-Hookshot/044aadd",
        "Content-Type": "application/json",
    }
    if secret:
        headers["X-Hub-Signature-256"] = sign(body, secret)
    return post_event(base, body, secret=None, path="/webhook/ghcr", **headers)


def package_event(package_type="CONTAINER", action="published", tag="v1.2"):
    return {
        "action": action,
        "package": {
            "id": 1,
            "name": "Trainer",
            "namespace": "Octo-Org",
            "package_type": package_type,
            "owner": {"login": "Octo-Org"},
            "ecosystem": "CONTAINER",
            "package_version": {
                "id": 4711,
                "version": GH_DIGEST,
                "name": GH_DIGEST,
                "container_metadata": {"tag": {"name": tag, "digest": GH_DIGEST}, "labels": {}, "manifest": {}},
            },
            "registry": {
                "about_url": "https://docs.github.com/packages",
                "name": "GitHub CLI",
                "type": "docker",
                "url": "https://ghcr.io/octo-org",
                "vendor": "GitHub Inc",
            },
        },
        "repository": {"full_name": "octo-org/trainer"},
        "sender": {"login": "octocat"},
    }


def test_harbor_documented_by_digest_push_is_queued_without_a_tag(svc):
    resp = post_event(svc.base, HARBOR_DOC_EXAMPLE, secret="h4rbor", path="/webhook/harbor")
    assert resp.status_code == 202, resp.text
    assert resp.json()["queued"] == 1
    assert db_rows(svc.db, "SELECT registry, repository, digest FROM jobs") == [
        ("harbor", "harbor/alpine", HARBOR_DIGEST)
    ]
    assert db_rows(svc.db, "SELECT tag FROM job_tags WHERE tag IS NOT NULL") == []


def test_harbor_tag_that_is_not_a_digest_or_tag_is_still_refused(svc):
    bad = HARBOR_DOC_EXAMPLE.replace(b'"tag": "sha256:954b', b'"tag": "sha256 954b')
    assert post_event(svc.base, bad, secret="h4rbor", path="/webhook/harbor").status_code == 400


def test_github_ping_is_answered_and_queues_nothing(svc):
    ping = {
        "zen": "Keep it logically awesome.",
        "hook_id": 123,
        "hook": {"type": "Organization", "id": 123, "events": ["package"], "active": True},
    }
    resp = github(svc.base, "ping", ping)
    assert resp.status_code == 200 and resp.json() == {"pong": True}
    assert github(svc.base, "ping", ping, secret="wrong").status_code == 401
    assert db_rows(svc.db, "SELECT COUNT(*) FROM jobs") == [(0,)]


def test_github_container_package_published_is_queued_lower_cased(svc):
    resp = github(svc.base, "package", package_event())
    assert resp.status_code == 202, resp.text
    assert resp.json() == {"queued": 1, "duplicates": 0, "ignored": 0}
    assert db_rows(svc.db, "SELECT registry, repository, digest FROM jobs") == [("ghcr", "octo-org/trainer", GH_DIGEST)]
    assert db_rows(svc.db, "SELECT tag FROM job_tags") == [("v1.2",)]
    # the legacy event name carries the same data under `registry_package`
    doc = package_event(tag="v1.3")
    doc["registry_package"] = doc.pop("package")
    resp = github(svc.base, "registry_package", doc, delivery="8e9a2f10-cc78-11e3-81ab-4c9367dc0958")
    assert resp.json() == {"queued": 0, "duplicates": 1, "ignored": 0}  # a known digest: one job, a new tag
    assert sorted(r[0] for r in db_rows(svc.db, "SELECT tag FROM job_tags")) == ["v1.2", "v1.3"]
    # a redelivery (GitHub resends the same body) is recognised as such, and so is a captured body replayed
    # with a fresh X-GitHub-Delivery GUID (the header is not signed; the id is the signed body's sha256)
    assert github(svc.base, "package", package_event()).json() == {"queued": 0, "duplicates": 1, "ignored": 0}
    replay = github(svc.base, "package", package_event(), delivery="00000000-0000-4000-8000-000000000000")
    assert replay.json() == {"queued": 0, "duplicates": 1, "ignored": 0}
    assert db_rows(svc.db, "SELECT COUNT(*) FROM deliveries") == [(2,)]  # the two distinct bodies
    assert sorted(r[0] for r in db_rows(svc.db, "SELECT tag FROM job_tags")) == ["v1.2", "v1.3"]


@pytest.mark.parametrize(
    "event,doc",
    [
        ("package", package_event(package_type="npm")),
        ("package", package_event(action="updated")),
        ("push", {"ref": "refs/heads/main", "repository": {"full_name": "octo-org/trainer"}}),
    ],
)
def test_other_github_events_are_acknowledged_and_ignored(svc, event, doc):
    resp = github(svc.base, event, doc)
    assert resp.status_code == 202 and resp.json() == {"queued": 0, "duplicates": 0, "ignored": 1}
    assert db_rows(svc.db, "SELECT COUNT(*) FROM jobs") == [(0,)]


def test_github_package_with_a_bad_digest_is_refused(svc):
    doc = package_event()
    doc["package"]["package_version"]["container_metadata"]["tag"]["digest"] = "sha256:zz"
    assert github(svc.base, "package", doc).status_code == 400
