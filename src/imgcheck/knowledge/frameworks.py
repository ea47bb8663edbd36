"""Which distributed frameworks an image carries, and how each one's Gloo picks the address it advertises.

Read from the distributed_frameworks rows (compat_matrix/catalogs/distributed_frameworks.json): each names the
Python distributions and OS packages that identify the framework and how its Gloo device is bound. Rules that
reason on "the job uses Gloo" decide it here instead of looking for torch alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..matrix import Matrix
from ..model.image import ImageFacts, Package
from .package_names import first_package

TABLE = "distributed_frameworks"
HOSTNAME_DEFAULT = "hostname-default"  # GLOO_SOCKET_IFNAME, else the host name's address
VIA_TORCH = "via-torch"  # its groups are torch.distributed's
NO_GLOO = "none"


@dataclass(frozen=True)
class FrameworkFound:
    """One framework of the table, and the package of the image that shows it."""

    framework: str
    display: str
    gloo: str | None  # a value of the row's 'gloo' field; None: not read
    package: Package
    note: str | None


def frameworks_in(matrix: Matrix, image: ImageFacts) -> list[FrameworkFound]:
    """Every framework of the table among the image's packages, in table order, each once."""
    found: list[FrameworkFound] = []
    for row in matrix.rows(TABLE):
        package = first_package(row, image)
        if package is not None:
            found.append(FrameworkFound(row["framework"], row["display"], row["gloo"], package, row.get("note")))
    return found


@dataclass(frozen=True)
class GlooUse:
    """Whether a framework of the image binds Gloo to the host name's address when no interface is named."""

    by_hostname: tuple[FrameworkFound, ...]  # frameworks that do (torch's own, or through torch)
    undecided: tuple[FrameworkFound, ...]  # frameworks whose Gloo binding was not read or depends on the launcher
    without: tuple[FrameworkFound, ...]  # frameworks known to have no Gloo (torch-based ones count under torch)


def gloo_by_hostname(matrix: Matrix, image: ImageFacts) -> GlooUse:
    found = frameworks_in(matrix, image)
    names = {f.framework for f in found}
    by_hostname: list[FrameworkFound] = []
    undecided: list[FrameworkFound] = []
    without: list[FrameworkFound] = []
    for f in found:
        if f.gloo == HOSTNAME_DEFAULT:
            by_hostname.append(f)
        elif f.gloo == VIA_TORCH:
            # torch is its dependency: with torch seen, torch's row speaks for it; when the torch package itself
            # was not seen, the framework still goes through torch.distributed at run time
            if "torch" not in names:
                by_hostname.append(f)
        elif f.gloo == NO_GLOO:
            without.append(f)
        else:
            undecided.append(f)
    return GlooUse(tuple(by_hostname), tuple(undecided), tuple(without))


def names(found: tuple[FrameworkFound, ...] | list[FrameworkFound]) -> str:
    return ", ".join(f"{f.display} ({f.package.name} {f.package.version})" for f in found)
