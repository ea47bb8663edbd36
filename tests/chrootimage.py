"""Image layers made the way users make them: the image's own tools (python3 -m venv, its pip, dpkg)
run in a chroot of a real Debian rootfs, and the files they changed become the next layer.

Needs root (chroot); skips otherwise. Only the tests run anything from a rootfs, never imgcheck.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile

import pytest


class Rootfs:
    def __init__(self, base_tar: str, directory: str):
        if os.geteuid() != 0 or shutil.which("chroot") is None:
            pytest.skip("building layers with the image's own pip needs root and chroot")
        self.root = directory
        os.makedirs(directory, exist_ok=True)
        subprocess.run(["tar", "-xf", base_tar, "-C", directory], check=True)
        self._before = self._snapshot()

    def _snapshot(self) -> dict[str, tuple]:
        seen = {}
        for top, dirs, files in os.walk(self.root):
            for name in dirs + files:
                path = os.path.join(top, name)
                st = os.lstat(path)
                seen[os.path.relpath(path, self.root)] = (st.st_mtime_ns, st.st_size, st.st_mode)
        return seen

    def copy_in(self, src: str, dest_dir: str = "/wheels") -> str:
        target = os.path.join(self.root, dest_dir.lstrip("/"))
        os.makedirs(target, exist_ok=True)
        shutil.copy(src, target)
        return os.path.join(dest_dir, os.path.basename(src))

    def run(self, command: str) -> None:
        result = subprocess.run(
            ["chroot", self.root, "/bin/sh", "-c", command],
            capture_output=True,
            text=True,
            env={
                "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "HOME": "/root",
                "LANG": "C.UTF-8",
            },
        )
        if result.returncode != 0:
            raise AssertionError(f"{command!r} failed in the chroot: {result.stderr[-2000:]}")

    def layer(self, path: str, exclude: tuple[str, ...] = ("wheels", "debs")) -> str:
        """A layer tar of everything added or changed since the last layer (or the base)."""
        after = self._snapshot()
        changed = sorted(
            p
            for p, v in after.items()
            if self._before.get(p) != v and not any(p == e or p.startswith(e + "/") for e in exclude)
        )
        with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
            for rel in changed:
                tar.add(os.path.join(self.root, rel), arcname=rel, recursive=False)
        self._before = after
        return path

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def cached_layers(cache_root: str, inputs: list[str], names: list[str], build) -> dict[str, str]:
    """Layer tars built once per set of inputs (base tar, wheels, debs, commands), then reused.

    `build(directory)` writes `<name>.tar` for every name into `directory`. The key hashes each input
    file's name, size and mtime and each input string, so a new wheel or command builds anew.
    """
    import hashlib

    h = hashlib.sha256()
    for item in inputs:
        if os.path.exists(item):
            st = os.stat(item)
            h.update(f"{os.path.basename(item)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        else:
            h.update(item.encode() + b"\n")
    directory = os.path.join(cache_root, "layers", h.hexdigest()[:16])
    paths = {n: os.path.join(directory, n + ".tar") for n in names}
    if not all(os.path.exists(p) for p in paths.values()):
        from cachefill import private_dir, publish_dir

        tmp = private_dir(directory)
        try:
            build(tmp)
            publish_dir(tmp, directory)  # never delete an entry another run may be reading
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return paths
