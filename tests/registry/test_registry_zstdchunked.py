"""zstd:chunked layers from a real registry are read by range: the TOC, then only the wanted files' frames (issue 39).

The layer is the real Debian bookworm rdma rootfs written as zstd:chunked by containers/storage's layout
(tests/zstdchunkedbuild.py), pushed to Debian's docker-registry with the manifest-checksum and manifest-position
annotations. A range read must give the same facts as reading the same layer whole, fetch a small part of the
blob, and fall back to the whole read (which checks the diff_id) whenever something does not verify.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile

import pytest
from registrypush import Pusher
from zstdchunkedbuild import TOC_POSITION_ANNOTATION, ZstdChunked, annotations_of, from_tar, push_zstd_chunked

from imgcheck import api
from imgcheck.sources.read_options import ReadOptions, ReadStats

pytestmark = [pytest.mark.registry, pytest.mark.e2e]

WANTED = "usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0"


@pytest.fixture(scope="module")
def bookworm_zstd_chunked(rootfs) -> ZstdChunked:
    with open(rootfs("bookworm"), "rb") as fh:
        return from_tar(fh.read(), chunk_size=64 << 10)


def _read(registry, repo: str, **options) -> tuple:
    stats = ReadStats()
    facts = api.inspect_image(f"{registry.host}/{repo}:latest", ReadOptions(use_cache=False, stats=stats, **options))
    return facts, stats


def test_range_read_gives_the_whole_reads_facts_from_a_fraction_of_the_blob(registry, bookworm_zstd_chunked):
    layer = bookworm_zstd_chunked
    assert any(e["name"].lstrip("./") == WANTED for e in layer.toc["entries"])  # the real library is in the layer
    assert any(e["type"] == "chunk" for e in layer.toc["entries"])  # and files split in chunks
    push_zstd_chunked(Pusher(registry.url), "zchunked/bookworm", layer, annotations_of(layer))
    ranged, stats = _read(registry, "zchunked/bookworm")
    whole, whole_stats = _read(registry, "zchunked/bookworm", range_reads=False)
    assert len(stats.layers_ranged) == 1 and not whole_stats.layers_ranged
    assert 0 < stats.bytes_ranged < len(layer.blob) // 4
    lib = ranged.rdma.libibverbs
    assert (lib.version, lib.rdma_core, lib.private_abi) == ("1.14.44.0", "44.0", 34)
    assert ranged.rdma == whole.rdma and ranged.ucx == whole.ucx and ranged.os == whole.os
    assert ranged.packages == whole.packages and ranged.env == whole.env
    assert [l.diff_id for l in ranged.layers] == [l.diff_id for l in whole.layers]


@pytest.mark.parametrize("case", ["checksum-wrong", "position-wrong", "chunk-tampered"])
def test_what_does_not_verify_is_read_whole(registry, rootfs, bookworm_zstd_chunked, case):
    layer, annotations = bookworm_zstd_chunked, annotations_of(bookworm_zstd_chunked)
    if case == "checksum-wrong":
        annotations = {**annotations, next(iter(annotations)): "sha256:" + "0" * 64}
    elif case == "position-wrong":  # the TOC's length one short: its checksum cannot match
        offset, length, plain, kind = layer.toc_position.split(":")
        annotations = {**annotations, TOC_POSITION_ANNOTATION: f"{offset}:{int(length) - 1}:{plain}:{kind}"}
    else:
        with open(rootfs("bookworm"), "rb") as fh:
            layer = from_tar(fh.read(), chunk_size=64 << 10, tamper=WANTED)
        annotations = annotations_of(layer)
    repo = f"zchunked/{case}"
    push_zstd_chunked(Pusher(registry.url), repo, layer, annotations)
    facts, stats = _read(registry, repo)
    assert stats.layers_ranged == [] and len(stats.layers_read) == 1  # the whole layer, its diff_id checked
    assert any("read whole" in note for note in facts.notes), facts.notes
    assert facts.rdma.libibverbs is not None


def test_a_zstd_layer_without_the_annotations_is_an_ordinary_zstd_layer(registry, bookworm_zstd_chunked):
    push_zstd_chunked(Pusher(registry.url), "zchunked/plain", bookworm_zstd_chunked, None)
    facts, stats = _read(registry, "zchunked/plain")
    assert stats.layers_ranged == [] and not any("read whole" in n for n in facts.notes)
    assert facts.rdma.libibverbs.rdma_core == "44.0"


def _oci_dir(path: str, tar: bytes) -> None:
    """A one-layer OCI layout of `tar` (gzip), for skopeo to convert."""
    from imagebuild import image_config

    os.makedirs(f"{path}/blobs/sha256")

    def put(data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        with open(f"{path}/blobs/sha256/{digest}", "wb") as fh:
            fh.write(data)
        return "sha256:" + digest

    layer = gzip.compress(tar, 1)
    config = json.dumps(image_config(["sha256:" + hashlib.sha256(tar).hexdigest()])).encode()
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": put(config), "size": len(config)},
        "layers": [
            {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": put(layer), "size": len(layer)}
        ],
    }
    raw = json.dumps(manifest).encode()
    index = {
        "schemaVersion": 2,
        "manifests": [
            {
                "mediaType": manifest["mediaType"],
                "digest": put(raw),
                "size": len(raw),
                "annotations": {"org.opencontainers.image.ref.name": "latest"},
            }
        ],
    }
    with open(f"{path}/index.json", "w") as fh:
        json.dump(index, fh)
    with open(f"{path}/oci-layout", "w") as fh:
        fh.write('{"imageLayoutVersion": "1.0.0"}')


@pytest.mark.skipif(shutil.which("skopeo") is None, reason="needs skopeo (Debian package skopeo, .ci/run installs it)")
def test_a_layer_skopeo_wrote_as_zstd_chunked_is_read_by_range(registry, rootfs, tmp_path):
    """The same layer converted by a real containers/image + containers/storage (Debian's skopeo, which writes the
    pre-v1.44 `io.containers.zstd-chunked.*` annotation keys), pushed by skopeo itself to the test registry."""
    with open(rootfs("bookworm"), "rb") as fh:
        tar = fh.read()
    with tarfile.open(fileobj=io.BytesIO(tar), mode="r:") as walk:
        for _member in walk:
            pass
        end = walk.offset
    # skopeo 1.9's zstd:chunked stream ends the tar after its two zero blocks, dropping the record padding mmdebstrap
    # writes, yet keeps the config's diff_id: a whole read would then (rightly) refuse the layer. Without padding
    # the tar, and so the diff_id, survive the conversion.
    _oci_dir(str(tmp_path / "src"), tar[: end + 1024])
    subprocess.run(
        [
            "skopeo", "copy", "--quiet", "--dest-tls-verify=false", "--dest-compress-format", "zstd:chunked",
            f"oci:{tmp_path / 'src'}:latest", f"docker://{registry.host}/zchunked/skopeo:latest",
        ],
        check=True, timeout=300, capture_output=True,
    )  # fmt: skip
    ranged, stats = _read(registry, "zchunked/skopeo")
    whole, _ = _read(registry, "zchunked/skopeo", range_reads=False)
    assert len(stats.layers_ranged) == 1, ranged.notes
    assert ranged.rdma.libibverbs.rdma_core == "44.0"
    assert ranged.rdma == whole.rdma and ranged.ucx == whole.ucx and ranged.os == whole.os
    assert ranged.packages == whole.packages and ranged.env == whole.env
