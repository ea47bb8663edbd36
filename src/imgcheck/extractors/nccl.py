"""NCCL copies: system libnccl (the loader's choice marked), the libnccl2 package, pip wheels
(nvidia-nccl-cuXX on a site directory), torch's pinned requirement."""

from __future__ import annotations

import posixpath
import re
from typing import Any

from ..model.image import Nccl, Package
from ..view.fatbin import parse_build, parse_glibc, parse_result
from ..view.fileview import FileView, SymlinkLoop
from ..view.wants import Want
from .loader import Loader, in_python_package
from .python import PythonFacts, pinned

# every libnccl streams through the fat binary scan (view/fatbin.py): the SM architectures it has kernels for
# and its build line (view/build_string.py): the CUDA release it links statically
WANTS = (Want(r"(?:[^/]+/)*libnccl\.so(?:\.[0-9]+)*", scan="nccl"),)  # dist-info METADATA: python.WANTS
_LIB_VERSION = re.compile(r"libnccl\.so\.(2\.\d+\.\d+)$")
_NCCL_WHEEL = re.compile(r"nvidia-nccl-cu[0-9]+")
_WHEEL_CUDA = re.compile(r"nvidia-nccl-cu([0-9]+)")
_PACKAGE_CUDA = re.compile(r"\+cuda(\d+\.\d+)")  # NVIDIA's libnccl2 2.18.3-1+cuda12.1


def extract(
    view: FileView,
    packages: list[Package],
    python: PythonFacts | None = None,
    loader: Loader | None = None,
    machine: str | None = None,
) -> list[Nccl]:
    found: list[Nccl] = []
    libs = [p for p in view.paths(r"(?:[^/]+/)*libnccl\.so(?:\.[0-9]+)*") if not in_python_package(p)]
    chosen, how = loader.find("libnccl.so.2") if loader is not None else (None, None)
    seen_real: set[str] = set()
    for path in libs:
        try:
            ref_real = view.resolve(path)
        except SymlinkLoop:
            continue  # a looping link names no library
        if ref_real in seen_real:
            continue
        match = _LIB_VERSION.search(posixpath.basename(ref_real))
        if not match:
            continue  # the soname link; its target carries the version
        seen_real.add(ref_real)
        entry = view.entries.get(ref_real) or view.entries[path]
        loaded = None if loader is None else ref_real == chosen
        found.append(
            Nccl(
                version=match.group(1),
                path="/" + ref_real,
                layer=entry.layer,
                origin="library",
                loaded=loaded,
                how=how if loaded else (None if loader is None else "not the loader's choice for libnccl.so.2"),
                **_archs(view, path),
            )
        )
    # the loader's copy first: it is what nccl-tests and source-built frameworks get
    found.sort(key=lambda n: not n.loaded)
    for pkg in packages:
        if pkg.name in ("libnccl2", "libnccl") and not found:
            cuda = _PACKAGE_CUDA.search(pkg.version)
            found.append(
                Nccl(
                    version=pkg.version.split("-")[0],
                    path=pkg.path,
                    layer=pkg.layer,
                    origin=pkg.db,
                    cuda=cuda.group(1) if cuda else None,
                    cuda_from="package version" if cuda else None,
                )
            )
    dists = python.distributions if python else ()
    for dist in dists:
        if _NCCL_WHEEL.fullmatch(dist.name):
            found.append(
                Nccl(
                    version=dist.version,
                    path="/" + dist.path,
                    layer=dist.layer,
                    origin="pip",
                    how=f"wheel {dist.name} on /{dist.site}; torch loads it through its RPATH",
                    **_archs(view, f"{dist.site}/nvidia/nccl/lib/libnccl.so.2", _WHEEL_CUDA.fullmatch(dist.name)),
                )
            )
    # torch's pin is kept beside the installed wheel: the engine compares the two (NCCL-WHEEL-NOT-TORCH-PIN);
    # which copy a process loads is the knowledge module's choice (the wheel first)
    for dist in dists:
        if dist.name != "torch":
            continue
        for name, version, line in pinned(dist, _NCCL_WHEEL, machine):
            cuda = _WHEEL_CUDA.fullmatch(name)
            found.append(
                Nccl(
                    version=version,
                    path="/" + dist.path,
                    layer=dist.layer,
                    origin="torch-requirement",
                    how=f"torch {dist.version} Requires-Dist: {line}",
                    cuda=cuda.group(1) if cuda else None,
                    cuda_from="wheel name" if cuda else None,
                )
            )
            break
    return found


def _archs(view: FileView, path: str, wheel: re.Match[str] | None = None) -> dict[str, Any]:
    """sass_archs / ptx_archs / archs_from of the libnccl at `path`, when its fat binaries were read, and the CUDA
    release it was built against (cuda / cuda_from): its build line, else the major a wheel's name states."""
    ref = view.file(path)
    found: dict[str, Any] = {}
    if wheel is not None:
        found.update(cuda=wheel.group(1), cuda_from="wheel name")
    if ref is None:
        return found
    build = parse_build(ref.scan)
    if build is not None:
        found.update(cuda=build[1], cuda_from="library build string")
    glibc = parse_glibc(ref.scan)
    if glibc is not None:
        found.update(needs_glibc=glibc)
    archs = parse_result(ref.scan)
    if archs is not None:
        found.update(sass_archs=archs[0], ptx_archs=archs[1], archs_from="/" + ref.real_path)
    return found


def archs_unknown(found: list[Nccl]) -> dict[str, str]:
    """ImageFacts.unknown for the architectures of library and wheel copies whose fat binaries were not read."""
    missing = [n.path or "" for n in found if n.origin in ("library", "pip") and n.sass_archs is None]
    if not missing:
        return {}
    return {
        "nccl.sass_archs": "no fat binary was read from the libnccl of "
        + ", ".join(missing)
        + " (no library file, a sparse tar member, or no fat binary container in it)"
    }
