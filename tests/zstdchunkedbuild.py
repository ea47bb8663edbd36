"""Write a zstd:chunked blob from a tar, by the format's specification (no Python writer exists on PyPI).

github.com/containers/storage pkg/chunked/compressor/compressor.go (writeZstdChunkedStream) and
pkg/chunked/internal/minimal/compression.go (WriteZstdChunkedManifest): tar headers and padding go into zstd
frames of their own, every regular file's data (each chunk of it) starts a fresh frame; after the tar come three
zstd skippable frames (magic 0x184D2A50): the zstd-compressed TOC JSON, the tar-split data, and the 64-byte footer
(TOC offset, compressed and uncompressed length, type 1, tar-split offset and lengths, `GNUlInUx`). The manifest
annotations give the compressed TOC's sha256 and `offset:length:uncompressed-length:1`. Upstream splits files by a
rolling checksum; here a file is split every `chunk_size` bytes, which the reader cannot tell apart.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from dataclasses import dataclass

import zstandard

TOC_DIGEST_ANNOTATION = "io.github.containers.zstd-chunked.manifest-checksum"
TOC_POSITION_ANNOTATION = "io.github.containers.zstd-chunked.manifest-position"
_SKIPPABLE_MAGIC = bytes([0x50, 0x2A, 0x4D, 0x18])
_FOOTER_MAGIC = bytes([0x47, 0x4E, 0x55, 0x6C, 0x49, 0x6E, 0x55, 0x78])
_KINDS = {
    tarfile.DIRTYPE: "dir",
    tarfile.SYMTYPE: "symlink",
    tarfile.LNKTYPE: "hardlink",
    tarfile.CHRTYPE: "char",
    tarfile.BLKTYPE: "block",
    tarfile.FIFOTYPE: "fifo",
}


@dataclass
class ZstdChunked:
    blob: bytes
    toc_digest: str  # sha256 of the compressed TOC (the manifest-checksum annotation)
    toc_position: str  # the manifest-position annotation
    diff_id: str  # sha256 of the decompressed tar
    toc: dict


def _frame(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=1).compress(data)


def _skippable(data: bytes) -> bytes:
    return _SKIPPABLE_MAGIC + len(data).to_bytes(4, "little") + data


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def from_tar(tar_bytes: bytes, chunk_size: int = 1 << 20, tamper: str | None = None) -> ZstdChunked:
    """The zstd:chunked form of a tar. `tamper` names a file (without `./`) whose first byte is changed after its
    digests are taken (a blob whose data no longer matches its TOC; the diff_id is of the changed tar)."""
    out = io.BytesIO()
    pending = bytearray()  # tar bytes (headers, padding) waiting for the frame they go in

    def flush() -> int:
        if pending:
            out.write(_frame(bytes(pending)))
            pending.clear()
        return out.tell()

    entries: list[dict] = []
    source = bytearray(tar_bytes)  # the tar the frames hold (a tampered file changed)
    with tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:") as tar:
        for info in tar:
            pending += tar_bytes[info.offset : info.offset_data]
            entry: dict = {"type": _KINDS.get(info.type, "reg"), "name": info.name}
            if info.mode:
                entry["mode"] = info.mode
            if info.issym() or info.islnk():
                entry["linkName"] = info.linkname
            entries.append(entry)
            if not info.isreg() or not info.size:
                if info.isreg():
                    entry["type"] = "reg"
                continue
            entry["size"] = info.size
            data = tar_bytes[info.offset_data : info.offset_data + info.size]
            entry["digest"] = _sha(data)
            if tamper == info.name.removeprefix("./"):
                data = bytes([data[0] ^ 0xFF]) + data[1:]
                source[info.offset_data] = data[0]
            start = flush()
            pieces = [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)]
            offsets = []
            for piece in pieces:
                offsets.append(out.tell())
                out.write(_frame(piece))
            entry["offset"], entry["endOffset"] = start, out.tell()
            if len(pieces) > 1:
                clean = tar_bytes[info.offset_data : info.offset_data + info.size]
                for i, at in enumerate(offsets):
                    chunk = clean[i * chunk_size : (i + 1) * chunk_size]
                    target = entry if i == 0 else {"type": "chunk", "name": info.name}
                    target.update(offset=at, chunkSize=len(chunk), chunkDigest=_sha(chunk))
                    if i:
                        target["chunkOffset"] = i * chunk_size
                        entries.append(target)
            pad_from = info.offset_data + info.size
            pending += tar_bytes[pad_from : info.offset_data + -(-info.size // 512) * 512]
        end = tar.offset
    pending += tar_bytes[end:]
    flush()
    toc = {"version": 1, "entries": entries}
    toc_json = json.dumps(toc).encode()
    toc_compressed = _frame(toc_json)
    toc_offset = out.tell() + 8
    out.write(_skippable(toc_compressed))
    tar_split = _frame(b"")
    split_offset = out.tell() + 8
    out.write(_skippable(tar_split))
    footer = b"".join(
        n.to_bytes(8, "little")
        for n in (toc_offset, len(toc_compressed), len(toc_json), 1, split_offset, len(tar_split), 0)
    )
    out.write(_skippable(footer + _FOOTER_MAGIC))
    return ZstdChunked(
        blob=out.getvalue(),
        toc_digest=_sha(toc_compressed),
        toc_position=f"{toc_offset}:{len(toc_compressed)}:{len(toc_json)}:1",
        diff_id=_sha(bytes(source)),
        toc=toc,
    )


def push_zstd_chunked(pusher, repo: str, layer: ZstdChunked, annotations: dict | None, tag: str = "latest") -> str:
    """A one-layer OCI image of `layer` with `annotations` on its descriptor (None: none); its manifest digest."""
    from registrypush import push_one_layer

    media_type = "application/vnd.oci.image.layer.v1.tar+zstd"
    return push_one_layer(pusher, repo, layer.blob, layer.diff_id, media_type, annotations, tag)


def annotations_of(layer: ZstdChunked) -> dict:
    return {TOC_DIGEST_ANNOTATION: layer.toc_digest, TOC_POSITION_ANNOTATION: layer.toc_position}
