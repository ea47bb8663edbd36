"""Which kernel RDMA stack a node runs: inbox, MLNX_OFED or DOCA-OFED, and its release.

Evidence, strongest first:
- the loaded modules (modules.py): out-of-tree mlx5_core/ib_core mean an OFED kernel stack is what
  actually runs; in-tree ones mean inbox whatever else is installed;
- /usr/bin/ofed_info, read as text (it is a shell script with the release embedded; never run it).
  MLNX_OFED's installer (mlnxofedinstall) rewrites it to say `MLNX_OFED_LINUX-<ver>`; a stack
  installed from a package repository keeps `OFED-internal-<ver>`, and both DOCA-OFED and
  MLNX_OFED's own repositories do that (MLNX_OFED 5.x and 23.x print it too), so that prefix alone
  decides nothing: doca-* packages mean DOCA; a readable package database without them means
  MLNX_OFED; without packages, a release series of which no DOCA-OFED release is known means
  MLNX_OFED, and otherwise the flavour is reported as ambiguous (the kernel stack is the same);
- /etc/mlnx-release;
- package databases: doca-* packages mean DOCA; mlnx-ofed-kernel* / mlnx-ofa_kernel mean MLNX_OFED.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..extractors.packages import parse_dpkg_status, parse_rpmdb_sqlite
from ..model.image import Package
from ..model.node import STACK_DOCA, STACK_INBOX, STACK_MLNX_OFED, STACK_NONE, KernelModule
from ..versions.ecosystems import compare_numeric
from .hostroot import HostReadError, HostRoot

OFED_INFO = "/usr/bin/ofed_info"
MLNX_RELEASE = "/etc/mlnx-release"
DPKG_STATUS = "/var/lib/dpkg/status"
RPMDB_SQLITE = ("/usr/lib/sysimage/rpm/rpmdb.sqlite", "/var/lib/rpm/rpmdb.sqlite")
RPMDB_BDB = ("/var/lib/rpm/Packages", "/usr/lib/sysimage/rpm/Packages.db", "/var/lib/rpm/Packages.db")

# `if [ "X$1" == "X-s" ]; then echo MLNX_OFED_LINUX-23.10-1.1.9.0:; exit; fi`
_S_BRANCH = re.compile(
    r"""X?-s["']?\s*\]\s*;\s*then\s+echo\s+["']?(?P<id>(?:MLNX_OFED_LINUX|OFED-internal|OFED)-[0-9][^\s:;"']*)"""
)
# heredoc body's first line: `MLNX_OFED_LINUX-5.8-3.0.7.0 (OFED-5.8-3.0.7):` or `OFED-internal-24.01-0.3.3:`
_BODY = re.compile(r"^(?P<id>(?:MLNX_OFED_LINUX|OFED-internal)-[0-9][^\s:;(]*)", re.M)
_ID = re.compile(r"^(?P<kind>MLNX_OFED_LINUX|OFED-internal|OFED)-(?P<ver>[0-9][0-9A-Za-z.\-]*?)\.?$")
# mlnx-ofed-kernel-dkms "23.10.OFED.23.10.1.1.9.1-1"; "5.3-OFED.5.3.1.0.0.1"; kmod "25.07-OFED.25.07.0.9.7.1.1"
_PKG_OFED = re.compile(r"(?P<series>\d+\.\d+)[.-]OFED\.(?P=series)\.(?P<rest>\d+\.\d+\.\d+)")

KERNEL_PACKAGES = (
    "mlnx-ofed-kernel-dkms",
    "mlnx-ofed-kernel-utils",
    "mlnx-ofed-kernel-modules",
    "mlnx-ofa_kernel",
    "kmod-mlnx-ofa_kernel",
    "mlnx-ofa_kernel-modules",
)


@dataclass(frozen=True)
class OfedInstall:
    ofed_info_id: str | None = None  # e.g. "MLNX_OFED_LINUX-23.10-1.1.9.0"
    mlnx_release: str | None = None
    packages: tuple[Package, ...] = ()
    packages_known: bool = False
    notes: dict[str, str] = field(default_factory=dict)


def read_install(host: HostRoot, unknown: dict[str, str]) -> OfedInstall:
    notes: dict[str, str] = {}
    ofed_id = None
    try:
        script = host.read_text(OFED_INFO, 4 * 1024 * 1024)
        if script is not None:
            ofed_id = parse_ofed_info(script)
            if ofed_id is None:
                notes["ofed_info"] = f"{OFED_INFO} exists but no release string was recognised in it"
    except HostReadError as exc:
        notes["ofed_info"] = str(exc)
    mlnx_release = None
    try:
        mlnx_release = host.read_value(MLNX_RELEASE) or None
    except HostReadError as exc:
        notes["mlnx_release"] = str(exc)
    packages, known = _ofed_packages(host, notes)
    if not known:
        unknown["rdma.packages"] = notes.get("packages", "no readable package database under the probe root")
    return OfedInstall(ofed_id, mlnx_release, tuple(packages), known, notes)


def parse_ofed_info(script: str) -> str | None:
    """The release identifier ofed_info -s would print, read from the script text."""
    match = _S_BRANCH.search(script) or _BODY.search(script)
    return match.group("id").rstrip(".") if match else None


def ofed_version_of(identifier: str | None) -> str | None:
    if not identifier:
        return None
    match = _ID.match(identifier)
    return match.group("ver") if match else None


def _ofed_packages(host: HostRoot, notes: dict[str, str]) -> tuple[list[Package], bool]:
    return host_packages(host, _interesting, notes)


def host_packages(
    host: HostRoot, interesting: Callable[[str], bool], notes: dict[str, str]
) -> tuple[list[Package], bool]:
    """The host's installed packages whose name `interesting` accepts (dpkg status, else the sqlite rpm database),
    and whether a package database was read at all (False: the packages are unknown, not absent)."""
    wanted = []
    known = False
    try:
        data = host.read_bytes(DPKG_STATUS, 256 * 1024 * 1024)
        if data is not None:
            known = True
            wanted += [p for p in parse_dpkg_status(data, DPKG_STATUS.lstrip("/"), None) if interesting(p.name)]
    except HostReadError as exc:
        notes["packages"] = str(exc)
    for path in RPMDB_SQLITE:
        try:
            data = host.read_bytes(path, 1024 * 1024 * 1024)
        except HostReadError as exc:
            notes["packages"] = str(exc)
            continue
        if data is not None:
            known = True
            wanted += [p for p in parse_rpmdb_sqlite(data, path.lstrip("/"), None) if interesting(p.name)]
            break
    else:
        if not known and any(host.exists(p) for p in RPMDB_BDB):
            notes["packages"] = (
                "the rpm database is in BerkeleyDB format (RHEL 8 and older), which imgcheck does not read"
            )
    return wanted, known


def _interesting(name: str) -> bool:
    return name.startswith("doca-") or name in KERNEL_PACKAGES or name.startswith("mlnx-ofed-kernel")


@dataclass(frozen=True)
class StackDecision:
    stack: str | None
    ofed_version: str | None
    why: str
    installed_version: str | None = None  # what ofed_info / packages say is installed, running or not


def decide_stack(
    install: OfedInstall,
    modules: dict[str, KernelModule],
    modules_visible: bool,
    has_devices: bool | None,
    doca_series: frozenset[str] | None = None,
    mlnx_last_series: str | None = None,
) -> StackDecision:
    """has_devices None: /sys/class could not be read, so "no device" is not known.
    doca_series: the release series (YY.MM) of which a DOCA-OFED release is known (compat matrix)."""
    core = [modules[n] for n in ("mlx5_core", "ib_core", "mlx5_ib", "ib_uverbs") if n in modules]
    oot = [m.out_of_tree for m in core if m.out_of_tree is not None]
    version = _installed_version(install, modules)
    flavor, flavor_why = _installed_flavor(install, version, doca_series, mlnx_last_series)
    if modules_visible and not core and has_devices is None:
        return StackDecision(
            None,
            None,
            "no RDMA kernel module is loaded, but /sys/class could not be read, "
            "so whether the node has RDMA devices is unknown",
        )
    if modules_visible and not core and not has_devices:
        why = "no RDMA kernel module loaded and no RDMA device"
        if flavor:
            why += f" ({flavor_why}, but nothing of it is loaded)"
        return StackDecision(STACK_NONE, None, why, version if flavor else None)
    if oot and not any(oot):
        why = "the loaded RDMA modules are in-tree (taint has no O, files under /lib/modules/<rel>/kernel)"
        if flavor:
            why += f"; {flavor_why}, but its modules are not the ones loaded"
        return StackDecision(STACK_INBOX, None, why, version if flavor else None)
    if oot and all(oot):
        if flavor:
            return StackDecision(flavor, version, f"out-of-tree RDMA modules loaded; {flavor_why}", version)
        # out-of-tree without any userspace marker: the module version is all we have
        return StackDecision(
            STACK_MLNX_OFED,
            version,
            "out-of-tree RDMA modules loaded; no ofed_info/package says whether MLNX_OFED or DOCA, assuming MLNX_OFED",
        )
    if oot:  # a mix: some OFED modules, some in-tree — a broken install
        return StackDecision(
            flavor or STACK_MLNX_OFED,
            version,
            "a mix of in-tree and out-of-tree RDMA modules is loaded (broken or partial OFED install)",
        )
    if flavor:  # modules not visible or not decidable
        return StackDecision(flavor, version, f"{flavor_why}; the loaded modules could not be checked")
    return StackDecision(None, None, "the loaded RDMA modules could not be read and no OFED install was found")


def _installed_flavor(
    install: OfedInstall,
    version: str | None = None,
    doca_series: frozenset[str] | None = None,
    mlnx_last_series: str | None = None,
) -> tuple[str | None, str]:
    doca = sorted(p.name for p in install.packages if p.name.startswith("doca-"))
    if doca:
        return STACK_DOCA, f"DOCA packages installed ({', '.join(doca[:3])})"
    ident = install.ofed_info_id or ""
    series = _series(version)
    if series is not None and mlnx_last_series is not None and compare_numeric(series, mlnx_last_series) > 0:
        # the release series decides: MLNX_OFED's last standalone series is the matrix's mlnx_ofed_last_series
        said = f"ofed_info says {ident}" if ident else f"the installed release is {version}"
        return STACK_DOCA, (
            f"{said}; its {series} series is after MLNX_OFED's last ({mlnx_last_series}), so DOCA-OFED "
            "(whatever the package names)"
        )
    if ident.startswith("OFED-internal-"):
        return _internal_flavor(install, ident, version, doca_series)
    if ident.startswith("MLNX_OFED_LINUX-"):
        return STACK_MLNX_OFED, f"ofed_info says {ident}"
    if install.mlnx_release:
        return STACK_MLNX_OFED, f"/etc/mlnx-release says {install.mlnx_release}"
    kernel_pkgs = [p for p in install.packages if p.name in KERNEL_PACKAGES or p.name.startswith("mlnx-ofed-kernel")]
    if kernel_pkgs:
        return STACK_MLNX_OFED, f"package {kernel_pkgs[0].name} {kernel_pkgs[0].version} installed"
    if ident:
        return STACK_MLNX_OFED, f"ofed_info says {ident}"
    return None, ""


def _series(version: str | None) -> str | None:
    match = re.match(r"(\d+)\.(\d+)", version or "")
    return f"{int(match.group(1))}.{match.group(2)}" if match else None


def _internal_flavor(
    install: OfedInstall, ident: str, version: str | None, doca_series: frozenset[str] | None
) -> tuple[str, str]:
    """`OFED-internal-<ver>`: a package-repository install of either MLNX_OFED or DOCA-OFED."""
    said = f"ofed_info says {ident} (a package-repository install: MLNX_OFED and DOCA-OFED both print this)"
    if install.packages_known:
        return STACK_MLNX_OFED, f"{said}; no doca-* package is installed, so MLNX_OFED"
    series = _series(version)
    if series is not None and doca_series is not None and series not in doca_series:
        return STACK_MLNX_OFED, f"{said}; no DOCA-OFED release of the {series} series is known, so MLNX_OFED"
    return STACK_DOCA, (
        f"{said}; the package database is not readable and DOCA-OFED ships the "
        f"{series or 'same'} series, so MLNX_OFED or DOCA-OFED (the same kernel stack; "
        "reported as doca)"
    )


def _installed_version(install: OfedInstall, modules: dict[str, KernelModule]) -> str | None:
    version = ofed_version_of(install.ofed_info_id)
    if version:
        return version
    if install.mlnx_release:
        found = re.search(r"(\d+\.\d+-\d+(?:\.\d+)+)", install.mlnx_release)
        if found:
            return found.group(1)
    for pkg in install.packages:
        match = _PKG_OFED.search(pkg.version)
        if match:
            return f"{match.group('series')}-{match.group('rest')}"
    core = modules.get("mlx5_core")
    if core and core.version and core.out_of_tree:
        return core.version  # e.g. "5.8-3.0.7": the release without its last component
    return None
