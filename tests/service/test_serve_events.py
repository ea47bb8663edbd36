"""Parsing registry notifications: which pushes are kept, which are ignored, what is malformed."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from servicekit import envelope

from imgcheck.service.events import MalformedPayload, parse_body

D1 = "sha256:" + "a" * 64
D2 = "sha256:" + "b" * 64


def test_distribution_manifest_push_is_kept_with_tag_and_id():
    d = parse_body(envelope("team/trainer", D1, tag="v1", event_id="e-1"))
    assert d.kind == "distribution" and d.ignored == 0
    (push,) = d.pushes
    assert (push.repository, push.digest, push.tag, push.event_id) == ("team/trainer", D1, "v1", "e-1")


def test_pulls_blob_pushes_and_deletes_are_ignored():
    layer = "application/vnd.oci.image.layer.v1.tar+gzip"
    events = (
        json.loads(envelope("a/b", D1, action="pull"))["events"]
        + json.loads(envelope("a/b", D1, media_type=layer))["events"]
        + [{"id": "x", "action": "delete", "target": {"digest": D1, "repository": "a/b"}}]
        + json.loads(envelope("a/b", D2, tag=None))["events"]
    )
    d = parse_body(json.dumps({"events": events}).encode())
    assert d.ignored == 3
    assert [(p.digest, p.tag) for p in d.pushes] == [(D2, None)]


def test_manifest_push_without_digest_is_ignored_not_an_error():
    doc = json.loads(envelope("a/b", D1))
    del doc["events"][0]["target"]["digest"]
    d = parse_body(json.dumps(doc).encode())
    assert d.pushes == () and d.ignored == 1


def test_every_manifest_media_type_counts():
    for mt in (
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.v2+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
    ):
        assert len(parse_body(envelope("a/b", D1, media_type=mt)).pushes) == 1


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b'{"events": {}}',
        b'{"events": [1]}',
        b'{"something": "else"}',
        b"\xff\xfe",
        envelope("UPPER/case", D1),
        envelope("a/b", "sha256:1234"),
        envelope("a/b", "md5:" + "a" * 32),
        envelope("a/../b", D1),
        envelope("a/b", D1, tag="bad tag!"),
        # distribution's tag grammar is ASCII: a Cyrillic "а" or a fullwidth digit looks like a tag, is not one
        envelope("a/b", D1, tag="v1.\u0430"),
        envelope("a/b", D1, tag="v\uff11"),
        envelope("a/b", D1, tag="r\u00e9lease"),
    ],
)
def test_malformed_bodies_are_refused(body):
    with pytest.raises(MalformedPayload):
        parse_body(body)


def harbor(event_type="PUSH_ARTIFACT", resources=None, repo=None):
    return json.dumps(
        {
            "type": event_type,
            "occur_at": 1764669600,
            "operator": "admin",
            "event_data": {
                "resources": resources
                if resources is not None
                else [{"digest": D1, "tag": "v2", "resource_url": "harbor.evil.example/library/app:v2"}],
                "repository": repo
                or {
                    "date_created": 1,
                    "name": "app",
                    "namespace": "library",
                    "repo_full_name": "library/app",
                    "repo_type": "private",
                },
            },
        }
    ).encode()


def test_harbor_push_artifact():
    d = parse_body(harbor())
    assert d.kind == "harbor"
    (push,) = d.pushes
    assert (push.repository, push.digest, push.tag) == ("library/app", D1, "v2")
    assert push.event_id and D1 in push.event_id


def test_harbor_other_event_types_are_ignored():
    d = parse_body(harbor("PULL_ARTIFACT"))
    assert d.pushes == () and d.ignored == 1


def test_harbor_namespace_and_name_when_no_full_name():
    d = parse_body(harbor(repo={"name": "app", "namespace": "ml"}))
    assert d.pushes[0].repository == "ml/app"


@pytest.mark.parametrize(
    "body",
    [
        harbor(resources=[{"digest": "sha256:nothex", "tag": "x"}]),
        harbor(resources="nope"),
        harbor(repo={"repo_full_name": "Bad//Name"}),
    ],
)
def test_harbor_malformed(body):
    with pytest.raises(MalformedPayload):
        parse_body(body)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
_event = st.fixed_dictionaries(
    {
        "action": st.sampled_from(["push", "pull", 3, None]),
        "target": _json
        | st.fixed_dictionaries(
            {
                "mediaType": st.sampled_from(["application/vnd.oci.image.manifest.v1+json", 7]),
                "digest": st.sampled_from([D1, "sha256:", None, 5]),
                "repository": _json,
                "tag": _json,
            }
        ),
        "id": _json,
    }
)


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        _json,
        st.fixed_dictionaries({"events": st.lists(_event, max_size=3) | _json}),
        st.fixed_dictionaries({"type": _json | st.just("PUSH_ARTIFACT"), "event_data": _json}),
    )
)
def test_any_json_is_parsed_or_refused_never_crashes(doc):
    try:
        d = parse_body(json.dumps(doc).encode())
    except MalformedPayload:
        return
    for p in d.pushes:  # whatever was accepted is well-formed
        assert p.digest == D1 and isinstance(p.repository, str)
