"""Which of an image's packages install the NVIDIA driver's user space (catalog driver_userspace_packages), and the
driver release a package version names. Shared by the engine (IMAGE-DRIVER-USERSPACE) and triage (the
image.driver_userspace predicate)."""

from __future__ import annotations

import re

from ..matrix import Matrix
from ..model.image import ImageFacts, Package
from ..versions.ecosystems import numeric_tuple

_EPOCH = re.compile(r"^\d+:")
# a driver release as its packages carry it (upstream part of the version): 455.32.00, 535.104.05, 550.54.15
_DRIVER_RELEASE = re.compile(r"^(\d+\.\d+(?:\.\d+)?)(?:[-~+].*)?$")


def driver_release(package_version: str) -> str | None:
    """The driver release a package version names ('455.32.00-0ubuntu1' -> '455.32.00'), None when it names none."""
    m = _DRIVER_RELEASE.match(_EPOCH.sub("", package_version.strip()))
    if m is None or len(numeric_tuple(m.group(1))) < 2:
        return None
    return m.group(1)


def driver_packages(matrix: Matrix, image: ImageFacts) -> list[tuple[Package, dict[str, object]]]:
    """The image's packages that install the NVIDIA driver's user space, with the catalog row naming each."""
    rows = matrix.rows("driver_userspace_packages")
    out = []
    for pkg in image.packages:
        if pkg.db in ("python", "apk"):
            continue  # a Python distribution (PyPI has an 'nvidia-smi') or Alpine, which the NVIDIA driver does not ship for
        row = next((r for r in rows if re.fullmatch(str(r["match"]), pkg.name)), None)
        if row is not None:
            out.append((pkg, row))
    return out
