"""libibverbs, its providers, and the flavour (inbox rdma-core, MLNX_OFED or DOCA) of the userspace."""

from __future__ import annotations

import posixpath
import re

from ..elf.reader import NotElf, read_elf
from ..model.image import (FLAVOR_DOCA, FLAVOR_INBOX, FLAVOR_MLNX_OFED, FLAVOR_NONE, Libibverbs, Package,
                           Provider, RdmaFacts)
from ..versions.mlnx import is_mlnx, parse_mlnx
from ..view.fileview import FileView
from ..view.wants import Want

_LIBDIR = r"(?:[^/]+/)*"
WANTS = (
    Want(_LIBDIR + r"libibverbs\.so\.1(?:\.[0-9]+)*", content=True, max_bytes=16 * 1024 * 1024),
    Want(_LIBDIR + r"libibverbs/lib[^/]+-rdmav[0-9]+\.so", content=True, max_bytes=16 * 1024 * 1024),
    Want(_LIBDIR + r"libmlx5\.so\.1(?:\.[0-9]+)*", content=True, max_bytes=16 * 1024 * 1024),
    Want(r"etc/libibverbs\.d/[^/]+\.driver", content=True, max_bytes=64 * 1024),
    Want(r"usr/bin/ofed_info", content=True, max_bytes=4 * 1024 * 1024),
    Want(r"etc/mlnx-release", content=True, max_bytes=64 * 1024),
    Want(r"opt/mellanox/doca/[^/]+"),
)

# Packages that carry the RDMA userspace (Debian/Ubuntu, RHEL-family and MLNX/DOCA names).
RDMA_PACKAGE = re.compile(
    r"^(libibverbs1?|libibverbs-utils|ibverbs-providers|rdma-core|librdmacm1?|libibumad3?|libmlx5-1|libmlx4-1"
    r"|mlnx-ofed-.*|mlnx-tools|mlnx-iproute2|ofed-scripts|doca-.*|ucx.*|libucx0|hcoll|sharp|knem|xpmem"
    r"|libnccl2|libnccl-dev)$"
)
_LIB_FILE = re.compile(r"libibverbs\.so\.1\.(\d+)\.(\d+(?:\.\d+)*)$")
_PROVIDER_FILE = re.compile(r"lib(?P<name>.+)-rdmav(?P<pabi>\d+)\.so$")
_PRIVATE = re.compile(r"IBVERBS_PRIVATE_(\d+)$")
_IBVERBS_SYMVER = re.compile(r"IBVERBS_1\.(\d+)$")
# Bounded repeats: an unbounded `[-_A-Za-z]*` before a literal backtracks quadratically on a
# crafted file ("DOCADOCA..."); real names are short (DOCA-OFED, DOCA_HOST, MLNX_OFED_LINUX-24.10-1.1.4.0).
_OFED_INFO = re.compile(r"(MLNX_OFED_LINUX|OFED-internal|DOCA[-_A-Za-z]{0,32})-(\d{1,6}\.\d{1,6}-[0-9.]{1,32})")

# libibverbs' own package name per packaging family; its version decides the flavour.
LIBIBVERBS_PACKAGES = ("libibverbs1", "libibverbs", "rdma-core")


def _libibverbs(view: FileView) -> Libibverbs | None:
    candidates = view.paths(_LIBDIR + r"libibverbs\.so\.1(?:\.[0-9]+)*")
    if not candidates:
        return None
    # Prefer the soname link (what the dynamic loader opens), then the longest real file name.
    ordered = sorted(candidates, key=lambda p: (not p.endswith("libibverbs.so.1"), -len(p)))
    for path in ordered:
        ref = view.file(path)
        if ref is None:
            continue
        real_base = posixpath.basename(ref.real_path)
        match = _LIB_FILE.search(real_base)
        version = real_base[len("libibverbs.so."):] if match else None
        rdma_core = match.group(2) if match else None
        symvers: tuple[str, ...] = ()
        soname = None
        if ref.data is not None:
            try:
                info = read_elf(ref.data)
                symvers, soname = info.defined_versions, info.soname
            except NotElf:
                pass
        private = next((int(m.group(1)) for v in symvers if (m := _PRIVATE.match(v))), None)
        minors = {int(m.group(1)) for v in symvers if (m := _IBVERBS_SYMVER.match(v))}
        return Libibverbs(
            version=version, rdma_core=rdma_core, symbol_versions=symvers, private_abi=private,
            has_reg_mr_iova2=8 in minors, has_reg_dmabuf_mr=12 in minors, soname=soname,
            path="/" + ref.real_path, layer=ref.layer)
    return None


def _providers(view: FileView) -> list[Provider]:
    driver_files: dict[str, str] = {}
    for path in view.paths(r"etc/libibverbs\.d/[^/]+\.driver"):
        data = view.read(path)
        if data is None:
            continue
        for line in data.decode("utf-8", "replace").splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] == "driver":
                # "driver mlx5" or a full path prefix ".../libibverbs/libmlx5" (both in the wild)
                base = posixpath.basename(words[1])
                name = base[3:] if "/" in words[1] and base.startswith("lib") else base
                driver_files[name] = "/" + path
    providers = []
    for path in view.paths(_LIBDIR + r"libibverbs/lib[^/]+-rdmav[0-9]+\.so"):
        match = _PROVIDER_FILE.match(posixpath.basename(path))
        if not match:
            continue
        name = match.group("name")
        ref = view.file(path)
        needed_private = None
        symvers: tuple[str, ...] = ()
        version = None
        if ref is not None and ref.data is not None:
            try:
                info = read_elf(ref.data)
                needs = info.needed_versions.get("libibverbs.so.1", ())
                needed_private = next((int(m.group(1)) for v in needs if (m := _PRIVATE.match(v))), None)
                if name == "mlx5":
                    symvers = tuple(v for v in info.defined_versions if v.startswith("MLX5_"))
            except NotElf:
                pass
            real_base = posixpath.basename(ref.real_path)
            vmatch = re.search(r"\.so\.(\d+(?:\.\d+)+)$", real_base)
            version = vmatch.group(1) if vmatch else None
        providers.append(Provider(
            name=name, pabi=int(match.group("pabi")), path="/" + path,
            layer=ref.layer if ref else view.entries[path].layer,
            driver_file=driver_files.get(name), private_abi_needed=needed_private,
            version=version, symbol_versions=symvers))
    return providers


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


def extract(view: FileView, packages: list[Package]) -> RdmaFacts:
    lib = _libibverbs(view)
    providers = _providers(view)
    rdma_packages = tuple(p for p in packages if RDMA_PACKAGE.match(p.name))
    verbs_pkg = next((p for p in rdma_packages if p.name in LIBIBVERBS_PACKAGES), None)
    release, release_source, says_doca = _ofed_release(view)
    has_doca = says_doca or any(p.name.startswith("doca-") for p in rdma_packages) \
        or bool(view.paths(r"opt/mellanox/doca/[^/]+"))
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
    return RdmaFacts(libibverbs=lib, providers=tuple(providers), flavor=flavor, ofed_version=release,
                     ofed_source=release_source, packages=rdma_packages)
