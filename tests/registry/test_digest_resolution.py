"""A reference becomes a digest one way, and says which: pinned, the anonymous HEAD, the client's HEAD.
The facts cache is asked once per digest; a digest found before the client existed is not asked again."""

from __future__ import annotations

import pytest
import requests
from imagebuild import build_oci, make_layer
from registrypush import Pusher

from imgcheck import api
from imgcheck.facts_cache import FactsCache
from imgcheck.sources import digest_resolution as dr
from imgcheck.sources.read_options import ReadOptions
from imgcheck.sources.reference import parse_reference
from imgcheck.sources.registry import RegistrySource
from imgcheck.sources.resolve import open_source, parse_image_ref

pytestmark = pytest.mark.registry


class RecordingSession(requests.Session):
    def __init__(self):
        super().__init__()
        self.calls: list[tuple[str, str]] = []

    def request(self, method, url, *args, **kwargs):
        self.calls.append((method, url.rsplit("/", 2)[-2] + "/" + url.rsplit("/", 1)[-1]))
        return super().request(method, url, *args, **kwargs)


class CountingFactsCache(FactsCache):
    """The real cache, counting what it is asked."""

    asked: list[tuple[str, str]] = []
    _following = False  # get_resolved follows its link with get(): one look-up, not two

    def get(self, digest, platform, reference):
        if not self._following:
            type(self).asked.append(("get", digest))
        return super().get(digest, platform, reference)

    def get_resolved(self, top, asked, reference):
        type(self).asked.append(("get_resolved", top))
        self._following = True
        try:
            return super().get_resolved(top, asked, reference)
        finally:
            self._following = False


@pytest.fixture(scope="module")
def pushed(registry):
    built = build_oci([make_layer({"etc/os-release": b'ID=debian\nVERSION_ID="12"\n'})])
    Pusher(registry.url).push_image("resolve/img", "v1", built)
    return built


def test_a_pinned_digest_is_resolved_without_any_request():
    digest = "sha256:" + "ab" * 32
    ref = parse_reference(f"127.0.0.1:1/x/y@{digest}")  # port 1: any request would fail
    assert dr.without_client(ref, ReadOptions()) == dr.ResolvedDigest(digest, dr.PINNED)


def test_a_tag_is_resolved_by_the_anonymous_head(registry, pushed, tmp_path, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path))
    got = dr.without_client(parse_reference(f"{registry.host}/resolve/img:v1"), ReadOptions())
    assert got == dr.ResolvedDigest(pushed.manifest_digest, dr.ANONYMOUS_HEAD)


def test_a_callers_session_leaves_the_head_to_the_client_which_asks_once(registry, pushed):
    session = RecordingSession()
    ref = parse_reference(f"{registry.host}/resolve/img:v1")
    assert dr.without_client(ref, ReadOptions(session=session)) is None
    source = RegistrySource(ref, session=session)
    try:
        assert source.resolve_digest() == dr.ResolvedDigest(pushed.manifest_digest, dr.CLIENT_HEAD)
        assert source.resolve_digest().via == dr.CLIENT_HEAD
        image = source.open()
    finally:
        source.close()
    assert image.digest == pushed.manifest_digest
    assert [c for c in session.calls if c[0] == "HEAD"] == [("HEAD", "manifests/v1")]  # open() did not ask again


def test_a_digest_found_before_the_client_is_not_asked_again(registry, pushed):
    session = RecordingSession()
    found = dr.ResolvedDigest(pushed.manifest_digest, dr.ANONYMOUS_HEAD)
    source = open_source(parse_image_ref(f"{registry.host}/resolve/img:v1"), ReadOptions(session=session), found)
    try:
        assert source.resolve_digest() is found
        assert source.open().digest == pushed.manifest_digest
    finally:
        source.close()
    assert not [c for c in session.calls if c[0] == "HEAD"]
    assert ("GET", f"manifests/{pushed.manifest_digest}") in session.calls  # fetched by digest, not by tag


def test_local_sources_cannot_resolve_before_open(tmp_path):
    from imagebuild import write_oci_dir

    path = write_oci_dir(str(tmp_path / "img"), build_oci([make_layer({"etc/os-release": b"ID=debian\n"})]))
    source = open_source(parse_image_ref(f"oci-dir:{path}"))
    assert source.resolve_digest() is None


def test_the_facts_cache_is_asked_once_per_digest(registry, pushed, tmp_path, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path))
    monkeypatch.setattr(api, "facts_cache", lambda: CountingFactsCache(str(tmp_path / "facts"), "test"))
    ref = f"{registry.host}/resolve/img:v1"
    CountingFactsCache.asked = []
    api.inspect_image(ref)  # cold: the tag's digest (a miss), then the opened image's own digest (a miss)
    assert CountingFactsCache.asked == [("get_resolved", pushed.manifest_digest), ("get", pushed.manifest_digest)]
    CountingFactsCache.asked = []
    assert api.inspect_image(ref).digest == pushed.manifest_digest  # warm: one look-up, by the HEAD's digest
    assert CountingFactsCache.asked == [("get_resolved", pushed.manifest_digest)]
