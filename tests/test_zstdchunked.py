"""view/zstdchunked.py: a zstd:chunked layer's range read gives a whole read's index from the TOC and the wanted
files' frames; anything that does not verify is NotSeekable (the layer is then read whole).

Blobs are written by the format's specification (tests/zstdchunkedbuild.py); the real bookworm layer through a real
registry is tests/registry/test_registry_zstdchunked.py.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from dataclasses import replace

import pytest
import zstandard
from zstdchunkedbuild import ZstdChunked, from_tar

from imgcheck.sources.base import LayerRef
from imgcheck.sources.manifest import layers_of_manifest
from imgcheck.sources.read_options import Limits
from imgcheck.view.layer_index import index_layer
from imgcheck.view.seekable import NotSeekable
from imgcheck.view.wants import Want, WantSet
from imgcheck.view.zstdchunked import index_zstd_chunked

WANTS = WantSet((Want(r"etc/.*", content=True), Want(r"lib/.*\.so.*", content=True, max_bytes=1 << 20)))
FILES = {
    "etc/os-release": b'ID=debian\nVERSION_ID="12"\n',
    "lib/libx.so.1": bytes(range(256)) * 40,  # 10 KiB: three chunks at chunk_size 4096
    "usr/share/doc/big.txt": b"not wanted " * 5000,
    "etc/empty.conf": b"",
    "etc/.wh.old.conf": b"",
}


def _tar() -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:") as tw:
        for name, data in FILES.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tw.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("lib/libx.so")
        info.type, info.linkname = tarfile.SYMTYPE, "libx.so.1"
        tw.addfile(info)
    return out.getvalue()


def _layer(zc: ZstdChunked, toc_digest: str | None = None, position: str | None = None) -> LayerRef:
    digest = "sha256:" + hashlib.sha256(zc.blob).hexdigest()
    return LayerRef(
        digest,
        "application/vnd.oci.image.layer.v1.tar+zstd",
        len(zc.blob),
        toc_digest=toc_digest or zc.toc_digest,
        toc_position=position or zc.toc_position,
    )


def _ranged(blob: bytes, asked: list[tuple[int, int]] | None = None):
    def read(_layer: LayerRef, start: int, end: int) -> bytes:
        if asked is not None:
            asked.append((start, end))
        return blob[start:end]

    return read


def test_the_same_index_as_a_whole_read_and_no_unwanted_bytes_fetched():
    zc = from_tar(_tar(), chunk_size=4096)
    lib = [e for e in zc.toc["entries"] if e["name"] == "lib/libx.so.1"]
    assert [e["type"] for e in lib] == ["reg", "chunk", "chunk"]  # the file is split, as upstream splits big files
    layer = _layer(zc)
    asked: list[tuple[int, int]] = []
    ranged = index_zstd_chunked(layer, _ranged(zc.blob, asked), WANTS, Limits())
    whole = index_layer(io.BytesIO(zc.blob), layer.digest, WANTS, Limits(), diff_id=zc.diff_id)
    assert {p: (e.kind, e.data, e.linkname) for p, e in ranged.entries.items()} == {
        p: (e.kind, e.data, e.linkname) for p, e in whole.entries.items()
    }
    assert ranged.entries["lib/libx.so.1"].data == FILES["lib/libx.so.1"]
    assert ranged.whiteouts == whole.whiteouts == {"etc/old.conf"}
    assert list(ranged.nondir_hashes) == list(whole.nondir_hashes)
    big = next(e for e in zc.toc["entries"] if e["name"] == "usr/share/doc/big.txt")
    assert all(not start <= big["offset"] < end for start, end in asked)  # the unwanted file was never fetched
    assert ranged.range_bytes == sum(end - start for start, end in asked) < len(zc.blob)


def test_the_manifest_annotations_make_a_zstd_layer_seekable_and_nothing_else_does():
    zc = from_tar(_tar())
    annotations = {
        "io.github.containers.zstd-chunked.manifest-checksum": zc.toc_digest,
        "io.github.containers.zstd-chunked.manifest-position": zc.toc_position,
    }

    def manifest(media_type: str, ann: dict) -> LayerRef:
        desc = {"mediaType": media_type, "digest": "sha256:" + "a" * 64, "size": 1, "annotations": ann}
        doc = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "layers": [desc]}
        return layers_of_manifest(doc, "test")[0]

    zstd = "application/vnd.oci.image.layer.v1.tar+zstd"
    got = manifest(zstd, annotations)
    assert (got.toc_digest, got.toc_position) == (zc.toc_digest, zc.toc_position)
    only_checksum = {k: v for k, v in annotations.items() if k.endswith("checksum")}
    assert (manifest(zstd, only_checksum).toc_digest, manifest(zstd, only_checksum).toc_position) == (None, None)
    # the keys containers/storage wrote before v1.44.0 (Debian bookworm's skopeo still does)
    old_keys = {k.replace("io.github.containers", "io.containers"): v for k, v in annotations.items()}
    assert (manifest(zstd, old_keys).toc_digest, manifest(zstd, old_keys).toc_position) == (
        zc.toc_digest,
        zc.toc_position,
    )
    gzip_layer = manifest("application/vnd.oci.image.layer.v1.tar+gzip", annotations)
    assert (gzip_layer.toc_digest, gzip_layer.toc_position) == (None, None)


@pytest.mark.parametrize(
    "case",
    ["checksum-wrong", "position-malformed", "position-type", "position-outside", "toc-length", "file-tampered"],
)
def test_what_does_not_verify_is_not_seekable(case):
    zc = from_tar(_tar(), chunk_size=4096)
    layer = _layer(zc)
    offset, length, plain, _kind = zc.toc_position.split(":")
    if case == "checksum-wrong":
        layer = replace(layer, toc_digest="sha256:" + "0" * 64)
    elif case == "position-malformed":
        layer = replace(layer, toc_position=f"{offset}:{length}")
    elif case == "position-type":
        layer = replace(layer, toc_position=f"{offset}:{length}:{plain}:2")
    elif case == "position-outside":
        layer = replace(layer, toc_position=f"{len(zc.blob)}:{length}:{plain}:1")
    elif case == "toc-length":
        layer = replace(layer, toc_position=f"{offset}:{length}:{int(plain) - 1}:1")
    else:
        tampered = from_tar(_tar(), chunk_size=4096, tamper="etc/os-release")
        zc, layer = tampered, _layer(tampered)
    with pytest.raises(NotSeekable):
        index_zstd_chunked(layer, _ranged(zc.blob), WANTS, Limits())


def test_a_tampered_chunk_of_a_split_file_is_not_seekable():
    zc = from_tar(_tar(), chunk_size=4096, tamper="lib/libx.so.1")
    with pytest.raises(NotSeekable, match="chunk"):
        index_zstd_chunked(_layer(zc), _ranged(zc.blob), WANTS, Limits())


def _with_toc(zc: ZstdChunked, entries: list[dict]) -> tuple[bytes, LayerRef]:
    """The blob with its TOC replaced (for TOCs no writer would produce), and its layer with matching annotations."""
    toc_json = json.dumps({"version": 1, "entries": entries}).encode()
    compressed = zstandard.ZstdCompressor().compress(toc_json)
    offset = len(zc.blob) + 8
    blob = zc.blob + b"\x50\x2a\x4d\x18" + len(compressed).to_bytes(4, "little") + compressed
    digest = "sha256:" + hashlib.sha256(compressed).hexdigest()
    layer = LayerRef("sha256:" + hashlib.sha256(blob).hexdigest(), "x", len(blob))
    return blob, replace(layer, toc_digest=digest, toc_position=f"{offset}:{len(compressed)}:{len(toc_json)}:1")


@pytest.mark.parametrize("case", ["offset-outside", "chunk-without-file", "no-digest", "bomb"])
def test_a_toc_no_writer_produces_is_not_seekable(case):
    zc = from_tar(_tar(), chunk_size=4096)
    entries = [dict(e) for e in zc.toc["entries"]]
    release = next(e for e in entries if e["name"] == "etc/os-release")
    if case == "offset-outside":
        release["endOffset"] = len(zc.blob) * 2
    elif case == "chunk-without-file":
        entries.insert(0, {"type": "chunk", "name": "etc/nothing", "offset": 1, "chunkSize": 1})
    elif case == "no-digest":
        del release["digest"]
    else:  # a frame that inflates far beyond its entry's size stops at the size and does not match
        release["size"] = 1
    blob, layer = _with_toc(zc, entries)
    with pytest.raises(NotSeekable):
        index_zstd_chunked(layer, _ranged(blob), WANTS, Limits())


def test_a_chunk_larger_than_the_bound_is_not_inflated_into_memory(monkeypatch):
    """A file in one frame (or a hostile TOC) could inflate to gigabytes: over the bound, the layer is read whole,
    which streams it."""
    from imgcheck.view import seekable

    zc = from_tar(_tar(), chunk_size=1 << 20)  # lib/libx.so.1 (10 KiB) in one frame
    monkeypatch.setattr(seekable, "MAX_CHUNK_BYTES", 8 << 10)
    with pytest.raises(NotSeekable, match="decompressed"):
        index_zstd_chunked(_layer(zc), _ranged(zc.blob), WANTS, Limits())
