"""Where the container runtime puts the host's driver libraries in an image, and where CUDA's stub libcuda lives.

The NVIDIA container toolkit mounts the host's libcuda.so.1 into the image's library directory (libnvidia-container
src/nvc_container.c: the multiarch directory when the image has one, else /usr/lib64) and runs ldconfig, so the
driver's copy is found through ld.so.cache; nvidia-docker 1 mounted a volume at /usr/local/nvidia, which NVIDIA's
CUDA images still name on LD_LIBRARY_PATH. The toolkit's link-time stub is <cuda>/lib64/stubs/libcuda.so (soname
libcuda.so.1): it exists for linking and returns cudaErrorStubLibrary (34) when a process runs on it.

Pure path knowledge shared by the extractors and the engine; it sits outside knowledge/ so that `inspect` does not
load the matrix (knowledge/__init__ does; tests/test_inspect_imports.py).
"""

from __future__ import annotations

import posixpath

INJECT_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib/powerpc64le-linux-gnu",
    "/usr/lib64",
)
DRIVER_VOLUMES = ("/usr/local/nvidia/lib", "/usr/local/nvidia/lib64")
# The directories every distribution's ld.so.cache holds: the trusted directories ldconfig always adds (glibc
# elf/ldconfig.c add_system_dir: SLIBDIR, LIBDIR) and the multiarch ones Debian's ld.so.conf.d names
SYSTEM_LIBRARY_DIRS = (
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib/powerpc64le-linux-gnu",
    "/usr/lib/powerpc64le-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
    "/usr/local/lib",
)


def is_stub_dir(directory: str) -> bool:
    """A CUDA toolkit stub directory: <cuda>/lib64/stubs, <cuda>/targets/<triple>/lib/stubs, Debian's .../stubs."""
    return posixpath.basename(posixpath.normpath(directory)) == "stubs"


def holds_driver(directory: str) -> bool:
    """The runtime's driver library is in this directory (injected there, or nvidia-docker 1's volume)."""
    norm = posixpath.normpath(directory)
    return norm in INJECT_DIRS or norm in DRIVER_VOLUMES


def first_stub_dir(search_path: str) -> tuple[str | None, str | None]:
    """(the first stub directory of an LD_LIBRARY_PATH value, the driver directory named before it): the loader
    searches the entries in order (ld.so(8)); relative entries are the working directory's and are skipped."""
    for entry in search_path.split(":"):
        if not entry.startswith("/"):
            continue
        if holds_driver(entry):
            return None, entry
        if is_stub_dir(entry):
            return entry, None
    return None, None
