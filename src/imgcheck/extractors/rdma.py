"""libibverbs, its providers, and the flavour (inbox rdma-core, MLNX_OFED or DOCA) of the userspace."""

from __future__ import annotations

import posixpath
import re

from ..elf.reader import NotElf, glibc_version_needed, read_elf
from ..model.image import (
    FLAVOR_DOCA,
    FLAVOR_INBOX,
    FLAVOR_MLNX_OFED,
    FLAVOR_NONE,
    Libibverbs,
    Package,
    Provider,
    RdmaFacts,
)
from ..versions.mlnx import is_mlnx, parse_mlnx
from ..view.fileview import FileView, SymlinkLoop
from ..view.wants import Want
from .loader import Loader, in_python_package

_LIBDIR = r"(?:[^/]+/)*"
SHARED_PROVIDERS = r"lib(?:efa|hns|ionic|mana|mlx4|mlx5)"
WANTS = (
    Want(_LIBDIR + r"libibverbs\.so\.1(?:\.[0-9]+)*", content=True, max_bytes=16 * 1024 * 1024),
    Want(_LIBDIR + r"lib[^/]+-rdmav[0-9]+\.so", content=True, max_bytes=16 * 1024 * 1024),
    # providers built as shared libraries: lib<name>-rdmavN.so links to lib<name>.so.1.x, whose ELF is read
    # (rdma-core providers/*/CMakeLists.txt rdma_shared_provider: efa, hns, ionic, mana, mlx4, mlx5)
    Want(_LIBDIR + SHARED_PROVIDERS + r"\.so\.1(?:\.[0-9]+)*", content=True, max_bytes=16 * 1024 * 1024),
    Want(r"etc/libibverbs\.d/[^/]+\.driver", content=True, max_bytes=64 * 1024),
    Want(r"usr/bin/ofed_info", content=True, max_bytes=4 * 1024 * 1024),
    Want(r"etc/mlnx-release", content=True, max_bytes=64 * 1024),
    Want(r"opt/mellanox/doca/[^/]+"),
)

_PROVIDER_DIR_STRING = re.compile(rb"\x00(/[^\x00]{1,512})/lib%s-rdmav[0-9]+\.so\x00")
_CONFIG_DIR_STRING = re.compile(rb"\x00(/[^\x00]{0,512}libibverbs\.d)\x00")

# Packages that carry the RDMA userspace (Debian/Ubuntu, RHEL-family and MLNX/DOCA names).
RDMA_PACKAGE = re.compile(
    r"^(libibverbs1?|libibverbs-utils|ibverbs-providers|rdma-core|librdmacm1?|libibumad3?|libmlx5-1|libmlx4-1"
    r"|mlnx-ofed-.*|mlnx-tools|mlnx-iproute2|ofed-scripts|doca-.*|ucx.*|libucx0|hcoll|sharp|knem|xpmem"
    r"|libnccl2|libnccl-dev)$"
)
_LIB_FILE = re.compile(r"libibverbs\.so\.1\.(\d+)\.(\d+(?:\.\d+)*)$")
_PROVIDER_FILE = re.compile(r"lib(?P<name>.+)-rdmav(?P<pabi>\d+)\.so$")
_PRIVATE = re.compile(r"IBVERBS_PRIVATE_(\d{1,9})$")  # bounded: symbol versions are image data
_IBVERBS_SYMVER = re.compile(r"IBVERBS_1\.(\d{1,9})$")
# Bounded repeats: an unbounded `[-_A-Za-z]*` before a literal backtracks quadratically on a
# crafted file ("DOCADOCA..."); real names are short (DOCA-OFED, DOCA_HOST, MLNX_OFED_LINUX-24.10-1.1.4.0).
_OFED_INFO = re.compile(r"(MLNX_OFED_LINUX|OFED-internal|DOCA[-_A-Za-z]{0,32})-(\d{1,6}\.\d{1,6}-[0-9.]{1,32})")

# libibverbs' own package name per packaging family; its version decides the flavour.
LIBIBVERBS_PACKAGES = ("libibverbs1", "libibverbs", "rdma-core")


