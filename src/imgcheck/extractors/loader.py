"""Which copy of a shared library the image's dynamic loader would pick, read from the image's own files.

glibc's ld.so looks for a soname (no slash) in this order (ld.so(8), https://man7.org/linux/man-pages/man8/ld.so.8.html;
bminor/glibc elf/dl-load.c _dl_map_object): the loading object's DT_RPATH (only when it has no DT_RUNPATH),
LD_LIBRARY_PATH, the loading object's DT_RUNPATH, /etc/ld.so.cache, then the default directories.
The directories of ld.so.conf(.d) reach the loader only through ld.so.cache (ldconfig writes them
there), so a library added after the last ldconfig run in those directories is not found.
The cache is parsed here from its bytes (glibc sysdeps/generic/dl-cache.h, format "glibc-ld.so.cache1.1").
"""

from __future__ import annotations

import posixpath
import re
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .. import driver_dirs
from ..model.image import LibraryCopy
from ..view.fileview import FileView, SymlinkLoop
from ..view.wants import ANY_DIRS, Want

LD_SO_CACHE = "etc/ld.so.cache"
WANTS = (
    Want(r"etc/ld\.so\.cache", content=True, max_bytes=32 * 1024 * 1024),
    Want(r"etc/ld\.so\.conf", content=True, max_bytes=64 * 1024),
    Want(r"etc/ld\.so\.conf\.d/[^/]+", content=True, max_bytes=64 * 1024),
    Want(ANY_DIRS + r"stubs/libcuda\.so(?:\.[0-9]+)*"),  # the CUDA toolkit's link-time stub (stub_libcuda)
)

_OLD_MAGIC = b"ld.so-1.7.0"
_NEW_MAGIC = b"glibc-ld.so.cache1.1"
_NEW_HEADER = 48  # magic(17) version(3) nlibs len_strings flags pad[3] extension_offset unused[3]
_NEW_ENTRY = 24  # int32 flags, uint32 key, uint32 value, uint32 osversion, uint64 hwcap
_OLD_ENTRY = 12  # int32 flags, uint32 key, uint32 value
_FLAG_TYPE_MASK, _FLAG_ELF_LIBC6, _FLAG_REQUIRED_MASK = 0x00FF, 0x0003, 0xFF00
# the machine bits ldconfig stores with each entry (glibc elf/cache.c / ldconfig.h)
_MACHINE_FLAGS = {"x86_64": 0x0300, "aarch64": 0x0A00, "ppc64le": 0x0500, "s390x": 0x0400}
# multiarch triplets (Debian/Ubuntu) and the lib64 of RPM distributions, before the plain dirs
_TRIPLETS = {
    "x86_64": "x86_64-linux-gnu",
    "aarch64": "aarch64-linux-gnu",
    "ppc64le": "powerpc64le-linux-gnu",
    "s390x": "s390x-linux-gnu",
}


class CacheError(ValueError):
    pass


@dataclass(frozen=True)
class CacheEntry:
    soname: str
    path: str  # absolute, as ldconfig wrote it
    flags: int


def _cstring(data: bytes, offset: int) -> str:
    if not 0 <= offset < len(data):
        raise CacheError("string offset out of range")
    end = data.find(b"\0", offset)
    if end < 0:
        raise CacheError("unterminated string")
    return data[offset:end].decode("utf-8", "replace")


def parse_ld_so_cache(data: bytes) -> list[CacheEntry]:
    """Entries of an ld.so.cache in file order (ldconfig sorts them: the loader takes the first match).

    The new format either stands alone or follows an old-format table (glibc 2.2-2.31 wrote both);
    string offsets of the new format count from the new header. Raises CacheError.
    """
    base = 0
    if data.startswith(_OLD_MAGIC):
        if len(data) < 16:
            raise CacheError("truncated old-format header")
        (nlibs,) = struct.unpack_from("<I", data, 12)
        end = 16 + nlibs * _OLD_ENTRY
        if nlibs > 1_000_000 or end > len(data):
            raise CacheError("old-format table out of range")
        base = (end + 7) & ~7  # the new header is aligned after the old table
        if not data.startswith(_NEW_MAGIC, base):
            # old format only: offsets count from the end of the table
            entries = []
            for i in range(nlibs):
                flags, key, value = struct.unpack_from("<iII", data, 16 + i * _OLD_ENTRY)
                entries.append(CacheEntry(_cstring(data, end + key), _cstring(data, end + value), flags))
            return entries
    if not data.startswith(_NEW_MAGIC, base):
        raise CacheError("not an ld.so.cache (no glibc-ld.so.cache1.1 magic)")
    if len(data) < base + _NEW_HEADER:
        raise CacheError("truncated header")
    (nlibs,) = struct.unpack_from("<I", data, base + 20)
    if nlibs > 1_000_000 or base + _NEW_HEADER + nlibs * _NEW_ENTRY > len(data):
        raise CacheError("entry table out of range")
    new = data[base:]
    entries = []
    for i in range(nlibs):
        flags, key, value = struct.unpack_from("<iII", new, _NEW_HEADER + i * _NEW_ENTRY)
        entries.append(CacheEntry(_cstring(new, key), _cstring(new, value), flags))
    return entries


