"""libfabric (OFI) and NCCL's network plugins (aws-ofi-nccl for EFA, nccl-rdma-sharp-plugins, ...).

libfabric: the copy the loader picks for libfabric.so.1; its release version only from its package
(the file's `.so.1.20.0` suffix is libtool's interface number, not the release: Debian's 1.17.0 ships 1.20.0);
its provider dir (the FI_PROVIDER_PATH default string compiled in, e.g. /usr/lib/x86_64-linux-gnu/libfabric,
or the Env's FI_PROVIDER_PATH) and the providers linked in (EFA when it links libefa.so.1).
NCCL plugins: NCCL dlopens NCCL_NET_PLUGIN as given and then libnccl-net-<name>.so, or libnccl-net.so
by default (NVIDIA/nccl@v2.30.7-1:src/plugin/plugin_open.cc openPluginLib), through the loader's search path.
"""

from __future__ import annotations

import posixpath
import re

from ..elf.reader import NotElf, read_elf
from ..model.image import Libfabric, NcclNetPlugin, Package
from ..view.fileview import FileView, SymlinkLoop
from ..view.wants import ANY_DIRS, Want
from .loader import Loader, in_python_package

WANTS = (
    Want(ANY_DIRS + r"libfabric\.so\.1(?:\.[0-9]+)*", content=True, max_bytes=32 * 1024 * 1024),
    Want(ANY_DIRS + r"libfabric/lib[a-z0-9_]+-fi\.so"),
    Want(ANY_DIRS + r"libnccl-net(?:-[^/]+)?\.so(?:\.[0-9]+)*"),
)
FABRIC_PACKAGES = ("libfabric1", "libfabric", "libfabric-aws")
_PROVIDER_DIR = re.compile(rb"\(default: (/[^)\x00]{1,512}/libfabric)\)")
_BUILTIN = {"libefa.so.1": "efa", "libpsm2.so.2": "psm2", "libpsm_infinipath.so.1": "psm", "libibverbs.so.1": "verbs",
            "librdmacm.so.1": "verbs"}


def extract_libfabric(view: FileView, packages: list[Package], loader: Loader,
                      env: dict[str, str]) -> Libfabric | None:
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
    if env.get("FI_PROVIDER_PATH", "").startswith(("/", "@/")):
        provider_dir = env["FI_PROVIDER_PATH"].lstrip("@").split(":")[0]
    needs_verbs: tuple[str, ...] = ()
    needs_efa: tuple[str, ...] = ()
    builtin: set[str] = set()
    if data:
        try:
            info = read_elf(data)
            builtin = {_BUILTIN[n] for n in info.needed_libraries if n in _BUILTIN}
            needs_verbs = tuple(sorted(info.needed_versions.get("libibverbs.so.1", ())))
            needs_efa = tuple(sorted(info.needed_versions.get("libefa.so.1", ())))
        except NotElf:
            pass
    dl = ()
    if provider_dir:
        dl = tuple(sorted(posixpath.basename(p)[3:-len("-fi.so")]
                          for p in view.paths(re.escape(provider_dir.lstrip("/")) + r"/lib[a-z0-9_]+-fi\.so")))
    return Libfabric(version=version, path="/" + ref.real_path, layer=ref.layer, origin=origin,
                     provider_dir=provider_dir, builtin_providers=tuple(sorted(builtin)), dl_providers=dl,
                     needs_ibverbs=needs_verbs, needs_efa=needs_efa, copies=tuple(copies))


def extract_net_plugins(view: FileView, loader: Loader, env: dict[str, str]) -> list[NcclNetPlugin]:
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
    hit = how = None
    for name in names:
        if name.startswith("/"):
            ref = view.file(name.lstrip("/"))
            hit, how = (ref.real_path, f"NCCL_NET_PLUGIN={name}") if ref else (None, None)
        else:
            hit, how = loader.find(name)
            how = f"{name} by {how}" if hit else None
        if hit:
            break
    found: dict[str, NcclNetPlugin] = {}
    for path in paths:
        ref = view.file(path)
        if ref is None or ref.real_path in found:
            continue
        loaded = ref.real_path == hit
        found[ref.real_path] = NcclNetPlugin(
            path="/" + ref.real_path, name=posixpath.basename(path), layer=ref.layer, loaded=loaded,
            how=how if loaded else ("NCCL_NET_PLUGIN=none" if asked and all(a.lower() == "none" for a in asked)
                                    else "not what NCCL's dlopen resolves to"))
    return sorted(found.values(), key=lambda p: (not p.loaded, p.path))
