"""Write an eStargz blob from a tar, by the format's specification (no Python builder exists on PyPI).

github.com/containerd/stargz-snapshotter docs/estargz.md and estargz/gzip.go: every tar header and every chunk
of a regular file's data is its own gzip member; a gzip member with a tar of `stargz.index.json` (the TOC)
follows, then the 51-byte footer (an empty member whose Extra field is `SG`, 22, `%016x` TOC offset, `STARGZ`).
The concatenated members decompress to an ordinary tar, so any runtime reads the blob as a gzip layer.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from dataclasses import dataclass

TOC_DIGEST_ANNOTATION = "containerd.io/snapshot/stargz/toc.digest"
_KINDS = {
    tarfile.DIRTYPE: "dir",
    tarfile.SYMTYPE: "symlink",
    tarfile.LNKTYPE: "hardlink",
    tarfile.CHRTYPE: "char",
    tarfile.BLKTYPE: "block",
    tarfile.FIFOTYPE: "fifo",
}


@dataclass
class Estargz:
    blob: bytes
    toc_digest: str
    diff_id: str  # sha256 of the decompressed tar
    toc: dict


def _member(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=1, mtime=0)


def footer(toc_offset: int) -> bytes:
    subfield = f"{toc_offset:016x}STARGZ".encode()
    extra = b"SG" + len(subfield).to_bytes(2, "little") + subfield
    header = b"\x1f\x8b\x08\x04" + b"\x00" * 5 + b"\xff" + len(extra).to_bytes(2, "little") + extra
    return header + b"\x01\x00\x00\xff\xff" + b"\x00" * 8


def from_tar(tar_bytes: bytes, chunk_size: int = 4 << 20, tamper: str | None = None, digests: bool = True) -> Estargz:
    """The eStargz form of a tar. `tamper` names a file whose first byte is changed after its digests are taken
    (a blob whose data no longer matches its TOC); `digests=False` leaves the files' and chunks' digests out."""
    out = io.BytesIO()
    plain = hashlib.sha256()
    entries: list[dict] = []

    def emit(data: bytes) -> int:
        at = out.tell()
        out.write(_member(data))
        plain.update(data)
        return at

    with tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:") as src:
        for info in src:
            header = info.tobuf(format=tarfile.PAX_FORMAT, encoding="utf-8", errors="surrogateescape")
            emit(header)
            name = info.name[2:] if info.name.startswith("./") else info.name
            entry: dict = {"name": name, "mode": info.mode}
            if info.isreg():
                data = src.extractfile(info).read()  # type: ignore[union-attr]
                entry.update(type="reg", size=len(data), digest="sha256:" + hashlib.sha256(data).hexdigest())
                entries.append(entry)
                for start in range(0, len(data), chunk_size):
                    chunk = data[start : start + chunk_size]
                    digest = "sha256:" + hashlib.sha256(chunk).hexdigest()
                    if tamper == name and start == 0:
                        chunk = bytes([chunk[0] ^ 0xFF]) + chunk[1:]
                    last = start + chunk_size >= len(data)
                    pad = b"\0" * (-len(data) % 512) if last else b""
                    at = emit(chunk + pad)
                    target = entry if start == 0 else {"name": name, "type": "chunk"}
                    target.update(offset=at, chunkOffset=start, chunkSize=len(chunk), chunkDigest=digest)
                    if start:
                        entries.append(target)
                continue
            entry["type"] = _KINDS.get(info.type, "reg")
            if info.issym() or info.islnk():
                entry["linkName"] = info.linkname
            entries.append(entry)
    if not digests:
        for entry in entries:
            entry.pop("digest", None)
            entry.pop("chunkDigest", None)
    toc = {"version": 1, "entries": entries}
    toc_json = json.dumps(toc, indent="\t").encode()
    toc_tar = io.BytesIO()
    with tarfile.open(fileobj=toc_tar, mode="w:", format=tarfile.PAX_FORMAT) as tw:
        info = tarfile.TarInfo("stargz.index.json")
        info.size = len(toc_json)
        tw.addfile(info, io.BytesIO(toc_json))
    toc_offset = emit(toc_tar.getvalue())
    out.write(footer(toc_offset))
    return Estargz(
        blob=out.getvalue(),
        toc_digest="sha256:" + hashlib.sha256(toc_json).hexdigest(),
        diff_id="sha256:" + plain.hexdigest(),
        toc=toc,
    )


def push_estargz(pusher, repo: str, layer: Estargz, annotation: str | None, tag: str = "latest") -> str:
    """A one-layer OCI image of `layer` (with the TOC digest annotation unless None); its manifest digest."""
    from registrypush import push_one_layer

    annotations = {TOC_DIGEST_ANNOTATION: annotation} if annotation is not None else None
    media_type = "application/vnd.oci.image.layer.v1.tar+gzip"
    return push_one_layer(pusher, repo, layer.blob, layer.diff_id, media_type, annotations, tag)
