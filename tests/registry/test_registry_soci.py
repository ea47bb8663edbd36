"""A SOCI-enabled image from a real registry: its gzip layer is read by range through the zTOC its SOCI index
(manifest v2, named by the image manifest's `com.amazon.soci.index-digest`) lists (issue 39).

The layer is the real Debian bookworm rdma rootfs gzipped; the zTOC and index are written by the SOCI spec
(tests/socibuild.py) and pushed to Debian's docker-registry the way `soci convert` lays them out (an OCI index
listing the SOCI index beside the image, same platform). A range read must give the whole read's facts from a
fraction of the blob, and anything that does not verify falls back to the whole read with a note.
"""

from __future__ import annotations

import gzip
import hashlib

import pytest
import socibuild
from registrypush import Pusher

from imgcheck import api
from imgcheck.sources.read_options import ReadOptions, ReadStats

pytestmark = [pytest.mark.registry, pytest.mark.e2e]


@pytest.fixture(scope="module")
def bookworm(rootfs):
    with open(rootfs("bookworm"), "rb") as fh:
        tar = fh.read()
    blob = gzip.compress(tar, 6, mtime=0)
    return tar, blob, "sha256:" + hashlib.sha256(tar).hexdigest()


def _read(registry, repo: str, **options) -> tuple:
    stats = ReadStats()
    facts = api.inspect_image(f"{registry.host}/{repo}:latest", ReadOptions(use_cache=False, stats=stats, **options))
    return facts, stats


def test_a_soci_layer_gives_the_whole_reads_facts_from_its_spans(registry, bookworm):
    tar, blob, diff_id = bookworm
    soci = socibuild.build(blob, tar)
    socibuild.push_soci_image(Pusher(registry.url), "soci/bookworm", soci, diff_id)
    ranged, stats = _read(registry, "soci/bookworm")
    whole, whole_stats = _read(registry, "soci/bookworm", range_reads=False)
    assert len(stats.layers_ranged) == 1 and not whole_stats.layers_ranged
    assert 0 < stats.bytes_ranged < len(blob) // 4
    lib = ranged.rdma.libibverbs
    assert (lib.version, lib.rdma_core, lib.private_abi) == ("1.14.44.0", "44.0", 34)
    assert ranged.rdma == whole.rdma and ranged.ucx == whole.ucx and ranged.os == whole.os
    assert ranged.packages == whole.packages and ranged.env == whole.env
    assert [l.diff_id for l in ranged.layers] == [l.diff_id for l in whole.layers]


@pytest.mark.parametrize("case", ["span-digest-wrong", "index-digest-wrong"])
def test_what_does_not_verify_is_read_whole(registry, bookworm, case):
    tar, blob, diff_id = bookworm
    repo = f"soci/{case}"
    if case == "span-digest-wrong":
        from imgcheck.view.soci import parse_ztoc

        good = socibuild.build(blob, tar)
        ztoc = parse_ztoc(good.ztoc)
        member = next(m for m in ztoc.members if m.name.endswith("var/lib/dpkg/status"))
        soci = socibuild.build(blob, tar, tamper_digest=ztoc.span_of(member.offset))
        socibuild.push_soci_image(Pusher(registry.url), repo, soci, diff_id)
    else:  # the annotation names a manifest the registry does not have
        soci = socibuild.build(blob, tar)
        socibuild.push_soci_image(Pusher(registry.url), repo, soci, diff_id, annotate="sha256:" + "0" * 64)
    facts, stats = _read(registry, repo)
    assert stats.layers_ranged == [] and len(stats.layers_read) == 1  # the whole layer, its diff_id checked
    assert facts.rdma.libibverbs.rdma_core == "44.0" and facts.packages
    assert sum("read whole: its SOCI zTOC" in note for note in facts.notes) == 1, facts.notes


@pytest.mark.parametrize("subject", ["this-image", "another-image"])
def test_a_soci_index_v1_found_as_a_referrer_is_used_only_if_it_names_this_image(registry, bookworm, subject):
    # SOCI index manifest v1 (soci-snapshotter before v0.10): no annotation on the image manifest, the index found
    # among the manifest's referrers (here by the referrers tag schema). Its `subject` must be this manifest's digest,
    # else the layer is read whole, with one note.
    tar, blob, diff_id = bookworm
    repo = f"soci/v1-{subject}"
    soci = socibuild.build(blob, tar)
    other = None if subject == "this-image" else "sha256:" + "1" * 64
    socibuild.push_soci_v1_image(Pusher(registry.url), repo, soci, diff_id, subject=other)
    facts, stats = _read(registry, repo)
    assert facts.rdma.libibverbs.rdma_core == "44.0" and facts.packages
    if subject == "this-image":
        assert len(stats.layers_ranged) == 1 and 0 < stats.bytes_ranged < len(blob) // 4
        assert not [n for n in facts.notes if "SOCI" in n]
    else:
        assert stats.layers_ranged == [] and len(stats.layers_read) == 1
        (note,) = [n for n in facts.notes if "read whole: its SOCI zTOC" in n]
        assert "names 'sha256:1111" in note


def test_an_uncompressed_layer_s_ztoc_reads_its_spans_as_they_are(registry, bookworm):
    # SOCI builds zTOCs for uncompressed OCI layers too (compression_algorithm Uncompressed, a TarZinfo of fixed
    # spans: ztoc/compression/tar_zinfo.go): the wanted files are read from their spans, each span checked
    tar, _blob, diff_id = bookworm
    soci = socibuild.build(tar, tar)
    media = "application/vnd.oci.image.layer.v1.tar"
    socibuild.push_soci_image(Pusher(registry.url), "soci/plain-tar", soci, diff_id, media=media)
    ranged, stats = _read(registry, "soci/plain-tar")
    whole, _ = _read(registry, "soci/plain-tar", range_reads=False)
    assert len(stats.layers_ranged) == 1 and 0 < stats.bytes_ranged < len(tar) // 4
    assert ranged.rdma == whole.rdma and ranged.packages == whole.packages and ranged.os == whole.os
