"""Squashfs images of the real Debian rdma rootfs, made with Debian's mksquashfs, and SIFs of them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # sifwriter

ROOTFS_CACHE = os.environ.get("IMGCHECK_ROOTFS_CACHE", "/var/cache/imgcheck-rootfs")

# How each suite is squashed: one compressor per suite keeps the run short while covering
# Enroot's default (`-comp lzo -noD`: uncompressed data, LZO metadata), gzip and zstd.
# lzo1x_1 writes the same LZO1X stream as mksquashfs' default lzo1x_999, many times faster.
SQUASH_OPTIONS = {
    "bookworm": ("lzo", ["-comp", "lzo", "-Xalgorithm", "lzo1x_1", "-noD"]),
    "bullseye": ("gzip", ["-comp", "gzip", "-Xcompression-level", "1"]),
    "trixie": ("zstd", ["-comp", "zstd", "-Xcompression-level", "1"]),
}


def need_mksquashfs() -> str:
    tool = shutil.which("mksquashfs") or ("/usr/bin/mksquashfs" if os.path.exists("/usr/bin/mksquashfs") else None)
    if tool is None:
        pytest.skip("mksquashfs is not installed (apt-get install squashfs-tools)")
    return tool


def mksquashfs_tar(tar_path: str, out: str, options: list[str]) -> str:
    """Squash a tar (mksquashfs >= 4.5 reads one from stdin with -tar), atomically."""
    tool = need_mksquashfs()
    tmp = out + f".tmp{os.getpid()}"
    with open(tar_path, "rb") as tar:
        subprocess.run(
            [tool, "-", tmp, "-tar", "-noappend", "-quiet", "-no-progress", "-processors", "2", *options],
            stdin=tar,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    os.replace(tmp, out)
    return out


def mksquashfs_dir(src: str, out: str, options: list[str]) -> str:
    tool = need_mksquashfs()
    subprocess.run(
        [tool, src, out, "-noappend", "-quiet", "-no-progress", "-processors", "2", *options],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return out


@pytest.fixture(scope="session")
def debian_sqsh(rootfs):
    """debian_sqsh(suite) -> path of a cached .sqsh of that suite's real rootfs."""

    def make(suite: str) -> str:
        tar = rootfs(suite)
        comp, options = SQUASH_OPTIONS[suite]
        st = os.stat(tar)
        # named after the tar it came from, so a rebuilt rootfs never meets a stale squashfs
        out = os.path.join(ROOTFS_CACHE, f"{suite}-{comp}-{st.st_size}-{int(st.st_mtime)}.sqsh")
        if not os.path.exists(out):
            mksquashfs_tar(tar, out, options)
        return out

    return make
