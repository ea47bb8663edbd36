"""How the image's UCX was built, read from its own files: thread support (configure --enable-mt).

Two places keep it. libucp: from UCX 1.11 ucp_worker_create compiles the diagnostic "multi-threaded worker is
requested, but library is built without multi-thread support" only into a build without ENABLE_MT
(openucx/ucx src/ucp/core/ucp_worker.c). ucx_info: its build configuration table is every #define of config.h by
name (src/tools/info/Makefile.am build_config.h), and from 1.6 configure defines ENABLE_MT only with --enable-mt.
Which of the two decides for a release is the engine's (catalog thresholds); here only what the files hold.
"""

from __future__ import annotations

import dataclasses
import posixpath

from ..model.image import Ucx
from ..view.fileview import FileView, SymlinkLoop
from ..view.wants import ANY_DIRS, Want

NO_MT_MESSAGE = b"multi-threaded worker is requested"
ENABLE_MT = b"ENABLE_MT\x00"  # the name as the table's string literal stores it
WANTS = (
    Want(ANY_DIRS + r"libucp\.so\.0\.[0-9.]+", content=True, max_bytes=16 * 1024 * 1024),
    Want(ANY_DIRS + r"bin/ucx_info", content=True, max_bytes=8 * 1024 * 1024),
)


def _read(view: FileView, path: str) -> tuple[bytes | None, str | None]:
    try:
        ref = view.file(path.lstrip("/"))
    except SymlinkLoop:
        return None, None
    if ref is None or ref.data is None:
        return None, None
    return ref.data, "/" + ref.real_path


def _libucp(ucx: Ucx) -> str | None:
    """The libucp of the copy the facts describe: the loader's choice, else the file the version came from, else
    the library directory of its ucx.pc (<prefix>/lib/pkgconfig/ucx.pc)."""
    loaded = next((c.path for c in ucx.copies if c.loaded), None)
    if loaded:
        return loaded
    if ucx.path and "libucp.so" in posixpath.basename(ucx.path):
        return ucx.path
    if ucx.path and ucx.path.endswith("/pkgconfig/ucx.pc"):
        return posixpath.join(posixpath.dirname(posixpath.dirname(ucx.path)), "libucp.so.0")
    return None


def annotate(view: FileView, ucx: Ucx | None) -> Ucx | None:
    if ucx is None:
        return None
    lib = _libucp(ucx)
    if lib is None:
        return ucx
    read_from: list[str] = []
    data, real = _read(view, lib)
    no_mt = None
    if data is not None and real is not None:
        no_mt = NO_MT_MESSAGE in data
        read_from.append(real)
    # ucx_info of the same prefix: <prefix>/lib/libucp.so.0 -> <prefix>/bin/ucx_info (/usr/lib/<triplet> -> /usr/bin)
    libdir = posixpath.dirname(real or lib)
    prefix = posixpath.dirname(libdir)
    candidates = [posixpath.join(prefix, "bin/ucx_info")]
    if posixpath.basename(prefix) == "lib":  # Debian's multiarch /usr/lib/x86_64-linux-gnu
        candidates.append(posixpath.join(posixpath.dirname(prefix), "bin/ucx_info"))
    info = None
    for candidate in candidates:
        data, real_info = _read(view, candidate)
        if data is not None and real_info is not None:
            info = ENABLE_MT in data
            read_from.append(real_info)
            break
    return dataclasses.replace(ucx, no_mt_message=no_mt, info_enable_mt=info, build_read_from=tuple(read_from))
