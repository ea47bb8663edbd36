"""view/soci.py: a gzip layer read by range through its SOCI zTOC gives the whole read's index from the wanted
files' spans only, and anything that does not verify is NotSeekable (the caller then reads the layer whole).

The layer is the real Debian bookworm rdma rootfs (mmdebstrap, tests/rootfs.py), gzipped; its zTOC is written by
the SOCI spec (tests/socibuild.py: members as ztoc/toc_builder.go takes them, checkpoints at deflate block
boundaries with their bits and 32 KiB windows, span digests, the ztoc.fbs flatbuffer).
"""

from __future__ import annotations

import gzip
import hashlib
import io

import pytest
import socibuild

from imgcheck.errors import BadInputError
from imgcheck.sources.base import LayerRef
from imgcheck.sources.read_options import Limits
from imgcheck.sources.soci_index import ztoc_refs
from imgcheck.view.layer_index import index_layer
from imgcheck.view.seekable import NotSeekable
from imgcheck.view.soci import index_soci, parse_ztoc
from imgcheck.view.wants import Want, WantSet

pytest.importorskip("rapidgzip", reason="the test's checkpoints come from rapidgzip's index export")

WANTED = "usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0"
WANTS = WantSet(
    (
        Want(r"etc/os-release", content=True),
        Want(r"var/lib/dpkg/status", content=True, max_bytes=8 << 20),
        Want(r"usr/lib/x86_64-linux-gnu/libibverbs\.so.*", content=True, max_bytes=1 << 20),
    )
)


@pytest.fixture(scope="module")
def bookworm(rootfs):
    with open(rootfs("bookworm"), "rb") as fh:
        tar = fh.read()
    blob = gzip.compress(tar, 6, mtime=0)
    return tar, blob, socibuild.build(blob, tar)


def _layer(blob: bytes) -> LayerRef:
    return LayerRef(
        "sha256:" + hashlib.sha256(blob).hexdigest(), "application/vnd.oci.image.layer.v1.tar+gzip", len(blob)
    )


def _ranged(blob: bytes, asked: list[tuple[int, int]]):
    def read(_layer: LayerRef, start: int, end: int) -> bytes:
        asked.append((start, end))
        return blob[start:end]

    return read


def test_the_whole_reads_index_from_the_wanted_spans_only(bookworm):
    tar, blob, soci = bookworm
    assert any(name.lstrip("./") == WANTED for name, _o, _s in soci.members)
    assert len(soci.spans) > 10  # a real multi-span layer, checkpoints mid-byte among them
    layer = _layer(blob)
    asked: list[tuple[int, int]] = []
    ranged = index_soci(layer, soci.ztoc, _ranged(blob, asked), WANTS, Limits())
    whole = index_layer(io.BytesIO(blob), layer.digest, WANTS, Limits())
    assert {p: (e.kind, e.data, e.linkname, e.size) for p, e in ranged.entries.items()} == {
        p: (e.kind, e.data, e.linkname, e.size) for p, e in whole.entries.items()
    }
    assert ranged.entries[WANTED].data is not None and ranged.entries[WANTED].data[:4] == b"\x7fELF"
    assert list(ranged.nondir_hashes) == list(whole.nondir_hashes)
    assert set(asked) <= set(soci.spans) and len(set(asked)) == len(asked)  # whole spans, each fetched once
    assert ranged.range_bytes == sum(e - s for s, e in asked) < len(blob) // 4


def test_the_ztoc_parses_as_the_spec_lays_it_out(bookworm):
    _tar, blob, soci = bookworm
    ztoc = parse_ztoc(soci.ztoc)
    assert ztoc.compressed_size == len(blob) and len(ztoc.checkpoints) == len(soci.spans)
    assert [(ztoc.span_start(i), ztoc.span_end(i)) for i in range(len(soci.spans))] == soci.spans
    assert any(p.bits for p in ztoc.checkpoints)
    assert [(m.name, m.offset, m.size) for m in ztoc.members] == soci.members


