"""CUDA: the toolkit (version.json/txt), the runtimes (libcudart from wheels, packages and files),
forward-compat driver libraries, and NVIDIA_REQUIRE_CUDA.

A PyPI-torch image has no toolkit: its CUDA is the nvidia-cuda-runtime-cuNN wheel (CUDA 13:
nvidia-cuda-runtime) torch loads through its RPATH; a distro image has Debian's libcudart12 or
NVIDIA's cuda-cudart-X-Y. Each runtime says where its version was read: wheel METADATA, package
record, the library's file name (libcudart.so.12.4.127), or only the major from the ELF soname.
The runtime's major is the CUDA level it asks of the driver under minor-version compatibility.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from .. import safejson
from ..elf.reader import NotElf, read_elf
from ..model.image import Cuda, CudaRuntime, Package
from ..versions.ecosystems import numeric_tuple
from ..view.fileview import FileView, SymlinkLoop
from ..view.wants import ANY_DIRS, Want
from .loader import Loader, in_python_package, stub_libcuda
from .python import PythonFacts

_CUDART = ANY_DIRS + r"libcudart(?:-[0-9a-f]{8})?\.so(?:\.[0-9]+)*"  # torch's bundled copy carries a hash
WANTS = (
    Want(r"usr/local/cuda[^/]*/version\.(?:json|txt)", content=True, max_bytes=1024 * 1024),
    Want(r"usr/local/cuda[^/]*/compat/libcuda\.so(?:\.[0-9]+)*"),
    Want(_CUDART, content=True, max_bytes=8 * 1024 * 1024),
)
_COMPAT = re.compile(r"libcuda\.so\.(\d+\.\d+(?:\.\d+)*)$")
_TXT = re.compile(r"CUDA Version\s+(\d+(?:\.\d+)+)")
_WHEEL = re.compile(r"nvidia-cuda-runtime(?:-cu(?P<major>[0-9]{1,9}))?")
_FILE_VERSION = re.compile(r"libcudart(?:-[0-9a-f]{8})?\.so\.(\d+(?:\.\d+)*)$")
_SONAME = re.compile(r"libcudart(?:-[0-9a-f]{8})?\.so\.(\d+)")
_PACKAGE = re.compile(r"libcudart[0-9.]+|cuda-cudart-[0-9]+-[0-9]+")
_TORCH_LOCAL = re.compile(r"\+cu(\d+)(\d)$")  # torch 2.5.1+cu121: built for CUDA 12.1 (download.pytorch.org)


def _toolkit(view: FileView) -> tuple[str | None, str | None, str | None, str | None]:
    for path in ["usr/local/cuda/version.json"] + view.paths(r"usr/local/cuda[^/]*/version\.json"):
        ref = view.file(path)
        if ref is None or ref.data is None:
            continue
        try:
            # depth-bounded: a layer's file, of any shape (a wrong one raises and is skipped)
            doc: Any = safejson.loads(ref.data, "version.json", ValueError)
            version = doc["cuda"]["version"]
        except (ValueError, KeyError, TypeError):
            continue
        if isinstance(version, str):
            return version, "/" + ref.real_path, ref.layer, "version.json"
    for path in ["usr/local/cuda/version.txt"] + view.paths(r"usr/local/cuda[^/]*/version\.txt"):
        ref = view.file(path)
        if ref is None or ref.data is None:
            continue
        match = _TXT.search(ref.data.decode("utf-8", "replace"))
        if match:
            return match.group(1), "/" + ref.real_path, ref.layer, "version.txt"
    return None, None, None, None


def cuda_major_of_soname(soname: str | None) -> int | None:
    """libcudart.so.12 -> 12, libcudart.so.11.0 -> 11 (the soname of every CUDA 11.x runtime)."""
    match = _SONAME.match(soname or "")
    return int(match.group(1)) if match else None


def _file_version(name: str, soname: str | None) -> tuple[str | None, str]:
    """The version a libcudart file's name states, and how it was read.

    A soname is not a version: every CUDA 11.x runtime is libcudart.so.11.0 (the nvidia-cuda-runtime-cu11 wheel
    ships only that file, whatever its 11.8.89), CUDA 12 on is libcudart.so.12. Only a longer name
    (libcudart.so.11.8.89) is the release. Before CUDA 11 the soname carried the minor (libcudart.so.10.1 is
    CUDA 10.1), so there the soname-named file states major.minor.
    """
    match = _FILE_VERSION.search(name)
    nums = match.group(1).split(".") if match else []
    soname_form = bool(match) and (name == soname or (soname is None and len(nums) <= 2))
    if match and not soname_form and len(nums) >= 2:
        return match.group(1), "library file name"
    smatch = _SONAME.fullmatch(soname or "") or _SONAME.match(soname or "") or (match and _SONAME.match(name))
    if not smatch:
        return None, "library"
    major = smatch.group(1)
    # CUDA 11 made the soname major-only in meaning (libcudart.so.11.0 for every 11.x)
    if int(major) < 11 and len(nums) == 2 and soname_form:
        return ".".join(nums), "soname"
    return major, "soname"


def _library_runtimes(view: FileView, loader: Loader | None) -> list[CudaRuntime]:
    found = []
    seen: set[str] = set()
    chosen = {}
    for path in view.paths(_CUDART):
        try:
            real = view.resolve(path)
        except SymlinkLoop:
            continue
        if real in seen:
            continue
        ref = view.file(real)
        if ref is None:
            continue  # a link whose target was not kept
        seen.add(real)
        soname = None
        if ref.data is not None:
            try:
                soname = read_elf(ref.data).soname
            except NotElf:
                pass
        version, origin = _file_version(posixpath.basename(real), soname)
        major = (soname or posixpath.basename(real)).split(".so.")[-1].split(".")[0]
        if loader is not None and major.isdigit() and major not in chosen:
            chosen[major] = loader.find(f"libcudart.so.{major}")
        hit, how = chosen.get(major, (None, None))
        loaded = None if loader is None else real == hit
        if loaded is False:
            how = (
                "inside a Python package: loaded through its modules' RPATH"
                if in_python_package(real)
                else f"not the loader's choice for libcudart.so.{major}"
            )
        found.append(
            CudaRuntime(
                version=version,
                origin=origin,
                path="/" + real,
                layer=ref.layer,
                soname=soname,
                library="/" + real,
                loaded=loaded,
                how=how,
            )
        )
    return found


def runtimes(
    view: FileView, packages: list[Package], python: PythonFacts | None, loader: Loader | None
) -> list[CudaRuntime]:
    libs = _library_runtimes(view, loader)
    found: list[CudaRuntime] = []
    for dist in python.distributions if python else ():
        match = _WHEEL.fullmatch(dist.name)
        if match:
            nums = numeric_tuple(dist.version)
            named = match.group("major")
            # nvidia-cuda-runtime-cu13 0.0.1 is a placeholder: a version whose major is not the name's is no CUDA
            if not nums or (named and nums[0] != int(named)) or (not named and nums[0] < 13):
                continue
            lib = next(
                (
                    l
                    for l in libs
                    if (l.path or "").startswith("/" + dist.site + "/nvidia/")
                    and cuda_major_of_soname(l.soname) == nums[0]
                ),
                None,
            )
            found.append(
                CudaRuntime(
                    version=dist.version,
                    origin=f"pip {dist.name}",
                    path="/" + dist.path,
                    layer=dist.layer,
                    soname=lib.soname if lib else None,
                    library=lib.path if lib else None,
                    loaded=False if lib else None,
                    how="wheel on /" + dist.site + "; torch and CuPy load it through their RPATH",
                )
            )
        elif dist.name == "torch" and (local := _TORCH_LOCAL.search(dist.version)):
            found.append(
                CudaRuntime(
                    version=f"{local.group(1)}.{local.group(2)}",
                    origin="torch local version",
                    path="/" + dist.path,
                    layer=dist.layer,
                    how=f"torch {dist.version} is built for CUDA {local.group(1)}.{local.group(2)}",
                )
            )
    for pkg in packages:
        if _PACKAGE.fullmatch(pkg.name):
            # libcudart12 12.4.127~12.4.1-2 (Debian), cuda-cudart-12-4 12.4.127-1 (NVIDIA's repository)
            upstream = pkg.version.split(":", 1)[-1].split("~")[0].rsplit("-", 1)[0]
            lib = next((l for l in libs if l.loaded), None)
            found.append(
                CudaRuntime(
                    version=upstream,
                    origin=f"{pkg.db} {pkg.name}",
                    path=pkg.path,
                    layer=pkg.layer,
                    soname=lib.soname if lib else None,
                    library=lib.path if lib else None,
                    loaded=lib.loaded if lib else None,
                    how=lib.how if lib else None,
                )
            )
    return found + libs


def _best(runs: list[CudaRuntime]) -> CudaRuntime | None:
    """The runtime that asks the most of the driver: the highest version, a full version over a major."""
    dated = [r for r in runs if r.version and numeric_tuple(r.version)]
    if not dated:
        return None
    return max(
        dated,
        key=lambda r: (
            numeric_tuple(r.version or "")[0],
            len(numeric_tuple(r.version or "")) > 1,
            numeric_tuple(r.version or ""),
        ),
    )


def extract(
    view: FileView,
    env: dict[str, str],
    packages: list[Package] | None = None,
    python: PythonFacts | None = None,
    loader: Loader | None = None,
) -> Cuda | None:
    version, path, layer, origin = _toolkit(view)
    if version is None and env.get("CUDA_VERSION"):
        version, origin = env["CUDA_VERSION"], "env CUDA_VERSION"
    runs = runtimes(view, packages or [], python, loader)
    best = _best(runs)
    if version is None and best is not None:
        version, path, layer, origin = best.version, best.path, best.layer, best.origin
    compat_driver = compat_path = None
    for candidate in view.paths(r"usr/local/cuda[^/]*/compat/libcuda\.so(?:\.[0-9]+)*"):
        match = _COMPAT.search(posixpath.basename(candidate))
        if match and "." in match.group(1):
            compat_driver, compat_path = match.group(1), "/" + candidate
            break
    require = env.get("NVIDIA_REQUIRE_CUDA")
    if version is None and compat_driver is None and require is None and not runs:
        return None
    on_path, on_path_how = compat_on_loader_path(view, loader, compat_path) if compat_path else (None, None)
    stub = stub_libcuda(view, loader, env) if loader is not None else None
    return Cuda(
        version=version,
        path=path,
        layer=layer,
        origin=origin,
        compat_driver=compat_driver,
        compat_path=compat_path,
        require_cuda=require,
        runtime=tuple(runs),
        compat_on_path=on_path,
        compat_path_how=on_path_how,
        stub_path=stub.path if stub else None,
        stub_on_path=stub.on_path if stub else None,
        stub_path_how=stub.how if stub else None,
    )


_LD_SO_CONF = (r"etc/ld\.so\.conf", r"etc/ld\.so\.conf\.d/[^/]+")  # kept with content by loader.WANTS


def compat_on_loader_path(view: FileView, loader: Loader | None, compat_path: str) -> tuple[bool | None, str]:
    """Whether the image itself puts the compat directory on the dynamic loader's path, and where.

    The NVIDIA container toolkit adds the compat libcuda only when it is newer than the host driver; an image
    that names the directory in LD_LIBRARY_PATH or ld.so.conf(.d) (so ldconfig puts it in ld.so.cache) loads
    it on every node, an older libcuda on a newer driver included (CUDA error 803).
    """
    if loader is None:
        return None, "the image's loader path was not read"

    def real(directory: str) -> str | None:
        try:
            return view.resolve(directory.strip("/"))
        except SymlinkLoop:
            return None

    compat_dir = real(posixpath.dirname(compat_path))
    indirect: list[str] = []

    def names_compat(directory: str, where: str) -> bool:
        """The directory is compat/ itself. One whose libcuda.so.1 only links there (NGC images' compat/lib,
        which their entrypoint adjusts to the driver at start) is noted: then whether it loads is unknown."""
        if real(directory) == compat_dir:
            return True
        libcuda = real(posixpath.join(directory, "libcuda.so.1"))
        if libcuda is not None and posixpath.dirname(libcuda) == compat_dir:
            indirect.append(where)
        return False

    for directory in loader.ld_library_path:
        if names_compat(directory, f"LD_LIBRARY_PATH {directory}"):
            return True, f"LD_LIBRARY_PATH {directory}"
    for pattern in _LD_SO_CONF:
        for conf in view.paths(pattern):
            ref = view.file(conf)
            text = ref.data.decode("utf-8", "replace") if ref is not None and ref.data is not None else ""
            for line in text.splitlines():
                directory = line.split("#", 1)[0].strip()
                if directory.startswith("/") and names_compat(directory, f"/{conf}"):
                    return True, f"/{conf}"
    for entry in loader.cache or ():
        if entry.soname == "libcuda.so.1" and names_compat(posixpath.dirname(entry.path), "/etc/ld.so.cache"):
            return True, f"/etc/ld.so.cache ({entry.path})"
    if indirect:
        return None, f"{indirect[0]} reaches the compat libcuda through links an entrypoint may change at start"
    if loader.cache_unreadable:
        return None, loader.cache_unreadable
    return False, "not on LD_LIBRARY_PATH, /etc/ld.so.conf(.d) or /etc/ld.so.cache: only the container runtime adds it"
