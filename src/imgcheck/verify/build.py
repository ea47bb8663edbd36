"""Build (once, cached by source hash) or locate the verifier binary carried into the container.

Why a C program and not the image's Python: real RDMA images often have no Python at all (the
Debian rdma test images have none), and ctypes would add a second implementation to keep in step.
The binary links only libc.so.6 and libdl.so.2, binds dl* to their oldest symbol versions and has
its own _start, so it needs no glibc symbol newer than MAX_GLIBC and runs in images whose glibc is
older than the host's. That is checked on every build by reading the binary's .gnu.version_r.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..elf.reader import NotElf, read_elf
from ..errors import UnavailableError
from ..home import imgcheck_home

CSRC = Path(__file__).with_name("csrc")
SOURCES = ("verifier.c", "vf_verbs.h", "vf_cuda.h")
# glibc 2.17 (CentOS 7, aarch64's first) is old enough for any image with an rdma-core libibverbs.
MAX_GLIBC = (2, 17)
ALLOWED_NEEDED = {"libc.so.6", "libdl.so.2"}
CFLAGS = (
    "-O2",
    "-std=gnu11",
    "-Wall",
    "-fno-stack-protector",
    "-U_FORTIFY_SOURCE",
    "-D_FORTIFY_SOURCE=0",
    "-nostartfiles",
    "-fPIE",
    "-pie",
)
ENV_VERIFIER = "IMGCHECK_VERIFIER"  # a prebuilt verifier to use instead of building one


def _source_digest(compiler: str, libdl: str) -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        h.update(name.encode() + b"\0" + (CSRC / name).read_bytes())
    h.update(" ".join((compiler, libdl) + CFLAGS).encode())
    return h.hexdigest()[:16]


def _find_libdl(compiler: str) -> str:
    """libdl.so.2 as a DT_NEEDED: glibc < 2.34 has dlopen there, not in libc.so.6."""
    try:
        out = subprocess.run(
            [compiler, "-print-file-name=libdl.so.2"], capture_output=True, text=True, timeout=30, check=False
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise UnavailableError(f"cannot run {compiler}: {exc}") from None
    if not out or not os.path.isabs(out) or not os.path.exists(out):
        raise UnavailableError(f"{compiler} cannot find libdl.so.2 (apt-get install libc6-dev)")
    return out


def check_binary(path: str) -> None:
    """Raise UnavailableError unless `path` is an ELF needing only old glibc versions."""
    try:
        info = read_elf(Path(path).read_bytes())
    except (OSError, NotElf) as exc:
        raise UnavailableError(f"verifier {path}: not a readable ELF executable ({exc})") from None
    extra = set(info.needed_libraries) - ALLOWED_NEEDED
    if extra:
        raise UnavailableError(f"verifier {path} needs {', '.join(sorted(extra))}; images may not have it")
    for lib, versions in info.needed_versions.items():
        for version in versions:
            if not version.startswith("GLIBC_"):
                continue
            number = tuple(int(p) for p in version[6:].split(".") if p.isdigit())
            if number[:2] > MAX_GLIBC:
                raise UnavailableError(
                    f"verifier {path} needs {version} from {lib}; older images could not "
                    f"run it (at most GLIBC_{MAX_GLIBC[0]}.{MAX_GLIBC[1]} is allowed)"
                )


def cache_dir() -> str:
    return os.path.join(imgcheck_home(), "cache", "verifier")


def locate_verifier(compiler: str | None = None) -> str:
    """Path of a ready verifier binary: $IMGCHECK_VERIFIER, else a cached build, else build it now."""
    prebuilt = os.environ.get(ENV_VERIFIER)
    if prebuilt:
        if not os.path.isfile(prebuilt):
            raise UnavailableError(f"{ENV_VERIFIER}={prebuilt}: no such file")
        check_binary(prebuilt)
        return os.path.abspath(prebuilt)
    compiler = compiler or os.environ.get("CC") or "gcc"
    if shutil.which(compiler) is None:
        raise UnavailableError(
            f"building the verifier needs a C compiler ({compiler} not found: "
            f"apt-get install gcc libc6-dev), or set {ENV_VERIFIER} to a prebuilt one"
        )
    libdl = _find_libdl(compiler)
    directory = cache_dir()
    target = os.path.join(directory, f"imgcheck-verifier-{_source_digest(compiler, libdl)}")
    if os.path.isfile(target):
        return target
    return build(target, compiler, libdl)


def build(target: str, compiler: str = "gcc", libdl: str | None = None) -> str:
    """Compile the verifier to `target` (atomically) and check what it needs from glibc."""
    libdl = libdl or _find_libdl(compiler)
    directory = os.path.dirname(target) or "."
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".verifier-", dir=directory)
        os.close(fd)
    except OSError as exc:
        raise UnavailableError(f"cannot write the verifier under {directory}: {exc.strerror}") from None
    try:
        cmd = [compiler, *CFLAGS, "-I", str(CSRC), "-o", tmp, str(CSRC / "verifier.c"), "-Wl,--no-as-needed", libdl]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            raise UnavailableError(f"cannot run {compiler}: {exc}") from None
        if proc.returncode != 0:
            first = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            raise UnavailableError(f"building the verifier failed ({compiler} exit {proc.returncode}): {first}")
        check_binary(tmp)
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)
        return target
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