def test_a_tampered_span_or_ztoc_is_not_seekable(bookworm):
    tar, blob, soci = bookworm
    layer = _layer(blob)
    lib = next(o for name, o, _s in soci.members if name.lstrip("./") == WANTED)
    span = parse_ztoc(soci.ztoc).span_of(lib)  # the span holding the library's first byte
    spans_digest_wrong = socibuild.build(blob, tar, tamper_digest=span)
    with pytest.raises(NotSeekable, match="does not match its zTOC digest"):
        index_soci(layer, spans_digest_wrong.ztoc, _ranged(blob, []), WANTS, Limits())
    with pytest.raises(NotSeekable):
        index_soci(layer, soci.ztoc[: len(soci.ztoc) // 2], _ranged(blob, []), WANTS, Limits())
    # a zTOC pointing the library's name at the bytes of the file before it: the tar header there names another
    misplaced = socibuild.build(blob, tar, misplace=WANTED)
    with pytest.raises(NotSeekable, match="does not match the tar header"):
        index_soci(layer, misplaced.ztoc, _ranged(blob, []), WANTS, Limits())


def test_the_index_manifest_names_each_layers_ztoc(bookworm):
    _tar, blob, soci = bookworm
    layer = _layer(blob)
    doc = socibuild.soci_index(layer.digest, layer.media_type, soci, "sha256:" + "4" * 64)
    assert ztoc_refs(doc) == {layer.digest: (soci.ztoc_digest, len(soci.ztoc))}
    with pytest.raises(BadInputError, match="config media type"):
        ztoc_refs({**doc, "config": {"mediaType": "application/vnd.oci.image.config.v1+json"}})


def test_a_corrupt_ztoc_is_not_seekable_never_a_crash():
    """Bytes changed anywhere in a zTOC (its vtables and offsets are in the first KiB): NotSeekable or a zTOC that
    still parses, never another exception. A small hand-made layer: this is an error path."""
    import random
    import tarfile

    rng = random.Random(3)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:") as tw:
        for i in range(40):
            data = rng.randbytes(3000) + b"x" * 20000
            info = tarfile.TarInfo(f"etc/f{i}")
            info.size = len(data)
            tw.addfile(info, io.BytesIO(data))
    tar = out.getvalue()
    ztoc = socibuild.build(gzip.compress(tar, mtime=0), tar, span_size=64 << 10).ztoc
    for _ in range(1500):
        bad = bytearray(ztoc)
        for _ in range(rng.randint(1, 4)):
            bad[rng.randrange(4096) if rng.random() < 0.7 else rng.randrange(len(bad))] = rng.randrange(256)
        try:
            parse_ztoc(bytes(bad[: rng.randrange(len(bad))] if rng.random() < 0.2 else bad))
        except NotSeekable:
            pass


def test_the_soci_index_is_fetched_once_and_a_layer_it_does_not_list_is_ordinary():
    """SOCI skips small layers (a layer without a zTOC is read whole, silently); an index that cannot be read is
    asked for once, and every layer then gives that one reason. Error paths: the documents are hand-made."""
    import json

    from imgcheck.errors import UnavailableError
    from imgcheck.sources.soci_index import SociIndex, index_digest

    ztoc = b"a ztoc"
    ztoc_digest = "sha256:" + hashlib.sha256(ztoc).hexdigest()
    listed, other = _layer(b"listed layer"), _layer(b"small layer")
    index = {
        "config": {"mediaType": "application/vnd.amazon.soci.index.v2+json"},
        "layers": [
            {"mediaType": "application/vnd.amazon.soci.prefetch.v1+json", "digest": "sha256:" + "1" * 64, "size": 9},
            {
                "mediaType": "application/octet-stream",
                "digest": ztoc_digest,
                "size": len(ztoc),
                "annotations": {"com.amazon.soci.image-layer-digest": listed.digest},
            },
        ],
    }
    asked: list[str] = []

    def get_manifest(digest: str) -> bytes:
        asked.append(digest)
        return json.dumps(index).encode()

    soci = SociIndex("sha256:" + "2" * 64, get_manifest, lambda d, size, limit, what: ztoc if d == ztoc_digest else b"")
    assert soci.ztoc(listed) == ztoc and soci.ztoc(other) is None and len(asked) == 1
    assert index_digest({"annotations": {"com.amazon.soci.index-digest": "sha256:" + "2" * 64}}) == soci.digest
    assert index_digest({"annotations": {"com.amazon.soci.index-digest": "not a digest"}}) is None

    def unavailable(digest: str) -> bytes:
        asked.append(digest)
        raise UnavailableError("manifest unknown")

    gone = SociIndex("sha256:" + "3" * 64, unavailable, lambda *a: b"")
    for layer in (listed, other):
        with pytest.raises(UnavailableError):
            gone.ztoc(layer)
    assert asked.count("sha256:" + "3" * 64) == 1


def test_choosing_the_platforms_image_skips_the_soci_index_beside_it():
    """`soci convert` (soci/soci_convert.go addSociIndexes) lists each platform's SOCI index in the image index with
    the image's platform and artifactType application/vnd.amazon.soci.index.v2+json."""
    from imgcheck.sources.platform import parse_platform, select_manifest

    platform = {"os": "linux", "architecture": "amd64"}
    soci = {"digest": "sha256:" + "1" * 64, "artifactType": "application/vnd.amazon.soci.index.v2+json"}
    image = {"digest": "sha256:" + "2" * 64}
    index = {"manifests": [{**soci, "platform": platform}, {**image, "platform": platform}]}
    assert select_manifest(index, parse_platform("linux/amd64"), "i")["digest"] == image["digest"]


def test_a_soci_v1_referrer_is_looked_for_once_for_a_large_layer_and_must_name_this_image():
    """SOCI index v1 is found among the image manifest's referrers: looked for once, only when a layer of SOCI's
    minimum size is read; a registry with no referrers gives an ordinary read; an index whose subject is another
    image is refused. Error paths: the documents are hand-made."""
    import dataclasses
    import json

    from imgcheck.errors import UnavailableError
    from imgcheck.sources.soci_index import SOCI_MIN_LAYER, V1_TYPE, SociReferrers

    image = "sha256:" + "4" * 64
    index_digest = "sha256:" + "5" * 64
    layer = dataclasses.replace(_layer(b"large layer"), size=SOCI_MIN_LAYER)
    small = dataclasses.replace(_layer(b"small layer"), size=SOCI_MIN_LAYER - 1)
    listing = {"manifests": [{"digest": index_digest, "artifactType": V1_TYPE}, {"digest": "x", "artifactType": "y"}]}
    asked: list[str] = []

    def referrers(digest: str, artifact_type: str) -> bytes | None:
        asked.append(digest)
        return json.dumps(listing).encode()

    def manifest_naming(subject: str):
        def get(digest: str) -> bytes:
            assert digest == index_digest
            return json.dumps({"config": {"mediaType": V1_TYPE}, "subject": {"digest": subject}, "layers": []}).encode()

        return get

    found = SociReferrers(image, referrers, manifest_naming(image), lambda *a: b"")
    assert found.ztoc(small) is None and not asked  # too small for SOCI: not looked for
    assert found.ztoc(layer) is None and found.ztoc(layer) is None and asked == [image]  # once; no zTOC listed
    other = SociReferrers(image, referrers, manifest_naming("sha256:" + "6" * 64), lambda *a: b"")
    with pytest.raises(BadInputError, match="names 'sha256:6666"):
        other.ztoc(layer)

    def none(digest: str, artifact_type: str) -> bytes | None:
        raise UnavailableError("not found")

    assert SociReferrers(image, none, manifest_naming(image), lambda *a: b"").ztoc(layer) is None
