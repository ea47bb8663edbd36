"""A registry layer after a wants change (issue #39): served from its file index, from the seek points its own cold
read took by HTTP Range, or without them inflated in order up to the last wanted file; the facts are a whole read's. The real Debian bookworm rdma image
pushed to a real registry."""

from __future__ import annotations

import dataclasses

import pytest
from registrypush import Pusher, push_rootfs_image

from imgcheck import api
from imgcheck.extractors import identity
from imgcheck.model.serde import to_dict
from imgcheck.sources.read_options import ReadOptions, ReadStats

pytestmark = [pytest.mark.registry, pytest.mark.e2e]


def _inspect(ref: str):
    stats = ReadStats()
    facts = api.inspect_image(ref, ReadOptions(stats=stats))
    return to_dict(dataclasses.replace(facts, notes=())), stats, facts.notes


def test_registry_layer_after_a_wants_change(registry, rootfs, tmp_path, monkeypatch):
    # no seek points (IMGCHECK_SEEK_INDEX_MIN=0): the stream is inflated in order up to the last wanted file
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("IMGCHECK_SEEK_INDEX_MIN", "0")
    push_rootfs_image(Pusher(registry.url), "rdma/bookworm", "latest", rootfs("bookworm"))
    ref = f"{registry.host}/rdma/bookworm:latest"
    cold, s1, _ = _inspect(ref)
    monkeypatch.setattr(identity, "LAYER_CACHE_NAMESPACE", "layer-read upgraded")
    monkeypatch.setattr(identity, "CACHE_NAMESPACE", "upgraded")
    again, s2, notes = _inspect(ref)
    assert s2.layers_reread == s1.layers_read and s2.bytes_decompressed == 0
    assert 0 < s2.bytes_reread <= s1.bytes_decompressed  # up to the last wanted file, without the walk or digests
    assert again == cold and not any("file index" in n for n in notes)


def test_registry_layer_re_read_by_range_from_its_seek_points(registry, rootfs, tmp_path, monkeypatch):
    # A registry layer's cold read takes seek points in its one in-order inflate (view/zran.py) and the digest of
    # every 1 MiB span of the blob; after a wants change the wanted files are inflated from the seek points over
    # HTTP Range requests, each span checked, no stream of the blob is opened, and the facts are a whole read's.
    from imagebuild import build_oci
    from registrypush import Pusher

    from imgcheck.errors import BadInputError
    from imgcheck.sources.registry import RegistryClient

    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("IMGCHECK_SEEK_INDEX_MIN", "1")  # the test layer is under the default threshold's size
    monkeypatch.delenv("IMGCHECK_PARALLEL_GZIP_MIN", raising=False)
    with open(rootfs("bookworm"), "rb") as fh:
        built = build_oci([fh.read()], "gzip")
    Pusher(registry.url).push_image("rdma/seekpoints", "latest", built)
    ref = f"{registry.host}/rdma/seekpoints:latest"
    cold, s1, _ = _inspect(ref)
    assert len(s1.layers_read) == 1
    monkeypatch.setattr(identity, "LAYER_CACHE_NAMESPACE", "layer-read upgraded")
    monkeypatch.setattr(identity, "CACHE_NAMESPACE", "upgraded")
    requests_seen: list[str] = []
    real_range = RegistryClient.get_blob_range

    def counted_range(self, digest, start, end):
        requests_seen.append(f"{start}-{end}")
        return real_range(self, digest, start, end)

    monkeypatch.setattr(RegistryClient, "get_blob_range", counted_range)
    again, s2, notes = _inspect(ref)
    size = max(len(b) for b in built.blobs.values())  # the one layer is the largest blob
    assert len(s2.layers_reread) == 1 and s2.bytes_decompressed == 0
    assert requests_seen and 0 < s2.bytes_reread_compressed < size * 0.4  # seek ranges, not the blob
    assert again == cold and not any("file index" in n for n in notes)

    # a registry whose Range answers fail (here: every one refused) reads the layer whole, verified, with one note
    def refused(self, digest, start, end):
        raise BadInputError(f"bytes {start}-{end - 1} of blob {digest}: refused")

    monkeypatch.setattr(RegistryClient, "get_blob_range", refused)
    monkeypatch.setattr(identity, "CACHE_NAMESPACE", "upgraded again")
    monkeypatch.setattr(identity, "LAYER_CACHE_NAMESPACE", "layer-read upgraded again")
    whole, s3, notes = _inspect(ref)
    assert whole == cold and s3.bytes_decompressed > 0 and not s3.layers_reread
    assert [n for n in notes if "file index does not match the blob" in n and "read whole" in n]

    # a registry that answers a Range with other bytes than the verified read hashed (one byte flipped): the span's
    # digest does not match, the layer is read whole and verified, with one note. A fresh home: the seek points and
    # span digests come from a verified cold read of the registry again.
    monkeypatch.setattr(RegistryClient, "get_blob_range", real_range)
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home2"))
    monkeypatch.setattr(identity, "CACHE_NAMESPACE", "fresh")
    monkeypatch.setattr(identity, "LAYER_CACHE_NAMESPACE", "layer-read fresh")
    _inspect(ref)
    monkeypatch.setattr(identity, "CACHE_NAMESPACE", "fresh upgraded")
    monkeypatch.setattr(identity, "LAYER_CACHE_NAMESPACE", "layer-read fresh upgraded")

    def tampered(self, digest, start, end):
        data = bytearray(real_range(self, digest, start, end))
        data[len(data) // 2] ^= 0xFF
        return bytes(data)

    monkeypatch.setattr(RegistryClient, "get_blob_range", tampered)
    checked, s4, notes = _inspect(ref)
    assert checked == cold and s4.bytes_decompressed > 0 and not s4.layers_reread
    assert [n for n in notes if "file index does not match the blob" in n and "read whole" in n]