def _machine(platform: str | None) -> str:
    arch = (platform or "linux/amd64").split("/")[1] if "/" in (platform or "") else "amd64"
    return {"amd64": "x86_64", "arm64": "aarch64", "ppc64le": "ppc64le", "s390x": "s390x"}.get(arch, arch)


class Loader:
    """The image's dynamic-loader search path for one machine, and its choice among copies."""

    def __init__(self, view: FileView, env: dict[str, str], platform: str | None = None):
        self.view = view
        self.machine = _machine(platform)
        self.notes: list[str] = []
        self.ld_library_path = [d for d in (env.get("LD_LIBRARY_PATH") or "").split(":") if d.startswith("/")]
        self.cache: list[CacheEntry] | None = None
        self.cache_unreadable: str | None = None  # why the image's ld.so.cache could not be read
        ref = view.file(LD_SO_CACHE)
        if ref is not None and ref.data is None:
            self.cache_unreadable = f"/{LD_SO_CACHE} was not read (larger than the limit)"
        if ref is not None and ref.data is not None:
            try:
                want = _MACHINE_FLAGS.get(self.machine)
                self.cache = [
                    e
                    for e in parse_ld_so_cache(ref.data)
                    if (e.flags & _FLAG_TYPE_MASK) == _FLAG_ELF_LIBC6
                    and (want is None or (e.flags & _FLAG_REQUIRED_MASK) == want)
                ]
            except CacheError as exc:
                self.cache_unreadable = f"/{LD_SO_CACHE} is unreadable ({exc})"
                self.notes.append(
                    f"/{LD_SO_CACHE}: unreadable ({exc}); the loader's choice follows the default directories"
                )
        triplet = _TRIPLETS.get(self.machine)
        self.default_dirs = ([f"/lib/{triplet}", f"/usr/lib/{triplet}"] if triplet else []) + [
            "/lib64",
            "/usr/lib64",
            "/lib",
            "/usr/lib",
        ]

    def _real(self, path: str) -> str | None:
        """The regular file a path names in the image (symlinks followed in-root), or None."""
        ref = self.view.file(path.lstrip("/"))
        return ref.real_path if ref is not None else None

    def find(
        self, soname: str, rpath: tuple[str, ...] = (), runpath: tuple[str, ...] = (), origin: str | None = None
    ) -> tuple[str | None, str | None]:
        """(real path without leading slash, how) of the file a soname resolves to, or (None, why not)."""

        def expand(dirs: Iterable[str]) -> list[str]:
            return [d.replace("$ORIGIN", origin or "").replace("${ORIGIN}", origin or "") for d in dirs]

        steps = []
        if rpath and not runpath:
            steps += [(d, "RPATH") for d in expand(rpath)]
        steps += [(d, "LD_LIBRARY_PATH") for d in self.ld_library_path]
        steps += [(d, "RUNPATH") for d in expand(runpath)]
        for directory, how in steps:
            real = self._real(posixpath.join(directory, soname))
            if real:
                return real, f"{how} {directory}"
        if self.cache is not None:
            for entry in self.cache:
                if entry.soname == soname:
                    real = self._real(entry.path)
                    if real:
                        return real, f"/{LD_SO_CACHE} ({entry.path})"
        for directory in self.default_dirs:
            real = self._real(posixpath.join(directory, soname))
            if real:
                return real, f"default directory {directory}"
        return None, f"{soname} is not on the loader's search path"

    def locate(
        self, soname: str, rpath: tuple[str, ...] = (), runpath: tuple[str, ...] = (), origin: str | None = None
    ) -> tuple[bool | None, str | None, str]:
        """(found, path as the loader opens it, how) for a DT_NEEDED name, whether or not any want keeps the file.

        Existence comes from the layer indexes (every non-directory path is hashed), so this answers for
        any library. found is None when the facts cannot tell: the cache was unreadable, or $ORIGIN
        could not be expanded. The path is the directory joined with the name, not the symlink's target:
        it is what the object's own $ORIGIN expands to (glibc does not resolve symlinks for it).
        """
        if "/" in soname:  # a DT_NEEDED with a slash is opened as a path, relative ones from the cwd
            if not soname.startswith("/"):
                return None, None, f"{soname} is a relative path: opened from the process's working directory"
            found = self.view.exists(soname.lstrip("/"))
            return found, soname if found else None, "path named in DT_NEEDED" if found else f"{soname} does not exist"

        unexpanded = False

        def expand(dirs: tuple[str, ...]) -> list[str]:
            nonlocal unexpanded
            out = []
            for d in dirs:
                if "$" in d:
                    if origin is None or any(t in d for t in ("$LIB", "${LIB}", "$PLATFORM", "${PLATFORM}")):
                        unexpanded = True
                        continue
                    d = d.replace("${ORIGIN}", origin).replace("$ORIGIN", origin)
                if d.startswith("/"):
                    out.append(posixpath.normpath(d))
            return out

        steps: list[tuple[str, str]] = []
        if rpath and not runpath:
            steps += [(d, "RPATH") for d in expand(rpath)]
        steps += [(d, "LD_LIBRARY_PATH") for d in self.ld_library_path]
        steps += [(d, "RUNPATH") for d in expand(runpath)]
        for directory, how in steps:
            path = posixpath.join(directory, soname)
            if self.view.exists(path.lstrip("/")):
                return True, path, f"{how} {directory}"
        if self.cache is not None:
            for entry in self.cache:
                if entry.soname == soname and self.view.exists(entry.path.lstrip("/")):
                    return True, entry.path, f"/{LD_SO_CACHE}"
        for directory in self.default_dirs:
            path = posixpath.join(directory, soname)
            if self.view.exists(path.lstrip("/")):
                return True, path, f"default directory {directory}"
        searched = [d for d, _ in steps] + ([f"/{LD_SO_CACHE}"] if self.cache is not None else []) + self.default_dirs
        if self.cache_unreadable:
            return None, None, f"not in {', '.join(searched)}; {self.cache_unreadable}"
        if unexpanded:
            return None, None, f"not in {', '.join(searched)}; a search directory with an unexpanded token remains"
        return False, None, f"not in {', '.join(searched)}"

    def copies(
        self,
        soname: str,
        paths: list[str],
        version_of: Callable[[str], str | None] | None = None,
        **search: Any,  # find()'s rpath, runpath, origin
    ) -> tuple[list[LibraryCopy], str | None]:
        """Every distinct file among `paths` (kept paths of the library), the loader's choice marked first."""
        chosen, how = self.find(soname, **search)
        seen: dict[str, LibraryCopy] = {}
        for path in paths:
            try:
                real = self.view.resolve(path)
            except SymlinkLoop:
                continue
            entry = self.view.entries.get(real)
            if entry is None or real in seen:
                continue
            loaded = real == chosen
            seen[real] = LibraryCopy(
                path="/" + real,
                version=version_of(real) if version_of else None,
                layer=entry.layer,
                loaded=loaded,
                how=how if loaded else _why_not(real, soname),
            )
        ordered = sorted(seen.values(), key=lambda c: (not c.loaded, c.path))
        return ordered, chosen


