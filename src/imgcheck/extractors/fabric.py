"""libfabric (OFI) and NCCL's network plugins (aws-ofi-nccl for EFA, nccl-rdma-sharp-plugins, ...).

libfabric: the copy the loader picks for libfabric.so.1; its release version only from its package
(the file's `.so.1.20.0` suffix is libtool's interface number, not the release: Debian's 1.17.0 ships 1.20.0);
its provider dir (the FI_PROVIDER_PATH default string compiled in, e.g. /usr/lib/x86_64-linux-gnu/libfabric,
or the Env's FI_PROVIDER_PATH) and the providers linked in (EFA when it links libefa.so.1).
NCCL plugins: NCCL dlopens NCCL_NET_PLUGIN as given and then libnccl-net-<name>.so, or libnccl-net.so
by default (NVIDIA/nccl@v2.30.7-1:src/plugin/plugin_open.cc openPluginLib), through the loader's search path.
aws-ofi-nccl's release is the PACKAGE_STRING its init logs ("Initializing aws-ofi-nccl 1.9.1-aws",
aws/aws-ofi-nccl src/nccl_ofi_net.c; AC_INIT in configure.ac); its FABRIC_x.y version needs are in its ELF.
EFA installer: efa_installer.sh writes /opt/amazon/efa_installed_packages ('# EFA installer version: X', then
the package files it installed) and installs libfabric under /opt/amazon/efa (LIBFABRIC_INSTALL_PATH).
"""

from __future__ import annotations

import posixpath
import re

from ..elf.reader import ElfInfo, NotElf, glibc_version_needed, read_elf
from ..model.image import EfaInstaller, Libfabric, NcclNetPlugin, NeededLibrary, Package
from ..view.fileview import FileView, SymlinkLoop
from ..view.wants import ANY_DIRS, Want
from .loader import Loader, in_python_package

WANTS = (
    Want(ANY_DIRS + r"libfabric\.so\.1(?:\.[0-9]+)*", content=True, max_bytes=32 * 1024 * 1024),
    Want(ANY_DIRS + r"libfabric/lib[a-z0-9_]+-fi\.so"),
    Want(ANY_DIRS + r"libnccl-net(?:-[^/]+)?\.so(?:\.[0-9]+)*", content=True, max_bytes=64 * 1024 * 1024),
    Want(r"opt/amazon/efa_installed_packages", content=True, max_bytes=256 * 1024),
)
EFA_INSTALLED = "opt/amazon/efa_installed_packages"
EFA_PREFIX = "opt/amazon/efa/"
_INSTALLER_VERSION = re.compile(r"^#\s*EFA installer version:\s*(\S+)", re.M)
# libfabric1-aws_1.16.0~amzn3.0_amd64 (deb), libfabric-aws-1.19.0amzn4.0-1.amzn2.x86_64 (rpm)
_EFA_LIBFABRIC = re.compile(r"^libfabric1?-aws[_-]([0-9][0-9A-Za-z.~+]*)")
_PLUGIN_RELEASE = re.compile(rb"\b(aws-ofi-nccl) ([0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.~+-]*)")
FABRIC_PACKAGES = ("libfabric1", "libfabric", "libfabric-aws")
_PROVIDER_DIR = re.compile(rb"\(default: (/[^)\x00]{1,512}/libfabric)\)")
_BUILTIN = {
    "libefa.so.1": "efa",
    "libpsm2.so.2": "psm2",
    "libpsm_infinipath.so.1": "psm",
    "libibverbs.so.1": "verbs",
    "librdmacm.so.1": "verbs",
}


def extract_efa_installer(view: FileView) -> EfaInstaller | None:
    ref = view.file(EFA_INSTALLED)
    if ref is None or ref.data is None:
        return None
    return parse_efa_installed(ref.data.decode("utf-8", "replace"), "/" + ref.real_path, ref.layer)


def parse_efa_installed(text: str, path: str, layer: str | None = None) -> EfaInstaller:
    match = _INSTALLER_VERSION.search(text)
    packages = tuple(w for line in text.splitlines() if not line.lstrip().startswith("#") for w in line.split())
    return EfaInstaller(version=match.group(1) if match else None, path=path, layer=layer, packages=packages)


def efa_libfabric_version(installer: EfaInstaller | None) -> str | None:
    """The libfabric release the EFA installer put in /opt/amazon/efa, from its package name ('~' is Debian's)."""
    for name in installer.packages if installer else ():
        if (match := _EFA_LIBFABRIC.match(name)) is not None:
            return match.group(1).replace("~", "")
    return None


