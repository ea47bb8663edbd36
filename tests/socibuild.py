"""A SOCI zTOC for a gzip layer, written by the spec (github.com/awslabs/soci-snapshotter at 77fb4266): members from
the tar as ztoc/toc_builder.go takes them, checkpoints at deflate block boundaries (rapidgzip's index export: the
compressed offset of the first full byte, the bits before it and the 32 KiB window, as zran.c and
ztoc/compression/gzip_zinfo.c keep them), packed as gzip_zinfo.c's v2 blob, span digests as
ztoc/zinfo_builder.go getPerSpanDigests hashes them, and the flatbuffer of ztoc/fbs/ztoc.fbs built with the
flatbuffers runtime. `soci_index` is the index manifest v2 (soci/soci_index.go) listing it.
"""

from __future__ import annotations

import hashlib
import io
import struct
import tarfile
from dataclasses import dataclass

import flatbuffers

WINDOW = 32768


@dataclass
class Soci:
    blob: bytes  # the gzip layer
    ztoc: bytes
    ztoc_digest: str
    spans: list[tuple[int, int]]  # compressed [start, end) of each span
    members: list[tuple[str, int, int]]  # (name, data offset, size)


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def checkpoints(blob: bytes, span_size: int) -> list[tuple[int, int, int, bytes]]:
    """(in, out, bits, window) of each checkpoint, taken about every `span_size` compressed bytes by imgcheck's
    own zran inflate (view/zran.py: zlib's Z_BLOCK boundaries, as soci's ztoc/compression/gzip_zinfo.c takes them)."""
    from imgcheck.view import zran

    z = zran.lib()
    assert z is not None, "zlib-ng or zlib is needed to build a zTOC's checkpoints"
    inflater = zran.Inflater(io.BytesIO(blob), z, span_size)
    buf = memoryview(bytearray(1 << 20))
    while inflater.readinto(buf):
        pass
    inflater.close()
    return [(c, u, bits, window) for (c, u, bits), window in zip(inflater.points, inflater.windows)]


def zinfo_blob(points: list[tuple[int, int, int, bytes]], span_size: int) -> bytes:
    out = struct.pack("<iq", len(points), span_size)
    for c, u, bits, window in points:
        out += struct.pack("<qqB", c, u, bits) + window
    return out


def tar_zinfo(size: int, span_size: int) -> bytes:
    """ztoc/compression/fbs/zinfo.fbs TarZinfo (version 2, as tar_zinfo.go writes it): an uncompressed layer's spans."""
    b = flatbuffers.Builder(0)
    b.StartObject(3)
    b.PrependInt32Slot(0, 2, 0)
    b.PrependInt64Slot(1, span_size, 0)
    b.PrependInt64Slot(2, size, 0)
    b.Finish(b.EndObject())
    return bytes(b.Output())


