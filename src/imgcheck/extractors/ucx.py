"""UCX: the package, a ucx.pc pkg-config file, libucp's location, HPC-X's bundled copy.

The version and the path it is reported with come from the same copy: a package's version goes with
the libucp.so.0 its dpkg file list names (or the loader's copy when the list is absent), a ucx.pc with
the tree it sits in.
"""

from __future__ import annotations

import posixpath
import re

from ..model.image import Package, Ucx
from ..view.fileview import FileView
from ..view.wants import Want
from .loader import Loader, in_python_package

UCX_PACKAGES = ("libucx0", "ucx", "ucx-libs")
WANTS = (
    Want(r"(?:[^/]+/)*ucx\.pc", content=True, max_bytes=64 * 1024),
    Want(r"(?:[^/]+/)*libucp\.so(?:\.[0-9]+)*"),
    Want(r"var/lib/dpkg/info/(?:libucx0|ucx)(?::[a-z0-9]+)?\.list", content=True, max_bytes=1024 * 1024),
)
_PC_VERSION = re.compile(r"^Version:\s*(\S+)", re.M)
_LIBS = r"(?:[^/]+/)*libucp\.so(?:\.[0-9]+)*"


def upstream_version(package_version: str) -> str:
    """The upstream UCX version of a package version: epoch and revision dropped, and Debian's
    `+really` convention honoured: `1.10.1~rc1+really.1.10.0-1` ships 1.10.0 under a version that sorts
    above the 1.10.1~rc1 it replaces (bullseye's ucx changelog.Debian: "Push 1.10.0 over unstable")."""
    version = package_version.split(":", 1)[-1]
    version = version.rsplit("-", 1)[0] if "-" in version else version
    if "+really" in version:
        version = version.split("+really", 1)[1].lstrip(".")
    return version.split("+")[0]


def _listed_lib(view: FileView) -> str | None:
    for path in view.paths(r"var/lib/dpkg/info/(?:libucx0|ucx)(?::[a-z0-9]+)?\.list"):
        for line in (view.read(path) or b"").decode("utf-8", "replace").splitlines():
            if re.search(r"/libucp\.so\.0$", line.strip()):
                ref = view.file(line.strip().lstrip("/"))
                if ref is not None:
                    return ref.real_path
    return None


def extract(view: FileView, packages: list[Package], loader: Loader | None = None) -> Ucx | None:
    all_libs = view.paths(_LIBS)
    copies, chosen = loader.copies("libucp.so.0", all_libs) if loader is not None and all_libs else ([], None)
    # copies inside Python packages (libucx, nixl wheels) are bundled stacks, loaded only by their importers
    libs = [p for p in all_libs if not in_python_package(p)]
    if chosen is not None and in_python_package(chosen):
        chosen = None
    system_lib = chosen or next((p for p in libs if not p.startswith("opt/hpcx/")), libs[0] if libs else None)
    pkg = next((p for p in packages if p.name in UCX_PACKAGES), None)
    if pkg is not None:
        lib = _listed_lib(view) or system_lib
        layer = view.entries[lib].layer if lib and lib in view.entries else pkg.layer
        version = upstream_version(pkg.version)
        return Ucx(version=version, path="/" + lib if lib else pkg.path, layer=layer, origin=pkg.db,
                   package_version=pkg.version if pkg.version != version else None, copies=tuple(copies))
    pcs = [p for p in view.paths(r"(?:[^/]+/)*ucx\.pc") if not in_python_package(p)]
    if chosen:
        # prefer the ucx.pc of the loaded library's tree: <prefix>/lib/libucp.so.0 and <prefix>/lib/pkgconfig/ucx.pc
        tree = posixpath.dirname(chosen)
        pcs.sort(key=lambda p: not p.startswith(tree + "/"))
    else:
        pcs.sort(key=lambda p: p.startswith("opt/hpcx/"))
    for path in pcs:
        ref = view.file(path)
        if ref is None or ref.data is None:
            continue
        match = _PC_VERSION.search(ref.data.decode("utf-8", "replace"))
        if match:
            return Ucx(version=match.group(1), path="/" + ref.real_path, layer=ref.layer,
                       origin="hpcx" if path.startswith("opt/hpcx/") else "ucx.pc", copies=tuple(copies))
    if system_lib:
        return Ucx(version=None, path="/" + system_lib, layer=view.entries[system_lib].layer, origin="library",
                   copies=tuple(copies))
    return None