def in_python_package(path: str) -> bool:
    """Inside a site directory: a wheel's copy, loaded through its modules' RPATH, not the search path."""
    return "/site-packages/" in "/" + path or "/dist-packages/" in "/" + path


def _why_not(real: str, soname: str) -> str:
    if in_python_package(real):
        return "inside a Python package: loaded only through its modules' RPATH"
    if "/pkgs/" in "/" + real:
        return "in conda's package cache, not an environment"
    return f"not the loader's choice for {soname}"


@dataclass(frozen=True)
class StubChoice:
    """Whether a process's dlopen("libcuda.so.1") (the CUDA runtime's, NCCL's, torch's) gets the toolkit's stub."""

    path: str | None  # the stub libcuda file the image ships (stubs/libcuda.so), None: none
    on_path: bool | None  # True: found before the driver library the container runtime injects; None: cannot tell
    how: str


def _conf_dirs(view: FileView) -> list[tuple[str, str]]:
    """(directory, the file naming it) of /etc/ld.so.conf and its include of ld.so.conf.d/*.conf, in ldconfig's
    order: ld.so.conf's lines in turn, an include's glob in name order (glibc elf/ldconfig.c parse_conf)."""
    found: list[tuple[str, str]] = []

    def lines(path: str) -> list[str]:
        ref = view.file(path)
        text = ref.data.decode("utf-8", "replace") if ref is not None and ref.data is not None else ""
        return [line.split("#", 1)[0].strip() for line in text.splitlines()]

    for line in lines("etc/ld.so.conf"):
        if line.startswith("include"):
            pattern = line.split(None, 1)[1].strip() if " " in line or "\t" in line else ""
            if pattern.startswith("/etc/ld.so.conf.d/"):
                for conf in sorted(view.paths(r"etc/ld\.so\.conf\.d/[^/]+\.conf")):
                    found += [(d, "/" + conf) for d in lines(conf) if d.startswith("/")]
        elif line.startswith("/"):
            found.append((line, "/etc/ld.so.conf"))
    return found


