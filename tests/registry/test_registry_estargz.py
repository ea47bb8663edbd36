"""eStargz layers from a real registry are read by range: the TOC, then only the wanted files' chunks (issue 39).

The layer is the real Debian bookworm rdma rootfs written as eStargz by the format's specification
(tests/estargzbuild.py), pushed to Debian's docker-registry with the TOC digest annotation. A range read must give
the same facts as reading the same layer whole, fetch a small part of the blob, and fall back to the whole read
whenever something does not verify.
"""

from __future__ import annotations

import pytest
from estargzbuild import Estargz, from_tar, push_estargz
from registrypush import Pusher

from imgcheck import api
from imgcheck.sources.read_options import ReadOptions, ReadStats

pytestmark = [pytest.mark.registry, pytest.mark.e2e]

WANTED = "usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0"


@pytest.fixture(scope="module")
def bookworm_estargz(rootfs) -> Estargz:
    with open(rootfs("bookworm"), "rb") as fh:
        return from_tar(fh.read())


def _read(registry, repo: str, **options) -> tuple:
    stats = ReadStats()
    facts = api.inspect_image(f"{registry.host}/{repo}:latest", ReadOptions(use_cache=False, stats=stats, **options))
    return facts, stats


def test_range_read_gives_the_whole_reads_facts_from_a_fraction_of_the_blob(registry, bookworm_estargz):
    assert any(e["name"] == WANTED for e in bookworm_estargz.toc["entries"])  # the real library is in the layer
    push_estargz(Pusher(registry.url), "esgz/bookworm", bookworm_estargz, bookworm_estargz.toc_digest)
    ranged, stats = _read(registry, "esgz/bookworm")
    whole, whole_stats = _read(registry, "esgz/bookworm", range_reads=False)
    assert len(stats.layers_ranged) == 1 and not whole_stats.layers_ranged
    assert 0 < stats.bytes_ranged < len(bookworm_estargz.blob) // 4
    lib = ranged.rdma.libibverbs
    assert (lib.version, lib.rdma_core, lib.private_abi) == ("1.14.44.0", "44.0", 34)
    assert ranged.rdma == whole.rdma and ranged.ucx == whole.ucx and ranged.os == whole.os
    assert ranged.packages == whole.packages and ranged.env == whole.env
    assert [l.diff_id for l in ranged.layers] == [l.diff_id for l in whole.layers]


@pytest.mark.parametrize(
    "case",
    ["toc-digest-wrong", "chunk-tampered"],
)
def test_what_does_not_verify_is_read_whole(registry, rootfs, bookworm_estargz, case):
    if case == "toc-digest-wrong":
        layer, annotation = bookworm_estargz, "sha256:" + "0" * 64
    else:
        with open(rootfs("bookworm"), "rb") as fh:
            layer = from_tar(fh.read(), tamper=WANTED)
        annotation = layer.toc_digest
    repo = f"esgz/{case}"
    push_estargz(Pusher(registry.url), repo, layer, annotation)
    facts, stats = _read(registry, repo)
    assert stats.layers_ranged == [] and len(stats.layers_read) == 1  # the whole layer, its diff_id checked
    assert facts.rdma.libibverbs is not None
    assert any("read whole" in note for note in facts.notes), facts.notes


def test_a_layer_without_the_annotation_is_an_ordinary_gzip_layer(registry, bookworm_estargz):
    push_estargz(Pusher(registry.url), "esgz/plain", bookworm_estargz, None)
    facts, stats = _read(registry, "esgz/plain")
    assert stats.layers_ranged == [] and facts.rdma.libibverbs.rdma_core == "44.0"
