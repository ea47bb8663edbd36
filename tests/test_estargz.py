"""view/estargz.py on its error paths: anything that does not verify is NotSeekable (the layer is then read whole).

The blobs are written by the format's specification (tests/estargzbuild.py) from small hand-made tars; the real
layer read from a real registry is tests/registry/test_registry_estargz.py.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile

import pytest
from estargzbuild import footer, from_tar

from imgcheck.sources.base import LayerRef
from imgcheck.sources.read_options import Limits
from imgcheck.view.estargz import FOOTER_SIZE, NotSeekable, footer_toc_offset, index_estargz
from imgcheck.view.layer_index import index_layer
from imgcheck.view.wants import Want, WantSet

WANTS = WantSet((Want(r"etc/.*", content=True), Want(r"lib/.*\.so.*", content=True, max_bytes=1 << 20)))


def _tar(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:") as tw:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tw.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tw.addfile(info)
    return out.getvalue()


FILES = {
    "etc/os-release": b'ID=debian\nVERSION_ID="12"\n',
    "lib/libx.so.1": bytes(range(256)) * 40,  # 10 KiB: several chunks at chunk_size 4096
    "usr/share/doc/big.txt": b"not wanted " * 5000,
    "etc/.wh.old.conf": b"",
}


def _layer(blob: bytes, toc_digest: str | None) -> LayerRef:
    digest = "sha256:" + hashlib.sha256(blob).hexdigest()
    return LayerRef(digest, "application/vnd.oci.image.layer.v1.tar+gzip", len(blob), toc_digest=toc_digest)


def _ranged(blob: bytes, asked: list[tuple[int, int]] | None = None):
    def read(_layer: LayerRef, start: int, end: int) -> bytes:
        if asked is not None:
            asked.append((start, end))
        return blob[start:end]

    return read


def test_the_same_index_as_a_whole_read_and_no_unwanted_bytes_fetched():
    esgz = from_tar(_tar(FILES, {"lib/libx.so": "libx.so.1"}), chunk_size=4096)
    layer = _layer(esgz.blob, esgz.toc_digest)
    asked: list[tuple[int, int]] = []
    ranged = index_estargz(layer, _ranged(esgz.blob, asked), WANTS, Limits())
    whole = index_layer(io.BytesIO(esgz.blob), layer.digest, WANTS, Limits(), diff_id=esgz.diff_id)
    assert {p: (e.kind, e.data, e.linkname) for p, e in ranged.entries.items()} == {
        p: (e.kind, e.data, e.linkname) for p, e in whole.entries.items()
    }
    assert ranged.whiteouts == whole.whiteouts == {"etc/old.conf"}
    assert list(ranged.nondir_hashes) == list(whole.nondir_hashes)
    big = next(e for e in esgz.toc["entries"] if e["name"] == "usr/share/doc/big.txt")
    assert all(not start <= big["offset"] < end for start, end in asked)  # the unwanted file was never fetched
    assert ranged.range_bytes == sum(end - start for start, end in asked) < len(esgz.blob)


def _toc_blob(entries: list[dict]) -> tuple[bytes, str]:
    """A blob of only a TOC member and the footer (for TOCs no writer would produce)."""
    import gzip

    raw = json.dumps({"version": 1, "entries": entries}).encode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:") as tw:
        info = tarfile.TarInfo("stargz.index.json")
        info.size = len(raw)
        tw.addfile(info, io.BytesIO(raw))
    member = gzip.compress(out.getvalue())
    return member + footer(0), "sha256:" + hashlib.sha256(raw).hexdigest()


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda b: b[:-FOOTER_SIZE] + b"\x00" * FOOTER_SIZE, "no eStargz footer"),
        (lambda b: b[: -FOOTER_SIZE + 16] + b"zzzz" + b[-FOOTER_SIZE + 20 :], "not hexadecimal"),
        (lambda b: b[: -FOOTER_SIZE + 36] + b"X" + b[-FOOTER_SIZE + 37 :], "not eStargz's"),  # STARGZ -> XTARGZ
    ],
)
def test_footer_checks(change, words):
    esgz = from_tar(_tar(FILES))
    assert footer_toc_offset(esgz.blob[-FOOTER_SIZE:]) == len(esgz.blob) - FOOTER_SIZE - _last_member(esgz.blob)
    blob = change(esgz.blob)
    with pytest.raises(NotSeekable, match=words):
        footer_toc_offset(blob[-FOOTER_SIZE:])


def test_a_toc_not_named_by_the_manifest_is_refused():
    esgz = from_tar(_tar(FILES))
    with pytest.raises(NotSeekable, match="does not match the manifest"):
        index_estargz(_layer(esgz.blob, "sha256:" + "1" * 64), _ranged(esgz.blob), WANTS, Limits())


def test_a_chunk_that_differs_from_its_digest_is_refused():
    esgz = from_tar(_tar(FILES), tamper="etc/os-release")
    with pytest.raises(NotSeekable, match="does not match its TOC digest"):
        index_estargz(_layer(esgz.blob, esgz.toc_digest), _ranged(esgz.blob), WANTS, Limits())


@pytest.mark.parametrize(
    "entry, words",
    [
        ({"name": "etc/a", "type": "reg", "size": 3, "offset": 7}, "not before the TOC"),
        ({"name": "etc/a", "type": "reg", "size": 3}, "no data offset"),
        ({"name": "etc/a", "type": "socket"}, "unknown type"),
        ({"name": "etc/a", "type": "reg", "size": -1}, "not a whole number"),
        ({"name": "etc/a", "type": "reg", "size": 0, "digest": "md5:abc"}, "malformed"),
    ],
)
def test_malformed_toc_entries_are_refused(entry, words):
    blob, toc_digest = _toc_blob([entry])
    with pytest.raises(NotSeekable, match=words):
        index_estargz(_layer(blob, toc_digest), _ranged(blob), WANTS, Limits())


def test_a_toc_with_more_entries_than_the_limit_is_refused():
    blob, toc_digest = _toc_blob([{"name": f"d{i}", "type": "dir"} for i in range(20)])
    with pytest.raises(NotSeekable, match="more than 10 entries"):
        index_estargz(_layer(blob, toc_digest), _ranged(blob), WANTS, Limits(max_entries=10))


def test_a_file_whose_chunks_carry_no_digest_cannot_be_verified():
    esgz = from_tar(_tar(FILES), digests=False)
    with pytest.raises(NotSeekable, match="cannot be verified"):
        index_estargz(_layer(esgz.blob, esgz.toc_digest), _ranged(esgz.blob), WANTS, Limits())


def _last_member(blob: bytes) -> int:
    """The compressed size of the TOC member (the member just before the footer)."""
    import zlib

    start = blob.rfind(b"\x1f\x8b\x08", 0, len(blob) - FOOTER_SIZE)
    while start > 0:
        inflate = zlib.decompressobj(wbits=31)
        try:
            inflate.decompress(blob[start : len(blob) - FOOTER_SIZE])
            if inflate.eof and not inflate.unused_data:
                return len(blob) - FOOTER_SIZE - start
        except zlib.error:
            pass
        start = blob.rfind(b"\x1f\x8b\x08", 0, start)
    raise AssertionError("no TOC member")