def stub_libcuda(view: FileView, loader: Loader, env: dict[str, str] | None = None) -> StubChoice:
    """Where the toolkit's stub libcuda stands on the image's loader path against the driver's libcuda.so.1.

    The stub (libcuda.so, soname libcuda.so.1) exists for linking; at run time the driver's libcuda.so.1 must win.
    LD_LIBRARY_PATH is searched before ld.so.cache, where the container toolkit's ldconfig puts the injected driver:
    a stub directory holding libcuda.so.1 on LD_LIBRARY_PATH wins unless an earlier entry holds the driver's
    (CUDA then fails with cudaErrorStubLibrary, 34). ldconfig makes the libcuda.so.1 link from the stub's soname in
    every directory ld.so.conf(.d) names, so a stub directory there ranks against the driver's directory by
    ldconfig's order, which is only read here, not decided.
    """
    stubs = sorted(p for p in view.paths(ANY_DIRS + r"stubs/libcuda\.so(?:\.[0-9]+)*") if "/pkgs/" not in "/" + p)
    if not stubs:
        return StubChoice(None, False, "the image ships no stub libcuda")
    stub = "/" + stubs[0]
    for path in re.split(r"[\s:]+", (env or {}).get("LD_PRELOAD") or ""):
        # an object LD_PRELOAD names is loaded before any search and satisfies libcuda.so.1 (ld.so(8))
        name, directory = posixpath.basename(path), posixpath.dirname(path)
        if name.startswith("libcuda.so") and driver_dirs.is_stub_dir(directory) and view.exists(path.lstrip("/")):
            return StubChoice(path, True, f"LD_PRELOAD {path}")
    for directory in loader.ld_library_path:
        norm = posixpath.normpath(directory)
        if driver_dirs.holds_driver(norm):
            return StubChoice(stub, False, f"LD_LIBRARY_PATH names {directory}, where the driver library is, first")
        if driver_dirs.is_stub_dir(norm):
            if view.exists(posixpath.join(norm, "libcuda.so.1").lstrip("/")):
                return StubChoice(posixpath.join(norm, "libcuda.so.1"), True, f"LD_LIBRARY_PATH {directory}")
    for directory, conf in _conf_dirs(view):
        norm = posixpath.normpath(directory)
        if norm in driver_dirs.INJECT_DIRS:
            break  # the driver's directory comes first in ldconfig's order
        if driver_dirs.is_stub_dir(norm) and view.exists(posixpath.join(norm, "libcuda.so").lstrip("/")):
            return StubChoice(
                posixpath.join(norm, "libcuda.so"),
                None,
                f"{conf} names {directory}: ldconfig links its libcuda.so.1 to the stub, and whether it ranks "
                "before the driver's directory in ld.so.cache is not decided from the files",
            )
    return StubChoice(stub, False, "no stub directory is on LD_LIBRARY_PATH or in /etc/ld.so.conf(.d)")
