#!/usr/bin/env python3
"""Regenerate examples/bookworm-rdma: a small OCI image holding Debian bookworm's real RDMA userspace.

It copies, unchanged, the files imgcheck reads from a real `mmdebstrap --variant=minbase
--include=libibverbs1,ibverbs-providers,libucx0 bookworm` rootfs (libibverbs, the mlx5 provider,
the dpkg database, os-release), so the README's first command works offline in seconds.

Usage: python examples/make_example.py ROOTFS.tar [OUT_DIR]
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tarfile

KEEP = re.compile(
    r"\./(etc/os-release|usr/lib/os-release|var/lib/dpkg/status|etc/libibverbs\.d/mlx5\.driver"
    r"|usr/lib/x86_64-linux-gnu/(libibverbs\.so\.1.*|libmlx5\.so\.1.*|libibverbs/libmlx5-rdmav\d+\.so))$"
)
ENV = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "NCCL_IB_RETRY_CNT=16"]


def main(rootfs: str, out: str) -> None:
    buf = io.BytesIO()
    with tarfile.open(rootfs) as src, tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as dst:
        for member in src:
            if KEEP.match(member.name):
                member.mtime = 0
                dst.addfile(member, src.extractfile(member) if member.isfile() else None)
    layer = buf.getvalue()
    blob = gzip.compress(layer, mtime=0)

    def digest(data: bytes) -> str:
        return "sha256:" + hashlib.sha256(data).hexdigest()

    config = json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Env": ENV},
            "rootfs": {"type": "layers", "diff_ids": [digest(layer)]},
            "history": [{"created_by": "examples/make_example.py from a bookworm mmdebstrap rootfs"}],
        },
        sort_keys=True,
    ).encode()
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": digest(config),
                "size": len(config),
            },
            "layers": [
                {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": digest(blob), "size": len(blob)}
            ],
        },
        sort_keys=True,
    ).encode()
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "blobs", "sha256"))
    for data in (blob, config, manifest):
        with open(os.path.join(out, "blobs", "sha256", digest(data).split(":")[1]), "wb") as fh:
            fh.write(data)
    with open(os.path.join(out, "oci-layout"), "w") as fh:
        json.dump({"imageLayoutVersion": "1.0.0"}, fh)
    with open(os.path.join(out, "index.json"), "w") as fh:
        json.dump(
            {
                "schemaVersion": 2,
                "manifests": [
                    {
                        "mediaType": "application/vnd.oci.image.manifest.v1+json",
                        "digest": digest(manifest),
                        "size": len(manifest),
                        "annotations": {"org.opencontainers.image.ref.name": "latest"},
                    }
                ],
            },
            fh,
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "bookworm-rdma"))
