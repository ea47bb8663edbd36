"""HPC-X under /opt/hpcx: its version from the environment NGC images set, or its files."""

from __future__ import annotations

import re

from ..model.image import Hpcx
from ..view.fileview import FileView
from ..view.wants import Want

WANTS = (Want(r"opt/hpcx/(?:hpcx-init\.sh|VERSION|\.hpcx_version|hpcx_version)", content=True, max_bytes=256 * 1024),)
_VERSION = re.compile(r"(?:HPCX_VERSION|hpcx[-_]v?)[=\s\"']*v?(\d+\.\d+(?:\.\d+)*)", re.I)


def extract(view: FileView, env: dict[str, str]) -> Hpcx | None:
    files = view.paths(r"opt/hpcx/.*")
    if env.get("HPCX_VERSION"):
        return Hpcx(version=env["HPCX_VERSION"].lstrip("v"), path="/opt/hpcx" if files else None)
    for path in files:
        data = view.read(path) or b""
        match = _VERSION.search(data.decode("utf-8", "replace"))
        if match:
            return Hpcx(version=match.group(1), path="/" + path, layer=view.entries[path].layer)
    if files:
        return Hpcx(version=None, path="/opt/hpcx", layer=view.entries[files[0]].layer)
    return None