def build(
    blob: bytes, tar_bytes: bytes, span_size: int = 1 << 20, tamper_digest: int | None = None, misplace: str = ""
) -> Soci:
    """The zTOC of gzip layer `blob` (whose tar is `tar_bytes`; `blob` is `tar_bytes` itself for an uncompressed
    layer: compression_algorithm Uncompressed, fixed spans, ztoc/zinfo_builder.go tarZinfoBuilder).
    `tamper_digest`: span whose digest is wrong; `misplace`: a member (name ending so) given the data extent of the
    regular file listed before it."""
    uncompressed = blob is tar_bytes
    if uncompressed:
        points = [(k, k, 0, b"") for k in range(0, len(blob), span_size)]
    else:
        points = checkpoints(blob, span_size)
    spans = []
    for i, (c, _u, bits, _w) in enumerate(points):
        end = points[i + 1][0] if i + 1 < len(points) else len(blob)
        spans.append((c - (1 if bits else 0), end))
    digests = [_digest(blob[s:e]) for s, e in spans]
    if tamper_digest is not None:
        digests[tamper_digest] = _digest(b"not this span")
    members = []
    with tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:") as tar:
        for info in tar:
            kind = {b"0": "reg", b"5": "dir", b"2": "symlink", b"1": "hardlink", b"3": "char", b"4": "block"}
            flag = info.type if info.type != tarfile.AREGTYPE else tarfile.REGTYPE
            members.append((info.name, kind.get(flag, "fifo"), info.offset_data, info.size, info.mode, info.linkname))
    if misplace:
        i = next(i for i, m in enumerate(members) if m[0].endswith(misplace))
        j = max(k for k in range(i) if members[k][1] == "reg" and members[k][3])
        members[i] = (members[i][0], "reg", members[j][2], members[j][3], members[i][4], "")
    b = flatbuffers.Builder(0)

    def text(value: str) -> int:
        return b.CreateString(value)

    offsets = []
    for name, kind, offset, size, mode, link in members:
        n, k, lk = text(name), text(kind), text(link)
        b.StartObject(14)
        b.PrependUOffsetTRelativeSlot(0, n, 0)
        b.PrependUOffsetTRelativeSlot(1, k, 0)
        b.PrependInt64Slot(2, offset, 0)
        b.PrependInt64Slot(3, size, 0)
        b.PrependUOffsetTRelativeSlot(4, lk, 0)
        b.PrependInt64Slot(5, mode, 0)
        offsets.append(b.EndObject())
    b.StartVector(4, len(offsets), 4)
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    metadata = b.EndVector()
    b.StartObject(1)
    b.PrependUOffsetTRelativeSlot(0, metadata, 0)
    toc = b.EndObject()
    checkpoint_bytes = b.CreateByteVector(
        tar_zinfo(len(blob), span_size) if uncompressed else zinfo_blob(points, span_size)
    )
    digest_strings = [text(d) for d in digests]
    b.StartVector(4, len(digest_strings), 4)
    for o in reversed(digest_strings):
        b.PrependUOffsetTRelative(o)
    digest_vector = b.EndVector()
    b.StartObject(4)
    if uncompressed:
        b.PrependInt8Slot(0, 2, 1)  # CompressionAlgorithm.Uncompressed
    b.PrependInt32Slot(1, len(points) - 1, 0)
    b.PrependUOffsetTRelativeSlot(2, digest_vector, 0)
    b.PrependUOffsetTRelativeSlot(3, checkpoint_bytes, 0)
    info = b.EndObject()
    version, tool = text("0.9"), text("AWS SOCI CLI v0.2")
    b.StartObject(6)
    b.PrependUOffsetTRelativeSlot(0, version, 0)
    b.PrependUOffsetTRelativeSlot(1, tool, 0)
    b.PrependInt64Slot(2, len(blob), 0)
    b.PrependInt64Slot(3, len(tar_bytes), 0)
    b.PrependUOffsetTRelativeSlot(4, toc, 0)
    b.PrependUOffsetTRelativeSlot(5, info, 0)
    b.Finish(b.EndObject())
    ztoc = bytes(b.Output())
    return Soci(blob, ztoc, _digest(ztoc), spans, [(m[0], m[2], m[3]) for m in members])


def soci_index(layer_digest: str, layer_media_type: str, soci: Soci, config_digest: str) -> dict:
    """The SOCI index manifest v2 listing the zTOC (soci/soci_index.go NewIndex, addSociLayerAnnotations)."""
    return {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "artifactType": "application/vnd.amazon.soci.index.v2+json",
        "config": {"mediaType": "application/vnd.amazon.soci.index.v2+json", "digest": config_digest, "size": 2},
        "layers": [
            {
                "mediaType": "application/octet-stream",
                "digest": soci.ztoc_digest,
                "size": len(soci.ztoc),
                "annotations": {
                    "com.amazon.soci.image-layer-mediaType": layer_media_type,
                    "com.amazon.soci.image-layer-digest": layer_digest,
                    "com.amazon.soci.span-size": "1048576",
                },
            }
        ],
    }