def extract_libfabric(
    view: FileView, packages: list[Package], loader: Loader, env: dict[str, str], installer: EfaInstaller | None = None
) -> Libfabric | None:
    paths = [p for p in view.paths(ANY_DIRS + r"libfabric\.so\.1(?:\.[0-9]+)*") if not in_python_package(p)]
    if not paths:
        return None
    copies, chosen = loader.copies("libfabric.so.1", paths)
    chosen = chosen or copies[0].path.lstrip("/")
    ref = view.file(chosen)
    if ref is None:
        return None
    data = ref.data or b""
    provider_dir = None
    version = origin = None
    if (match := _PROVIDER_DIR.search(data)) is not None:
        provider_dir = match.group(1).decode("utf-8", "replace")
    pkg = next((p for p in packages if p.name in FABRIC_PACKAGES), None)
    # the release version is a bare string somewhere in .rodata (not findable reliably): only a package says it
    # and only for a copy in the system directories packages install to (not /opt/amazon/efa's own build)
    system_dirs = set()
    for d in loader.default_dirs:
        try:
            system_dirs.add(view.resolve(d.lstrip("/")))
        except SymlinkLoop:
            pass
    if pkg is not None and posixpath.dirname(ref.real_path) in system_dirs:
        version, origin = pkg.version.split(":", 1)[-1].rsplit("-", 1)[0], pkg.db
    elif ref.real_path.startswith(EFA_PREFIX) and (efa_version := efa_libfabric_version(installer)):
        version, origin = efa_version, "efa_installer"
    if env.get("FI_PROVIDER_PATH", "").startswith(("/", "@/")):
        provider_dir = env["FI_PROVIDER_PATH"].lstrip("@").split(":")[0]
    needs_verbs: tuple[str, ...] = ()
    needs_efa: tuple[str, ...] = ()
    builtin: set[str] = set()
    defined: tuple[str, ...] = ()
    if data:
        try:
            info = read_elf(data)
            builtin = {_BUILTIN[n] for n in info.needed_libraries if n in _BUILTIN}
            needs_verbs = tuple(sorted(info.needed_versions.get("libibverbs.so.1", ())))
            needs_efa = tuple(sorted(info.needed_versions.get("libefa.so.1", ())))
            defined = tuple(v for v in info.defined_versions if v.startswith("FABRIC_"))
        except NotElf:
            pass
    dl: tuple[str, ...] = ()
    if provider_dir:
        dl = tuple(
            sorted(
                posixpath.basename(p)[3 : -len("-fi.so")]
                for p in view.paths(re.escape(provider_dir.lstrip("/")) + r"/lib[a-z0-9_]+-fi\.so")
            )
        )
    return Libfabric(
        version=version,
        path="/" + ref.real_path,
        layer=ref.layer,
        origin=origin,
        provider_dir=provider_dir,
        builtin_providers=tuple(sorted(builtin)),
        dl_providers=dl,
        needs_ibverbs=needs_verbs,
        needs_efa=needs_efa,
        copies=tuple(copies),
        symbol_versions=defined,
    )


def extract_net_plugins(
    view: FileView, loader: Loader, env: dict[str, str], python_sites: tuple[str, ...] | list[str] = ()
) -> list[NcclNetPlugin]:
    paths = [p for p in view.paths(ANY_DIRS + r"libnccl-net(?:-[^/]+)?\.so(?:\.[0-9]+)*")]
    if not paths:
        return []
    asked = [n.strip() for n in (env.get("NCCL_NET_PLUGIN") or "").split(",") if n.strip()]
    names = []
    for name in asked or [""]:
        if name.lower() == "none":
            continue  # NCCL_NET_PLUGIN=none: no external plugin
        if not name:
            names.append("libnccl-net.so")
            continue
        names.append(name)
        if "/" not in name and not (name.startswith("lib") and name.endswith(".so")):
            names.append(f"libnccl-net-{name}.so")
    hit = how = opened = None
    for name in names:
        if name.startswith("/"):
            ref = view.file(name.lstrip("/"))
            hit, how = (ref.real_path, f"NCCL_NET_PLUGIN={name}") if ref else (None, None)
            opened = name
        else:
            hit, how = loader.find(name)
            how = f"{name} by {how}" if hit else None
            opened = loader.locate(name)[1]
        if hit:
            break
    found: dict[str, NcclNetPlugin] = {}
    for path in paths:
        ref = view.file(path)
        if ref is None or ref.real_path in found:
            continue
        loaded = ref.real_path == hit
        project, release, needs = _plugin_identity(ref.data or b"")
        # $ORIGIN is the directory of the path the loader opened (NCCL's dlopen: the search directory), not
        # the symlink's target; a plugin NCCL does not load is taken as opened where it is listed
        where = opened if loaded and opened and _real(view, opened) == ref.real_path else "/" + path
        info = _elf(ref.data)
        needed = _resolve_needed(view, loader, info, posixpath.dirname(where), python_sites) if info else None
        found[ref.real_path] = NcclNetPlugin(
            path="/" + ref.real_path,
            name=posixpath.basename(path),
            layer=ref.layer,
            loaded=loaded,
            how=how
            if loaded
            else (
                "NCCL_NET_PLUGIN=none"
                if asked and all(a.lower() == "none" for a in asked)
                else "not what NCCL's dlopen resolves to"
            ),
            project=project,
            version=release,
            needs_libfabric=needs,
            rpath=info.rpath if info else (),
            runpath=info.runpath if info else (),
            needed=needed,
            needs_glibc=glibc_version_needed(info) if info else None,
            aws_platform=(_AWS_PLATFORM in ref.data) if ref.data and project == "aws-ofi-nccl" else None,
        )
    return sorted(found.values(), key=lambda p: (not p.loaded, p.path))


