"""GDRCopy's user-space library in the image: libgdrapi.so.<major>.<minor> by file name, or the package that ships it.

GDRCopy's Makefile installs libgdrapi.so.$(LIB_MAJOR_VER).$(LIB_MINOR_VER) (GDR_API_MAJOR/MINOR_VERSION of
include/gdrapi.h) with the soname libgdrapi.so.$(LIB_MAJOR_VER); its packages are libgdrapi (deb, 2.3 and later),
gdrcopy (deb before 2.3 and rpm). Only file names are read: the library's own version is in its name.
"""

from __future__ import annotations

import re

from ..model.image import Gdrcopy, Package
from ..view.fileview import FileView
from ..view.wants import ANY_DIRS, Want

WANTS = (Want(ANY_DIRS + r"libgdrapi\.so(?:\.[0-9]+)*"),)
_FILE = re.compile(r"(?:.*/)?libgdrapi\.so\.(\d+)(?:\.(\d+))?")
_PACKAGES = ("libgdrapi", "gdrcopy")


def extract(view: FileView, packages: list[Package]) -> Gdrcopy | None:
    files = view.paths(ANY_DIRS + r"libgdrapi\.so(?:\.[0-9]+)*")
    pkg = next((p for p in packages if p.name in _PACKAGES and p.db in ("dpkg", "rpm")), None)
    if not files and pkg is None:
        return None
    path: str | None
    versioned = [(m, f) for f in files if (m := _FILE.fullmatch(f)) and m.group(2) is not None]
    if versioned:
        match, path = versioned[0]
        version: str | None = f"{match.group(1)}.{match.group(2)}"
        major: int | None = int(match.group(1))
    else:
        path = files[0] if files else None
        sonames = [m for f in files if (m := _FILE.fullmatch(f))]
        major = int(sonames[0].group(1)) if sonames else None
        version = None
    if version is None and pkg is not None:
        parts = re.match(r"(?:\d+:)?(\d+)\.(\d+)", pkg.version)
        version = f"{parts.group(1)}.{parts.group(2)}" if parts else None
        major = major if major is not None or not parts else int(parts.group(1))
    return Gdrcopy(
        version=version,
        path="/" + path if path else pkg.path if pkg else None,
        layer=view.entries[path].layer if path else pkg.layer if pkg else None,
        soname_major=major,
        package_version=pkg.version if pkg else None,
        files=tuple("/" + f for f in files),
    )