def _ibverbs_version(real: str) -> str | None:
    match = _LIB_FILE.search(posixpath.basename(real))
    return posixpath.basename(real)[len("libibverbs.so.") :] if match else None


def compiled_dirs(data: bytes | None) -> tuple[str | None, str | None]:
    """(provider dir, config dir) compiled into a libibverbs: the strings VERBS_PROVIDER_DIR "/lib%s" suffix
    and IBV_CONFIG_DIR (rdma-core libibverbs/dynamic_driver.c load_driver/read_config)."""
    if not data:
        return None, None
    pdir = _PROVIDER_DIR_STRING.search(data)
    cdir = _CONFIG_DIR_STRING.search(data)
    return (
        pdir.group(1).decode("utf-8", "replace") if pdir else None,
        cdir.group(1).decode("utf-8", "replace") if cdir else None,
    )


def _libibverbs(view: FileView, loader: Loader) -> Libibverbs | None:
    candidates = view.paths(_LIBDIR + r"libibverbs\.so\.1(?:\.[0-9]+)*")
    if not candidates:
        return None
    copies, chosen = loader.copies("libibverbs.so.1", candidates, version_of=_ibverbs_version)
    if not copies:
        return None
    if chosen is None:
        # nothing on the search path: a process needs LD_LIBRARY_PATH set at run time; read the copy outside
        # package caches, the one such a setting most likely names. Copies inside Python packages are
        # bundled stacks (bundled.py), loaded only by their importers: they are not the image's libibverbs.
        system = [c.path for c in copies if not in_python_package(c.path)]
        if not system:
            return None
        chosen = next((p for p in system if "/pkgs/" not in p), system[0]).lstrip("/")
    ref = view.file(chosen)
    if ref is None:
        return None
    version = _ibverbs_version(ref.real_path)
    match = _LIB_FILE.search(posixpath.basename(ref.real_path))
    rdma_core = match.group(2) if match else None
    symvers: tuple[str, ...] = ()
    soname = None
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    glibc: str | None = None
    if ref.data is not None:
        try:
            info = read_elf(ref.data)
            symvers, soname, rpath, runpath = info.defined_versions, info.soname, info.rpath, info.runpath
            glibc = glibc_version_needed(info)
        except NotElf:
            pass
    provider_dir, config_dir = compiled_dirs(ref.data)
    private = next((int(m.group(1)) for v in symvers if (m := _PRIVATE.match(v))), None)
    minors = {int(m.group(1)) for v in symvers if (m := _IBVERBS_SYMVER.match(v))}
    return Libibverbs(
        version=version,
        rdma_core=rdma_core,
        symbol_versions=symvers,
        private_abi=private,
        has_reg_mr_iova2=8 in minors,
        has_reg_dmabuf_mr=12 in minors,
        soname=soname,
        path="/" + ref.real_path,
        layer=ref.layer,
        copies=tuple(copies),
        provider_dir=provider_dir,
        config_dir=config_dir,
        rpath=rpath,
        runpath=runpath,
        needs_glibc=glibc,
    )


def _driver_names(view: FileView, config_dir: str) -> dict[str, str]:
    """Driver name (or absolute path prefix) -> the driver file naming it, from config_dir."""
    names: dict[str, str] = {}
    for path in view.paths(re.escape(config_dir.strip("/")) + r"/[^/]+"):
        data = view.read(path)
        for line in (data or b"").decode("utf-8", "replace").splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] == "driver":
                names.setdefault(words[1], "/" + path)
    return names


def _read_provider(view: FileView, path: str, name: str, pabi: int, driver_file: str | None) -> Provider:
    ref = view.file(path)
    needed_private = None
    symvers: tuple[str, ...] = ()
    version = library = glibc = None
    if ref is not None:
        library = "/" + ref.real_path
        vmatch = re.search(r"\.so\.(\d+(?:\.\d+)+)$", posixpath.basename(ref.real_path))
        version = vmatch.group(1) if vmatch else None
    if ref is not None and ref.data is not None:
        try:
            info = read_elf(ref.data)
            needs = info.needed_versions.get("libibverbs.so.1", ())
            needed_private = next((int(m.group(1)) for v in needs if (m := _PRIVATE.match(v))), None)
            prefix = name.upper() + "_"
            symvers = tuple(v for v in info.defined_versions if v.startswith(prefix))
            glibc = glibc_version_needed(info)
        except NotElf:
            pass
    return Provider(
        name=name,
        pabi=pabi,
        path="/" + path,
        layer=ref.layer if ref else view.entries[path].layer,
        driver_file=driver_file,
        private_abi_needed=needed_private,
        version=version,
        symbol_versions=symvers,
        library=library,
        needs_glibc=glibc,
    )