def push_soci_image(
    pusher,
    repo: str,
    soci: Soci,
    diff_id: str,
    annotate: str | None = None,
    tag: str = "latest",
    media: str = "application/vnd.oci.image.layer.v1.tar+gzip",
):
    """A SOCI-enabled image as `soci convert` lays it out (soci/soci_convert.go): the zTOC and the SOCI index
    manifest pushed by digest, the image manifest annotated with `com.amazon.soci.index-digest` (`annotate`
    overrides the value), and an OCI index listing the SOCI index (artifactType, same platform) before the image.
    Returns the layer's digest."""
    import json

    from imagebuild import image_config

    layer_digest = pusher.push_blob(repo, soci.blob)
    pusher.push_blob(repo, soci.ztoc)
    empty = pusher.push_blob(repo, b"{}")
    index = json.dumps(soci_index(layer_digest, media, soci, empty), sort_keys=True).encode()
    index_digest = pusher.push_manifest(repo, _digest(index), index, "application/vnd.oci.image.manifest.v1+json")
    config = json.dumps(image_config([diff_id]), sort_keys=True).encode()
    config_digest = pusher.push_blob(repo, config)
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": config_digest,
            "size": len(config),
        },
        "layers": [{"mediaType": media, "digest": layer_digest, "size": len(soci.blob)}],
        "annotations": {"com.amazon.soci.index-digest": annotate or index_digest},
    }
    data = json.dumps(manifest, sort_keys=True).encode()
    image_digest = pusher.push_manifest(repo, _digest(data), data, "application/vnd.oci.image.manifest.v1+json")
    platform = {"os": "linux", "architecture": "amd64"}
    top = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": index_digest,
                "size": len(index),
                "artifactType": "application/vnd.amazon.soci.index.v2+json",
                "platform": platform,
                "annotations": {"com.amazon.soci.image-manifest-digest": image_digest},
            },
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": image_digest,
                "size": len(data),
                "platform": platform,
            },
        ],
    }
    pusher.push_manifest(repo, tag, json.dumps(top, sort_keys=True).encode(), "application/vnd.oci.image.index.v1+json")
    return layer_digest


def push_soci_v1_image(pusher, repo: str, soci: Soci, diff_id: str, subject: str | None = None, tag: str = "latest"):
    """A SOCI index manifest v1 beside a plain image, as `soci create` (v1) and `soci push` lay it out: the image
    manifest carries no annotation; the index names the image in its `subject` (`subject` overrides the digest) and
    is found as a referrer. Debian's docker-registry has no referrers API, so the referrers tag schema of the
    distribution spec v1.1 is used: an OCI index of the referrers under the tag `sha256-<hex of the image manifest>`.
    Returns the image manifest's digest."""
    import json

    from imagebuild import image_config

    media = "application/vnd.oci.image.layer.v1.tar+gzip"
    layer_digest = pusher.push_blob(repo, soci.blob)
    config = json.dumps(image_config([diff_id]), sort_keys=True).encode()
    config_digest = pusher.push_blob(repo, config)
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": config_digest,
            "size": len(config),
        },
        "layers": [{"mediaType": media, "digest": layer_digest, "size": len(soci.blob)}],
    }
    data = json.dumps(manifest, sort_keys=True).encode()
    image_digest = pusher.push_manifest(repo, tag, data, "application/vnd.oci.image.manifest.v1+json")
    pusher.push_blob(repo, soci.ztoc)
    empty = pusher.push_blob(repo, b"{}")
    index = soci_index(layer_digest, media, soci, empty)
    index["artifactType"] = index["config"]["mediaType"] = "application/vnd.amazon.soci.index.v1+json"
    index["subject"] = {
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": subject or image_digest,
        "size": len(data),
    }
    index_bytes = json.dumps(index, sort_keys=True).encode()
    index_digest = pusher.push_manifest(
        repo, _digest(index_bytes), index_bytes, "application/vnd.oci.image.manifest.v1+json"
    )
    referrers = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": index_digest,
                "size": len(index_bytes),
                "artifactType": "application/vnd.amazon.soci.index.v1+json",
            }
        ],
    }
    pusher.push_manifest(
        repo,
        image_digest.replace(":", "-"),
        json.dumps(referrers, sort_keys=True).encode(),
        "application/vnd.oci.image.index.v1+json",
    )
    return image_digest
