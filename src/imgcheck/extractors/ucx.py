"""UCX: the package, a ucx.pc pkg-config file, libucp's location, HPC-X's bundled copy.

The version and the path it is reported with come from the same copy: a package's version goes with
the libucp.so.0 its dpkg file list names (or the loader's copy when the list is absent), a ucx.pc with
the tree it sits in.
"""

from __future__ import annotations

import posixpath
import re

from ..elf.reader import NotElf, glibc_version_needed, read_elf
from ..model.image import Package, Ucx, UcxModule
from ..view.fileview import FileView
from ..view.wants import Want
from .loader import Loader, in_python_package

UCX_PACKAGES = ("libucx0", "ucx", "ucx-libs")
WANTS = (
    Want(r"(?:[^/]+/)*ucx\.pc", content=True, max_bytes=64 * 1024),
    Want(r"(?:[^/]+/)*libucp\.so(?:\.[0-9]+)*"),
    Want(r"var/lib/dpkg/info/(?:libucx0|ucx)(?::[a-z0-9]+)?\.list", content=True, max_bytes=1024 * 1024),
    # InfiniBand transport modules: their ELF says which libibverbs/libmlx5 symbol versions they need
    Want(r"(?:[^/]+/)*ucx/libuct_(?:ib|rdmacm)[a-z0-9_]*\.so(?:\.[0-9]+)*", content=True, max_bytes=32 * 1024 * 1024),
)
_PC_VERSION = re.compile(r"^Version:\s*(\S+)", re.M)
# A log string naming an experimental verb, e.g. "ibv_exp_query_device(%s) returned %d: %m" (UCX 1.7-1.13
# src/uct/ib/base/ib_verbs.h) or "ibv_exp_reg_mr(address=%p, ...) failed: %m": UCX compiles them only where configure
# found MLNX_OFED's verbs_exp.h (src/uct/ib/configure.m4 AC_CHECK_DECLS([ibv_exp_query_device, ...]))
_EXP_VERB = re.compile(rb"(ibv_exp_[a-z_]{3,40})\(")
MAX_EXP_VERBS = 32
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


def _modules(view: FileView, libdir: str | None, env: dict[str, str]) -> tuple[str | None, tuple[UcxModule, ...]]:
    """UCX loads transport modules from <dir of libucs>/ucx (UCX_MODULE_SUBDIR), or UCX_MODULE_DIR
    (openucx/ucx@v1.22.0-rc3:src/ucs/sys/module.c); a module that fails to dlopen is dropped at debug level."""
    if env.get("UCX_MODULE_DIR", "").startswith("/"):
        directory = env["UCX_MODULE_DIR"].rstrip("/").lstrip("/")
    elif libdir is not None:
        directory = posixpath.join(libdir, "ucx")
    else:
        return None, ()
    found: dict[str, UcxModule] = {}
    for path in view.paths(re.escape(directory) + r"/libuct_(?:ib|rdmacm)[a-z0-9_]*\.so(?:\.[0-9]+)*"):
        ref = view.file(path)
        if ref is None or ref.data is None or ref.real_path in found:
            continue
        try:
            info = read_elf(ref.data)
        except NotElf:
            continue
        name = posixpath.basename(ref.real_path).split(".so")[0][3:]
        found[ref.real_path] = UcxModule(
            name=name,
            path="/" + ref.real_path,
            layer=ref.layer,
            needs_ibverbs=tuple(sorted(info.needed_versions.get("libibverbs.so.1", ()))),
            needs_mlx5=tuple(sorted(info.needed_versions.get("libmlx5.so.1", ()))),
            needs_glibc=glibc_version_needed(info),
            exp_verbs=exp_verbs(ref.data),
        )
    return "/" + directory, tuple(sorted(found.values(), key=lambda m: m.path))


def exp_verbs(data: bytes) -> tuple[str, ...]:
    """The experimental verbs a UCX IB module's strings name (bounded: the module is image data)."""
    found: set[str] = set()
    for match in _EXP_VERB.finditer(data):
        found.add(match.group(1).decode("ascii"))
        if len(found) >= MAX_EXP_VERBS:
            break
    return tuple(sorted(found))


