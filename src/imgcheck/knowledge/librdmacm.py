"""librdmacm (rdma-core's RDMA connection manager library) in an image, and how its release treats a device it
cannot open: the librdmacm_releases rows (generated from librdmacm/cma.c of every rdma-core tag). Before the fix
(rdma-core PR #1060) one unopenable device fails the whole device init, so every RDMA-CM call (rdma_get_devices,
rdma_create_id, rdma_resolve_addr) fails with ENODEV in a container given only some of the node's uverbs nodes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..matrix import Matrix
from ..model.image import ImageFacts, Package
from ..versions import ranges

TABLE = "librdmacm_releases"
FAILS_ALL = "fails-all"
SKIPS = "skips-failing"
# the package that carries librdmacm.so.1: Debian/Ubuntu (t64: the 64-bit time_t rename), RHEL family, SUSE
PACKAGES = ("librdmacm1", "librdmacm1t64", "librdmacm")
_RELEASE = re.compile(r"^(?:\d+:)?(\d{1,4}(?:\.\d{1,4})?)(?:[-+~]|$)")  # 28.0-1ubuntu1, 1:33.2-1, 48.0-1.el9


@dataclass(frozen=True)
class Librdmacm:
    release: str | None  # the rdma-core release it is built from ("28.0"); None: not read
    how: str  # what in the image shows it


def _package(image: ImageFacts) -> Package | None:
    for p in (*image.rdma.packages, *image.packages):
        if p.name in PACKAGES:
            return p
    return None


def in_image(image: ImageFacts) -> tuple[Librdmacm | None, str | None]:
    """(librdmacm or None, why its presence is unknown). (None, None): the image's packages show none."""
    package = _package(image)
    if package is None:
        reason = image.unknown_reason("packages")
        return None, (f"whether the image has librdmacm is unknown ({reason})" if reason else None)
    m = _RELEASE.match(package.version or "")
    release = m.group(1) if m else None
    if release is None and image.rdma.libibverbs is not None:
        release = image.rdma.libibverbs.rdma_core  # one source package: librdmacm and libibverbs share the release
    if release is not None and "." not in release:
        release += ".0"
    return Librdmacm(release, f"package {package.name} {package.version}"), None


def fixed_release(matrix: Matrix) -> str | None:
    """The first rdma-core release whose librdmacm skips a device it cannot open (None: no row says so)."""
    rows = [r for r in matrix.rows(TABLE) if r["partial_devices"] == SKIPS]
    return rows[0]["release"] if rows else None


def partial_devices(matrix: Matrix, lib: Librdmacm) -> str | None:
    """FAILS_ALL or SKIPS for the image's librdmacm; None when its release is not known. The rows are in release
    order and the behaviour changed once (the generator reads every tag), so the first fixed release decides."""
    fixed = fixed_release(matrix)
    if fixed is None or lib.release is None:
        return None
    newer = ranges.at_least(lib.release, fixed)
    return None if newer is None else (SKIPS if newer else FAILS_ALL)
