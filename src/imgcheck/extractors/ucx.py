"""UCX: the package, a ucx.pc pkg-config file, libucp's location, HPC-X's bundled copy."""

from __future__ import annotations

import re

from ..model.image import Package, Ucx
from ..view.fileview import FileView
from ..view.wants import Want

WANTS = (
    Want(r"(?:[^/]+/)*ucx\.pc", content=True, max_bytes=64 * 1024),
    Want(r"(?:[^/]+/)*libucp\.so(?:\.[0-9]+)*"),
)
UCX_PACKAGES = ("libucx0", "ucx", "ucx-libs")
_PC_VERSION = re.compile(r"^Version:\s*(\S+)", re.M)


def extract(view: FileView, packages: list[Package]) -> Ucx | None:
    libs = view.paths(r"(?:[^/]+/)*libucp\.so(?:\.[0-9]+)*")
    system_lib = next((p for p in libs if not p.startswith("opt/hpcx/")), libs[0] if libs else None)
    lib_layer = view.entries[system_lib].layer if system_lib else None
    pkg = next((p for p in packages if p.name in UCX_PACKAGES), None)
    if pkg is not None:
        return Ucx(version=pkg.version.split("-")[0].split("+")[0], path="/" + system_lib if system_lib else pkg.path,
                   layer=lib_layer or pkg.layer, origin=pkg.db)
    for path in sorted(view.paths(r"(?:[^/]+/)*ucx\.pc"), key=lambda p: p.startswith("opt/hpcx/")):
        ref = view.file(path)
        if ref is None or ref.data is None:
            continue
        match = _PC_VERSION.search(ref.data.decode("utf-8", "replace"))
        if match:
            return Ucx(version=match.group(1), path="/" + ref.real_path, layer=ref.layer,
                       origin="hpcx" if path.startswith("opt/hpcx/") else "ucx.pc")
    if system_lib:
        return Ucx(version=None, path="/" + system_lib, layer=lib_layer, origin="library")
    return None