def _resolved_dir(view: FileView, path: str) -> str | None:
    try:
        return view.resolve(path.lstrip("/"))
    except SymlinkLoop:
        return None  # a looping link (hostile image) names no directory


def _real(view: FileView, path: str) -> str | None:
    ref = view.file(path.lstrip("/"))
    return ref.real_path if ref is not None else None


def _load_target(
    view: FileView, loader: Loader, driver: str, name: str, pabi: int, pdir: str | None, lib: Libibverbs
) -> str | None:
    """The file libibverbs' load_driver opens for a driver name: an absolute name plus the suffix, else
    its provider dir's file, else the bare name by the loader's search path (libibverbs' own
    RPATH/RUNPATH included: dlopen searches those of the calling object)."""
    suffix = f"-rdmav{pabi}.so"
    if driver.startswith("/"):
        return _real(view, driver + suffix)
    if pdir and (hit := _real(view, posixpath.join(pdir, f"lib{name}{suffix}"))):
        return hit
    return loader.find(
        f"lib{name}{suffix}", rpath=lib.rpath, runpath=lib.runpath, origin=posixpath.dirname(lib.path or "")
    )[0]


def _providers(
    view: FileView, lib: Libibverbs | None, loader: Loader, env: dict[str, str]
) -> tuple[list[Provider], list[Provider]]:
    """(providers the loaded libibverbs looks at, other provider files), each marked loaded or not.

    libibverbs reads the driver names from its config dir (plus RDMAV_DRIVERS, else IBV_DRIVERS, from
    the environment) and opens lib<name>-rdmav<its PABI>.so: an absolute name as is, else in its
    provider dir, else by the loader's search path (rdma-core libibverbs/dynamic_driver.c load_drivers).
    """
    config_dir = lib.config_dir if lib and lib.config_dir else "/etc/libibverbs.d"
    names = _driver_names(view, config_dir)
    env_drivers = env.get("RDMAV_DRIVERS") or env.get("IBV_DRIVERS")
    env_name = "RDMAV_DRIVERS" if env.get("RDMAV_DRIVERS") else "IBV_DRIVERS"
    for word in re.split(r"[:;]", env_drivers or ""):
        if word:
            names.setdefault(word, f"env {env_name}")
    by_short: dict[str, tuple[str, str]] = {}
    for named, named_by in names.items():
        base = posixpath.basename(named)
        short = base[3:] if named.startswith("/") and base.startswith("lib") else base
        by_short.setdefault(short, (named, named_by))
    pabi = lib.private_abi if lib else None
    pdir = None
    if lib is not None:
        pdir = lib.provider_dir or (posixpath.join(posixpath.dirname(lib.path), "libibverbs") if lib.path else None)
    try:
        pdir_real = view.resolve(pdir.lstrip("/")) if pdir else None
    except SymlinkLoop:
        pdir_real = None
    search_dirs = set()
    own = []
    if lib is not None:  # libibverbs' RPATH/RUNPATH, $ORIGIN being its own directory
        own = [
            d.replace("${ORIGIN}", "$ORIGIN").replace("$ORIGIN", posixpath.dirname(lib.path or ""))
            for d in lib.rpath + lib.runpath
        ]
    for d in (
        own + loader.ld_library_path + loader.default_dirs + [posixpath.dirname(e.path) for e in (loader.cache or [])]
    ):
        try:
            search_dirs.add(view.resolve(d.lstrip("/")))
        except SymlinkLoop:
            pass
    mine, others = [], []
    for path in view.paths(_LIBDIR + r"lib[^/]+-rdmav[0-9]+\.so"):
        match = _PROVIDER_FILE.match(posixpath.basename(path))
        if not match:
            continue
        name, file_pabi = match.group("name"), int(match.group("pabi"))
        try:
            where = view.resolve(posixpath.dirname(path))
        except SymlinkLoop:
            continue
        driver, source = by_short.get(name, (None, None))
        prov = _read_provider(view, path, name, file_pabi, source if source and source.startswith("/") else None)
        if lib is None:
            mine.append(prov)
            continue
        absolute = (
            driver is not None and driver.startswith("/") and _resolved_dir(view, posixpath.dirname(driver)) == where
        )
        if where == pdir_real:
            place = f"provider dir {pdir}"
        elif absolute:
            place = f"driver file {source} names {driver}"
        elif where in search_dirs:
            place = "the loader's search path"
        else:
            others.append(
                Provider(**{**prov.__dict__, "loaded": False, "how": f"outside {pdir} and the loader's search path"})
            )
            continue
        if driver is None:
            how, loaded = f"in {place}, but no driver file in {config_dir} or RDMAV_DRIVERS names {name}", False
        elif pabi is not None and file_pabi != pabi:
            how, loaded = f"in {place}, but libibverbs asks for lib{name}-rdmav{pabi}.so", False
        elif _load_target(view, loader, driver, name, file_pabi, pdir, lib) != _real(view, path):
            how, loaded = f"in {place}, but another lib{name}-rdmav{file_pabi}.so is found first", False
        else:
            how, loaded = f"{place}, named by {source}", True
        mine.append(Provider(**{**prov.__dict__, "loaded": loaded, "how": how}))
    return mine, others