def _real(view: FileView, path: str) -> str | None:
    try:
        return view.resolve(path.lstrip("/"))
    except SymlinkLoop:
        return None


def _elf(data: bytes | None) -> ElfInfo | None:
    if not data:
        return None  # not kept (larger than the want's limit): its DT_NEEDED are unknown
    try:
        return read_elf(data)
    except NotElf:
        return None


# The driver's libraries are not in an image: the NVIDIA Container Toolkit mounts them into the container at run
# time (NVIDIA/libnvidia-container src/nvc_info.c utility_libs and compute_libs, the default capabilities).
_DRIVER_LIBS = re.compile(
    r"lib(?:cuda|cudadebugger|nvidia-(?:ml|cfg|opencl|gpucomp|ptxjitcompiler|fatbinaryloader|allocator|compiler|"
    r"pkcs11|pkcs11-openssl3|nvvm))\.so(?:\.[0-9]+)*"
)
_SITE_PREFIX = re.compile(r"(/.+)/lib(?:64)?/python[0-9][^/]*/(?:site|dist)-packages")


def _resolve_needed(
    view: FileView, loader: Loader, info: ElfInfo, origin: str, python_sites: tuple[str, ...] | list[str]
) -> tuple[NeededLibrary, ...]:
    """Each DT_NEEDED of a plugin, looked up as ld.so would for a dlopen from NCCL (direct needs only: the
    needs of those libraries are not read). Without a DT_RUNPATH of its own, the DT_RPATH of the objects that
    loaded it (libnccl, the executable) is searched too (glibc elf/dl-load.c _dl_map_object): those are not
    read, so a name present only in a Python prefix's lib directory (where an executable's RPATH would
    point) is unknown, not missing."""
    prefix_libs = sorted(
        {m.group(1) + "/lib" for s in python_sites if (m := _SITE_PREFIX.fullmatch("/" + s.strip("/")))}
    )
    out = []
    for name in info.needed_libraries:
        found, path, how = loader.locate(name, info.rpath, info.runpath, origin)
        if found is not True and _DRIVER_LIBS.fullmatch(name):
            # NCCL itself needs libcuda: where the driver is not mounted, NCCL fails before any plugin matters
            found, how = True, "a driver library the NVIDIA Container Toolkit mounts at run time (not in the image)"
        if found is False:
            # glibc reuses an object already loaded whose soname is the name (elf/dl-load.c _dl_map_object, before
            # any search): a copy off the search path that another library loaded first (torch loads its wheels'
            # libcudart through its RPATH) satisfies the need. Whether one was loaded first is not known statically.
            elsewhere = [p for p in view.paths(ANY_DIRS + re.escape(name)) if view.exists(p)]
            if elsewhere:
                found = None
                how = (
                    f"{how}; /{elsewhere[0]} is in the image off that path: the need is met if the process "
                    "loaded that copy before NCCL opened the plugin (not known statically)"
                )
        if found is False and not info.runpath:
            beside = [d for d in prefix_libs if view.exists(posixpath.join(d, name).lstrip("/"))]
            if beside:
                found = None
                how = (
                    f"{how}; {beside[0]}/{name} exists, which the loader searches if the executable that "
                    "loads NCCL has a DT_RPATH naming it (not read)"
                )
        out.append(NeededLibrary(name=name, found=found, path=path, how=how))
    return tuple(out)


# NCCL_OFI_INFO's text in aws-ofi-nccl's platform-aws.c (1.6.0 and later; src/platform-aws.cpp from 1.15.0), built only
# when WANT_PLATFORM_AWS (m4/ax_platform_aws.m4: --enable-platform-aws, or configure run on an EC2 instance)
_AWS_PLATFORM = b"Configuring AWS-specific options"


def _plugin_identity(data: bytes) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(project, release, FABRIC_x.y needs) of a plugin file; unknown parts None / empty."""
    project = release = None
    if (match := _PLUGIN_RELEASE.search(data)) is not None:
        project, release = match.group(1).decode(), match.group(2).decode()
    needs: tuple[str, ...] = ()
    if data:
        try:
            needs = tuple(sorted(read_elf(data).needed_versions.get("libfabric.so.1", ())))
        except NotElf:
            pass
    return project, release, needs