def _libdir(view: FileView, lib: str | None) -> str | None:
    if lib is None:
        return None
    ref = view.file(lib)
    return posixpath.dirname(ref.real_path if ref is not None else lib)


def extract(
    view: FileView, packages: list[Package], loader: Loader | None = None, env: dict[str, str] | None = None
) -> Ucx | None:
    ucx = _extract(view, packages, loader)
    if ucx is None or ucx.path is None:
        return ucx
    path = ucx.path.lstrip("/")
    # the tree of the copy the version came from: a ucx.pc's <prefix>/lib, else the library's directory
    libdir = posixpath.dirname(posixpath.dirname(path)) if path.endswith("/pkgconfig/ucx.pc") else _libdir(view, path)
    module_dir, modules = _modules(view, libdir, env or {})
    return Ucx(**{**ucx.__dict__, "module_dir": module_dir, "modules": modules})


def _pc_version(view: FileView, path: str) -> tuple[str | None, str | None, str | None]:
    ref = view.file(path)
    if ref is None or ref.data is None:
        return None, None, None
    match = _PC_VERSION.search(ref.data.decode("utf-8", "replace"))
    return (match.group(1), "/" + ref.real_path, ref.layer) if match else (None, None, None)


def _extract(view: FileView, packages: list[Package], loader: Loader | None = None) -> Ucx | None:
    all_libs = view.paths(_LIBS)
    copies, chosen = loader.copies("libucp.so.0", all_libs) if loader is not None and all_libs else ([], None)
    # copies inside Python packages (libucx, nixl wheels) are bundled stacks, loaded only by their importers
    libs = [p for p in all_libs if not in_python_package(p)]
    if chosen is not None and in_python_package(chosen):
        chosen = None
    system_lib = chosen or next((p for p in libs if not p.startswith("opt/hpcx/")), libs[0] if libs else None)
    pkg = next((p for p in packages if p.name in UCX_PACKAGES), None)
    listed = _listed_lib(view) if pkg is not None else None

    def origin_of(p: str) -> str:
        return "hpcx" if p.startswith("opt/hpcx/") else "ucx.pc"

    if pkg is not None and (chosen is None or listed is None or chosen == listed):
        lib = listed or system_lib
        layer = view.entries[lib].layer if lib and lib in view.entries else pkg.layer
        version: str | None = upstream_version(pkg.version)
        return Ucx(
            version=version,
            path="/" + lib if lib else pkg.path,
            layer=layer,
            origin=pkg.db,
            package_version=pkg.version if pkg.version != version else None,
            copies=tuple(copies),
        )
    if chosen is not None:
        # the loader picks a copy other than the package's (LD_LIBRARY_PATH, /usr/local, HPC-X): its version is
        # its own tree's <libdir>/pkgconfig/ucx.pc, never the package's
        version, pc, layer = _pc_version(view, posixpath.join(posixpath.dirname(chosen), "pkgconfig/ucx.pc"))
        if version is not None:
            return Ucx(version=version, path=pc, layer=layer, origin=origin_of(chosen), copies=tuple(copies))
        return Ucx(
            version=None, path="/" + chosen, layer=view.entries[chosen].layer, origin="library", copies=tuple(copies)
        )
    pcs = sorted(
        (p for p in view.paths(r"(?:[^/]+/)*ucx\.pc") if not in_python_package(p)),
        key=lambda p: p.startswith("opt/hpcx/"),
    )
    for path in pcs:
        version, pc, layer = _pc_version(view, path)
        if version is not None:
            return Ucx(version=version, path=pc, layer=layer, origin=origin_of(path), copies=tuple(copies))
    if system_lib:
        return Ucx(
            version=None,
            path="/" + system_lib,
            layer=view.entries[system_lib].layer,
            origin="library",
            copies=tuple(copies),
        )
    return None
