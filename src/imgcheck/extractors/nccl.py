"""NCCL copies: system libnccl, the libnccl2 package, pip wheels (nvidia-nccl-cuXX), torch's pin."""

from __future__ import annotations

import posixpath
import re

from ..model.image import Nccl, Package
from ..view.fileview import FileView, SymlinkLoop
from ..view.wants import Want

_SITE = r"(?:[^/]+/)*(?:site|dist)-packages/"
WANTS = (
    Want(r"(?:[^/]+/)*libnccl\.so(?:\.[0-9]+)*"),
    Want(_SITE + r"nvidia_nccl_cu[0-9]+-[^/]+\.dist-info/METADATA", content=True, max_bytes=1024 * 1024),
    Want(_SITE + r"torch-[^/]+\.dist-info/METADATA", content=True, max_bytes=4 * 1024 * 1024),
)
_LIB_VERSION = re.compile(r"libnccl\.so\.(2\.\d+\.\d+)$")
_META_VERSION = re.compile(r"^Version:\s*(\S+)", re.M)
_TORCH_PIN = re.compile(r"^Requires-Dist:\s*nvidia-nccl-cu\d+\s*==\s*([0-9.]+)", re.M)


def extract(view: FileView, packages: list[Package]) -> list[Nccl]:
    found: list[Nccl] = []
    seen_real: set[str] = set()
    for path in view.paths(r"(?:[^/]+/)*libnccl\.so(?:\.[0-9]+)*"):
        try:
            ref_real = view.resolve(path)
        except SymlinkLoop:
            continue  # a looping link names no library
        if ref_real in seen_real or "site-packages/" in path or "dist-packages/" in path:
            continue
        match = _LIB_VERSION.search(posixpath.basename(ref_real))
        if not match:
            continue  # the soname link; its target carries the version
        seen_real.add(ref_real)
        entry = view.entries.get(ref_real) or view.entries[path]
        found.append(Nccl(version=match.group(1), path="/" + ref_real, layer=entry.layer, origin="library"))
    for pkg in packages:
        if pkg.name in ("libnccl2", "libnccl") and not found:
            found.append(Nccl(version=pkg.version.split("-")[0], path=pkg.path, layer=pkg.layer, origin=pkg.db))
    for path in view.paths(_SITE + r"nvidia_nccl_cu[0-9]+-[^/]+\.dist-info/METADATA"):
        ref = view.file(path)
        if ref is None or ref.data is None:
            continue
        match = _META_VERSION.search(ref.data.decode("utf-8", "replace"))
        if match:
            found.append(Nccl(version=match.group(1), path="/" + path, layer=ref.layer, origin="pip"))
    if not any(n.origin == "pip" for n in found):
        for path in view.paths(_SITE + r"torch-[^/]+\.dist-info/METADATA"):
            ref = view.file(path)
            data = ref.data.decode("utf-8", "replace") if ref and ref.data else ""
            match = _TORCH_PIN.search(data)
            if match:
                found.append(Nccl(version=match.group(1), path="/" + path, layer=ref.layer if ref else None,
                                  origin="torch-requirement"))
    return found
