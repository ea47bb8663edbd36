"""A registry layer after a wants change (issue #39): served from its file index, inflated in order up to the last
wanted file and the rest of the stream left unread; the facts are a whole read's. The real Debian bookworm rdma image
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
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    push_rootfs_image(Pusher(registry.url), "rdma/bookworm", "latest", rootfs("bookworm"))
    ref = f"{registry.host}/rdma/bookworm:latest"
    cold, s1, _ = _inspect(ref)
    monkeypatch.setattr(identity, "LAYER_CACHE_NAMESPACE", "layer-read upgraded")
    monkeypatch.setattr(identity, "CACHE_NAMESPACE", "upgraded")
    again, s2, notes = _inspect(ref)
    assert s2.layers_reread == s1.layers_read and s2.bytes_decompressed == 0
    assert 0 < s2.bytes_reread <= s1.bytes_decompressed  # up to the last wanted file, without the walk or digests
    assert again == cold and not any("file index" in n for n in notes)