def _ofed_release(view: FileView) -> tuple[str | None, str | None, bool]:
    """(release, where it came from, says DOCA) from ofed_info or /etc/mlnx-release."""
    for path in ("usr/bin/ofed_info", "etc/mlnx-release"):
        data = view.read(path)
        if not data:
            continue
        match = _OFED_INFO.search(data.decode("utf-8", "replace"))
        if match:
            return match.group(2), "/" + path, match.group(1).upper().startswith("DOCA")
    return None, None, False


def extract(
    view: FileView, packages: list[Package], env: dict[str, str] | None = None, loader: Loader | None = None
) -> RdmaFacts:
    loader = loader or Loader(view, env or {})
    lib = _libibverbs(view, loader)
    providers, other_providers = _providers(view, lib, loader, env or {})
    rdma_packages = tuple(p for p in packages if RDMA_PACKAGE.match(p.name))
    verbs_pkg = next((p for p in rdma_packages if p.name in LIBIBVERBS_PACKAGES), None)
    release, release_source, says_doca = _ofed_release(view)
    has_doca = (
        says_doca
        or any(p.name.startswith("doca-") for p in rdma_packages)
        or bool(view.paths(r"opt/mellanox/doca/[^/]+"))
    )
    mlnx_pkg = verbs_pkg is not None and is_mlnx(verbs_pkg.version)
    if lib is None and not providers:
        flavor = FLAVOR_NONE
    elif has_doca and (mlnx_pkg or release):
        flavor = FLAVOR_DOCA
    elif mlnx_pkg or release or any(p.name.startswith("mlnx-ofed-") for p in rdma_packages):
        flavor = FLAVOR_MLNX_OFED
    else:
        flavor = FLAVOR_INBOX
    if release is None and mlnx_pkg and verbs_pkg is not None:
        parsed = parse_mlnx(verbs_pkg.version)
        if parsed and parsed.series:
            release, release_source = parsed.series, f"package {verbs_pkg.name} {verbs_pkg.version}"
    if lib is not None and lib.rdma_core is None and verbs_pkg is not None:
        # MLNX forks: the file name may not carry the base; fall back to the package version
        parsed = parse_mlnx(verbs_pkg.version)
        base = str(parsed.mlnx_number) + ".0" if parsed else verbs_pkg.version.split("-")[0]
        lib = Libibverbs(**{**lib.__dict__, "rdma_core": base})
    return RdmaFacts(
        libibverbs=lib,
        providers=tuple(providers),
        flavor=flavor,
        ofed_version=release,
        ofed_source=release_source,
        packages=rdma_packages,
        other_providers=tuple(other_providers),
    )
