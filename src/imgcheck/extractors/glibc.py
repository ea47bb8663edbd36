"""glibc: the release the image's C library is, and the GLIBC_x.y versions its libc.so.6 defines.

The release comes from the package database when it lists glibc (Debian/Ubuntu libc6, RPM glibc), else from
an old-style file name (libc-2.31.so, before glibc 2.34 installed libc.so.6 as a link to it), else, as a lower
bound, from the newest GLIBC_x.y the loader's libc.so.6 defines. The dynamic loader refuses a library needing a
GLIBC_x.y its libc does not define (glibc elf/dl-version.c: "version `GLIBC_2.38' not found").
"""

from __future__ import annotations

import posixpath
import re

from ..elf.reader import NotElf, glibc_defined, read_elf
from ..model.image import Glibc, Package
from ..view.fileview import FileView
from ..view.wants import Want
from .loader import Loader

_LIBDIR = r"(?:usr/)?lib(?:64|32)?(?:/[a-z0-9_]+-linux-gnu[a-z0-9_]*)?/"
_LIBC = _LIBDIR + r"libc(?:\.so\.6|-\d+\.\d+(?:\.\d+)?\.so)"
WANTS = (Want(_LIBC, content=True, max_bytes=8 * 1024 * 1024),)
_PACKAGES = {"libc6": "dpkg", "glibc": "rpm"}
_RELEASE = re.compile(r"(\d+\.\d+)")
_FILE = re.compile(r"libc-(\d+\.\d+)(?:\.\d+)?\.so$")


def _package_release(packages: list[Package]) -> Package | None:
    return next((p for p in packages if _PACKAGES.get(p.name) == p.db and _RELEASE.match(_upstream(p.version))), None)


def _upstream(version: str) -> str:
    return version.split(":", 1)[-1].split("-", 1)[0]


def extract(view: FileView, packages: list[Package], loader: Loader) -> tuple[Glibc | None, dict[str, str]]:
    """The image's glibc and, when it could not be read, {fact: why} for ImageFacts.unknown."""
    real, _how = loader.find("libc.so.6")
    ref = view.file(real) if real else None
    defines: tuple[str, ...] = ()
    if ref is not None and ref.data is not None:
        try:
            defines = glibc_defined(read_elf(ref.data))
        except NotElf:
            pass
    library = "/" + ref.real_path if ref is not None else None
    pkg = _package_release(packages)
    if pkg is not None:
        match = _RELEASE.match(_upstream(pkg.version))
        assert match is not None  # _package_release checked it
        version, origin, path, layer = match.group(1), f"{pkg.db} {pkg.name}", pkg.path, pkg.layer
    elif ref is not None and (fmatch := _FILE.search(posixpath.basename(ref.real_path))):
        version, origin, path, layer = fmatch.group(1), "file name", library, ref.layer
    elif defines:
        version, origin, path, layer = defines[-1], "symbol versions", library, ref.layer if ref else None
    elif ref is not None:
        reason = "its libc.so.6 " + ("was too large to keep" if ref.data is None else "defines no GLIBC_x.y version")
        return None, {"glibc": f"{library}: {reason}, and no libc6/glibc package names its release"}
    else:
        if view.paths(_LIBC):
            return None, {"glibc": "a libc.so.6 exists but is not on the loader's search path; no libc6/glibc package"}
        return None, {}  # no glibc at all: musl, a static or a scratch image
    return Glibc(version=version, path=path, layer=layer, origin=origin, library=library, defines=defines), {}
