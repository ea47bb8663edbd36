"""`enroot:PATH.sqsh`: an Enroot squashfs image, supplied as one squashfs layer (a byte range).

The view reads the filesystem (view/squashfs.py); this source only names its bytes, their digest
and where Enroot keeps the image's Env. SIF files (sif.py) supply a partition the same way.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

from ..errors import BadInputError
from ..fsutil import open_input, reading_input
from ..streams import FileRange
from .base import SQUASHFS_LAYER, EnvFile, LayerRef, OpenedImage, Source
from .platform import platform_of_config

MAX_ENV_FILE = 1024 * 1024
# Enroot keeps the image's Env in /etc/environment (NVIDIA/enroot doc/image-format.md; docker.sh
# docker::configure writes `jq -r '.config.Env[]'` there at import)
ENROOT_ENVIRONMENT = "etc/environment"


def region_digest(path: str, offset: int, size: int, what: str) -> str:
    """sha256 of the squashfs bytes, streamed once (for a .sqsh file: what `sha256sum` prints)."""
    h = hashlib.sha256()
    with reading_input(path, "a squashfs file", where=what) as fh:
        fh.seek(offset)
        left = size
        while left > 0:
            chunk = fh.read(min(left, 1 << 20))
            if not chunk:
                raise BadInputError(f"{what}: truncated (file ends inside the squashfs)")
            h.update(chunk)
            left -= len(chunk)
    return "sha256:" + h.hexdigest()


def parse_env_lines(text: str) -> list[str]:
    """`NAME=VALUE` lines (Enroot's /etc/environment, written by `jq -r '.config.Env[]'`)."""
    env = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        name, sep, _value = line.partition("=")
        if sep and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            env.append(line)
    return env


ENROOT_ENV = EnvFile(ENROOT_ENVIRONMENT, parse_env_lines, MAX_ENV_FILE)


class SquashfsRangeSource(Source):
    """A squashfs filesystem at [offset, offset+size) of a file, as a one-layer image."""

    def __init__(
        self,
        path: str,
        *,
        location: str,
        offset: int = 0,
        size: int | None = None,
        config: dict[str, Any] | None = None,
        env_file: EnvFile | None = None,
        notes: tuple[str, ...] = (),
    ):
        self.path, self.location, self.offset, self.size = path, location, offset, size
        self.base_config = dict(config or {})
        self.env_file = env_file
        self.notes = list(notes)

    def open(self) -> OpenedImage:
        with open_input(self.path, "a squashfs file", where=self.location) as fh:
            total = os.fstat(fh.fileno()).st_size
        size = total - self.offset if self.size is None else self.size
        if self.offset + size > total:
            raise BadInputError(f"{self.location}: truncated or not a squashfs filesystem ({size} bytes)")
        # the whole region, padding included: for a .sqsh file what `sha256sum` prints
        digest = region_digest(self.path, self.offset, size, self.location)
        config = dict(self.base_config)
        layer = LayerRef(digest=digest, media_type=SQUASHFS_LAYER, size=size, index=0)
        return OpenedImage(
            reference=self.location,
            digest=digest,
            platform=platform_of_config(config),
            config=config,
            layers=[layer],
            opener=self._open_range,
            notes=list(self.notes),
            env_file=None if "config" in config else self.env_file,
        )

    def _open_range(self, layer: LayerRef) -> FileRange:
        return FileRange(open_input(self.path, "a squashfs file", where=self.location), self.offset, layer.size or 0)


def enroot_source(path: str) -> SquashfsRangeSource:
    return SquashfsRangeSource(path, location=f"enroot:{path}", env_file=ENROOT_ENV)
